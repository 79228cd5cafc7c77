import escapeHtml from 'escape-html'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { errorCodes } from '../errors.js'
import { isStoreUnavailable } from '../errors.js'
import { isJsonClient } from './negotiation.js'
import { applyOwnHeaders, type ApplySecurityHeaders } from './security-headers.js'
import { storeErrorHandler } from './unavailable.js'
import { answerLanguageOf } from './answer-language.js'
import { sayLanguage } from './page-renderer.js'

const { FST_SR_INTERNAL_ERROR } = errorCodes
const { code: INTERNAL } = new FST_SR_INTERNAL_ERROR()

// What a page that failed half-way may have set for the answer it meant to give: none of it fits a 500.
const DROPPED_HEADERS = ['content-disposition', 'content-range', 'accept-ranges', 'etag', 'last-modified', 'location']

// When the section's own headers cannot be made (a CSP function that throws is often the very error
// answered here), the page still goes out under a policy that lets it do nothing.
const FALLBACK_HEADERS = {
  'content-security-policy': "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer'
}

/** What an error handler is handed: an error, most of the time, but a host can throw anything. */
type Thrown = Partial<FastifyError> | null | undefined

/**
 * Whether the section answers `error` as a server error: anything that is not a 4xx (no status, a 5xx,
 * a status that is no error at all, a thrown value that is no Error), as Fastify does.
 */
function isServerError (error: unknown): boolean {
  const status = (error as Thrown)?.statusCode ?? (error as { status?: unknown } | null | undefined)?.status
  return !(Number.isInteger(status) && (status as number) >= 400 && (status as number) < 500)
}

/** The code a client may see: one of the section's own, else FST_SR_INTERNAL_ERROR (a host's code may say too much). */
function publicCode (error: unknown): string {
  const code = (error as Thrown)?.code
  return typeof code === 'string' && Object.hasOwn(errorCodes, code) ? code : INTERNAL
}

/**
 * The `error` line every 500 of the section gets, once for its request and with its request id, even when
 * the host mistake behind it is said (with the fix) only once per app: the address cut to 1000 characters.
 */
export function logServerError (request: FastifyRequest, code: string, fields: object = {}): void {
  request.log.error({ ...fields, code }, `fastify-schools-resources: answered 500 (${code}) to ${request.method} ${request.url.slice(0, 1000)}`)
}

/**
 * The section's 500: a short page of its own (never through the host's layout, which may be what failed)
 * or, for a JSON client, `{ statusCode: 500, code, error, message }`, both with a generic message. The
 * error itself goes only to the log, at `error`, once for this request, with its request id (the address cut
 * to 1000 characters, as the conflict log cuts its fields). No cache keeps it; the section's security
 * headers are set again, as the error may have come before them.
 */
function sendServerError (error: unknown, request: FastifyRequest, reply: FastifyReply, headers: ApplySecurityHeaders | undefined): FastifyReply {
  const code = publicCode(error)
  logServerError(request, code, { err: error })
  for (const name of DROPPED_HEADERS) reply.removeHeader(name)
  // Unless the host's @fastify/helmet covers the route (its onRequest hook already set its own).
  try {
    applyOwnHeaders(headers, request, reply)
  } catch {
    reply.headers(FALLBACK_HEADERS)
  }
  // A fixed locale, else the one Accept-Language asks for; never the host's locale function: it may be what failed.
  const { locale, dir, t, negotiated } = answerLanguageOf(request).errorPage(request)
  reply.code(500).header('cache-control', 'no-store').header('vary', 'Accept')
  sayLanguage(reply, locale, negotiated)
  if (isJsonClient(request)) return reply.send({ statusCode: 500, code, error: 'Internal Server Error', message: t('serverError.message') })
  const title = escapeHtml(t('serverError.title'))
  return reply.type('text/html; charset=utf-8').send(`<!doctype html><html lang="${locale}" dir="${dir}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>` +
    `<body><main><h1>${title}</h1><p>${escapeHtml(t('serverError.message'))}</p><p>${escapeHtml(t('serverError.code', { code }))}</p></main></body></html>`)
}

/**
 * What the section does with an error on its own routes (and with its guard's errors on a host's
 * members-only route): a store outage gets the 503, any other server error the 500 of
 * {@link sendServerError}; a 4xx (the section's own, with their safe messages, or Fastify's) is thrown on
 * to the host's error handler, as before.
 */
export function sectionErrorHandler (headers: ApplySecurityHeaders | undefined) {
  return function schoolsResourcesErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply | Promise<FastifyReply> {
    // Its 503, or for a sign-out with its form's token, the 503 that still signs this browser out.
    if (isStoreUnavailable(error)) return storeErrorHandler(error, request, reply)
    if (!isServerError(error)) throw error
    return sendServerError(error, request, reply, headers)
  }
}
