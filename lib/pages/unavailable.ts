import type { OutgoingHttpHeaders } from 'node:http'
import escapeHtml from 'escape-html'
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { OutageSignOut } from '../types.js'
import { kOutageSignOut } from '../symbols.js'
import { isStoreUnavailable } from '../errors.js'
import { csrfTokenValid } from '../session/csrf.js'
import { wantsJson } from './negotiation.js'
import { eventBase, storeUnavailable } from '../events.js'
import { IntervalLog } from '../interval-log.js'
import type { MessageKey } from '../i18n/locales/en.js'
import { answerLanguageOf } from './answer-language.js'
import { sayLanguage } from './page-renderer.js'

/** Seconds a client is told to wait before trying again while a store is unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 5

/** What a 503 says: the store is down; this browser was signed out; or it was, but the member's other devices were not. */
type OutageAnswer = 'unavailable' | 'signed-out' | 'others-kept'

// Each answer's title and message in the catalogue.
const WORDS = {
  unavailable: ['unavailable.title', 'unavailable.message'],
  'signed-out': ['unavailable.signedOut.title', 'unavailable.signedOut.message'],
  'others-kept': ['unavailable.othersKept.title', 'unavailable.othersKept.message']
} as const satisfies Record<OutageAnswer, readonly [MessageKey, MessageKey]>

/** While the store stays down, one summary line per this many milliseconds (the Retry-After period). */
export const OUTAGE_SUMMARY_MS = STORE_RETRY_AFTER_SECONDS * 1000

// One per app logger, so that two apps in one process keep their own.
const outageLogs = new WeakMap<FastifyBaseLogger, IntervalLog>()

/**
 * The log of one app's store outage: the first 503 in full (and its event), then one line per interval
 * with the count and the latest reason, rather than a line per request (lib/interval-log.ts).
 */
function logOutage (request: FastifyRequest, error: FastifyError | Error): void {
  const log = request.server.log
  let outage = outageLogs.get(log)
  if (outage === undefined) {
    outage = new IntervalLog(OUTAGE_SUMMARY_MS, (count, latest) => {
      log.warn({ code: 'FST_SR_STORE_UNAVAILABLE', count },
        `store unavailable: ${count} more requests answered 503 in the last ${OUTAGE_SUMMARY_MS / 1000} s; the latest: ${latest}`)
    })
    outageLogs.set(log, outage)
  }
  const code = (error as FastifyError).code
  const reason = error.message.slice(0, 1000)
  if (!outage.record(reason)) return
  request.log.warn({ code, reason }, 'store unavailable: answering 503')
  // Once per outage, as the log line: the app's, so no section.
  if (storeUnavailable.hasSubscribers) storeUnavailable.publish({ ...eventBase(request, undefined), code: code ?? error.constructor.name })
}

/**
 * Answers a request that needs the store while it is unavailable: 503 with Retry-After and a short
 * message, never a stack, never a page as if signed in, no Set-Cookie (the visitor keeps their cookie,
 * so they are still signed in once the store is back), except the one that expires the session cookie
 * of a sign-out (`expireCookie`, see {@link storeErrorHandler}).
 *
 * The answer is written directly (`reply.hijack()`), so no onSend hook runs for it: @fastify/session's
 * onSend would try the failed store again to save a modified session, and a second failure would reach
 * Fastify's fallback handler with the internal message. onResponse hooks still run, and the headers
 * already set on the reply (security headers) are kept. The connection is closed after the answer.
 */
function sendStoreUnavailable (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply, expireCookie?: string | string[], answer: OutageAnswer = expireCookie === undefined ? 'unavailable' : 'signed-out'): FastifyReply {
  logOutage(request, error)
  const json = wantsJson(request)
  const signedOut = expireCookie !== undefined
  // A fixed locale, else the one Accept-Language asks for; never the host's locale function, which may need the store.
  const { locale, dir, t, negotiated } = answerLanguageOf(request).errorPage(request)
  const [title, message] = WORDS[answer].map((key) => t(key))
  const body = json
    ? JSON.stringify({ statusCode: 503, code: 'FST_SR_STORE_UNAVAILABLE', error: 'Service Unavailable', message, ...(signedOut ? { signedOut } : {}), ...(answer === 'others-kept' ? { signedOutEverywhere: false } : {}) })
    : `<!doctype html><html lang="${locale}" dir="${dir}"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
      `<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body></html>`
  sayLanguage(reply, locale, negotiated)
  const headers: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && name !== 'location' && name !== 'set-cookie') headers[name] = value
  }
  if (signedOut) headers['set-cookie'] = typeof expireCookie === 'string' ? expiredCookie(request, expireCookie) : expireCookie.map((name) => expiredCookie(request, name))
  reply.hijack()
  reply.raw.writeHead(503, {
    ...headers,
    'retry-after': String(STORE_RETRY_AFTER_SECONDS),
    'cache-control': 'no-store',
    'content-type': json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    // onSend hooks that would close a keep-alive connection (a server shutting down) do not run here;
    // a client told to retry later loses nothing by opening a new connection.
    connection: 'close'
  })
  reply.raw.end(request.method === 'HEAD' ? undefined : body)
  return reply
}

/**
 * The logout form's "Sign out on all devices" when the store of the counts is down: this browser's session
 * has ended and its cookies (the session's, the remembered device's) are expired here (the answer skips
 * onSend, where they would be cleared), and the page says the member's other devices are still signed in.
 */
export function sendOthersNotSignedOut (error: Error, request: FastifyRequest, reply: FastifyReply, signOut: OutageSignOut): FastifyReply {
  return sendStoreUnavailable(error, request, reply, signOutCookies(signOut, request), 'others-kept')
}

/**
 * The cookies a sign-out answered by a 503 expires itself: the session's, and the remember cookie too (a
 * token kept in this browser would sign the member in again once the store is back).
 */
function signOutCookies (signOut: OutageSignOut, request: FastifyRequest): string | string[] {
  return signOut.rememberCookie === undefined ? signOut.cookieName : [signOut.cookieName, signOut.rememberCookie(request)]
}

/**
 * An error handler that answers store failures with {@link sendStoreUnavailable} and passes every other
 * error on to the enclosing handler. The plugin installs it around its own routes; a host can install it
 * for its routes too.
 */
export function storeErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply | Promise<FastifyReply> {
  if (!isStoreUnavailable(error)) throw error
  const signOut = request.routeOptions.config[kOutageSignOut]
  if (signOut === undefined) return sendStoreUnavailable(error, request, reply)
  return signOutDuringOutage(signOut, error, request, reply)
}

/**
 * A sign-out the store cannot take (its 503 comes from @fastify/session's own hook, before the route):
 * with a good CSRF token, the answer still expires the session cookie, so this browser is signed out
 * (on a shared classroom computer, at once); the session stays in the store until it expires or the
 * member signs out again, which the page says. Without a good token, the plain 503: a page elsewhere
 * cannot sign a visitor out.
 */
async function signOutDuringOutage (signOut: OutageSignOut, error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const valid = await csrfTokenValid(signOut.verifyCsrf, request, reply)
  return sendStoreUnavailable(error, request, reply, valid ? signOutCookies(signOut, request) : undefined)
}

/** The Set-Cookie that expires the session cookie (@fastify/session's default path, `/`). */
function expiredCookie (request: FastifyRequest, name: string): string {
  const secure = request.protocol === 'https' || /^__(Host|Secure)-/.test(name)
  return request.server.serializeCookie(name, '', { path: '/', expires: new Date(0), maxAge: 0, httpOnly: true, sameSite: 'lax', secure })
}
