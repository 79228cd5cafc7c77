import csrfProtection from '@fastify/csrf-protection'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify'
import { isHttpsBase } from '../redirect/site-origin.js'
import type { SessionAdapter } from './session-adapter.js'

/** The cookie that carries the CSRF secret, on an http site (no https `baseUrl`). */
const CSRF_COOKIE = '_csrf'
/**
 * The same on an https site: the `__Host-` prefix makes browsers refuse it unless it is Secure, has Path=/
 * and no Domain, so a sibling subdomain or a plain-http page cannot plant a secret of its own.
 */
const HOST_CSRF_COOKIE = '__Host-_csrf'

/** The attributes of the CSRF cookie, as @fastify/cookie takes them. */
interface CsrfCookieOptions {
  path: '/'
  domain: undefined
  sameSite: 'strict'
  httpOnly: true
  secure: true | 'auto'
  signed: boolean
}

/** The CSRF cookie's name and attributes for a site whose address is `baseUrl`. */
function csrfCookie (baseUrl: string | undefined): { name: string, options: CsrfCookieOptions } {
  const https = isHttpsBase(baseUrl)
  return {
    name: https ? HOST_CSRF_COOKIE : CSRF_COOKIE,
    // domain: undefined overrides a Domain in the host's @fastify/cookie parseOptions: host-only, as
    // `__Host-` requires (a browser drops such a cookie with a Domain), on http too.
    options: { path: '/', domain: undefined, sameSite: 'strict', httpOnly: true, secure: https ? true : 'auto', signed: false }
  }
}

export const CSRF_ERROR_CODES: ReadonlySet<string> = new Set(['FST_CSRF_MISSING_SECRET', 'FST_CSRF_INVALID_TOKEN'])

/**
 * CSRF tokens for the login and logout forms, with the secret in a cookie of its own (as Django does), not
 * in the session: a visitor who only opens the login form leaves nothing in the session store, and the
 * session starts at sign-in. The cookie is httpOnly, SameSite=Strict and host-only, Secure on https, and
 * on an https `baseUrl` always Secure and named `__Host-_csrf`; signed when the host gave @fastify/cookie a
 * secret. A token is worthless without the cookie it was made for. A host that registered
 * @fastify/csrf-protection keeps its own. Resolves to the hook that checks a form's token, and, when the
 * cookie is ours, how to drop it (sign-in does, so that the next page makes a new secret).
 */
export async function registerCsrf (section: FastifyInstance, baseUrl: string | undefined): Promise<{ verify: preHandlerHookHandler, dropCookie: ((reply: FastifyReply) => void) | undefined }> {
  if (section.hasReplyDecorator('generateCsrf')) return { verify: section.csrfProtection, dropCookie: undefined }
  const { name, options } = csrfCookie(baseUrl)
  const signed = section.hasReplyDecorator('unsignCookie')
  await section.register(csrfProtection, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: name,
    cookieOpts: { ...options, signed }
  })
  return {
    verify: section.csrfProtection,
    // With the attributes it was set with: a browser ignores a deletion of a `__Host-` cookie without Secure.
    dropCookie: (reply) => { reply.clearCookie(name, options) }
  }
}

// The token each reply's forms share (see csrfTokenFor).
const formTokens = new WeakMap<FastifyReply, string>()

/**
 * A fresh token for a form, or undefined where the request has no usable session, or where no token can
 * be made: on a host's members-only route, outside the section's context (which keeps its CSRF plugin to
 * itself), unless the host registered @fastify/csrf-protection where that route lives.
 */
export function csrfTokenFor (reply: FastifyReply, session: SessionAdapter | undefined): string | undefined {
  if (session?.of(reply.request) === undefined || !reply.server.hasReplyDecorator('generateCsrf')) return undefined
  // One token per reply: without a CSRF cookie each generateCsrf() draws a new secret and sets the cookie
  // again, so a page with two forms (the login page of a member just signed in) would send a cookie that
  // only the last token matches. A new one per page, with a fresh salt: pages quote what a person typed
  // (the login form, a category's filters), and a token repeated beside such text is what BREACH reads
  // out of compressed answers.
  let token = formTokens.get(reply)
  if (token === undefined) {
    token = reply.generateCsrf()
    formTokens.set(reply, token)
  }
  return token
}

// A sign-out form is a token and a return address; a larger body is not one.
const MAX_FORM_BYTES = 16 * 1024

/** The form (urlencoded or JSON) of a request nobody has read yet, or undefined for another body or one too large. */
async function unreadForm (raw: IncomingMessage): Promise<unknown> {
  const type = String(raw.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded' && type !== 'application/json') return undefined
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of raw as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_FORM_BYTES) return undefined
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  return type === 'application/json' ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text))
}

/**
 * Whether the request's CSRF token is good, by the very check the form's preHandler runs (`verify`),
 * where that preHandler never ran: the store failed in @fastify/session's onRequest hook, so the body was
 * not parsed either (it is read here, a small urlencoded form at most; a header token needs no body). The
 * secret is in the CSRF cookie, so no store is needed. A failed check resolves to false, never throws.
 */
export async function csrfTokenValid (verify: preHandlerHookHandler, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  try {
    if (request.body === undefined && !request.raw.readableEnded) request.body = await unreadForm(request.raw)
  } catch {
    return false
  }
  return new Promise((resolve) => {
    // The check answers a failure with reply.send(error); here that only resolves false. Everything else
    // (unsignCookie for a signed CSRF cookie) is the real reply's.
    const probe: FastifyReply = Object.create(reply, { send: { value: () => resolve(false) } })
    verify.call(request.server, request, probe, () => resolve(true))
  })
}
