import csrfProtection from '@fastify/csrf-protection'
import type { FastifyInstance, FastifyReply, preHandlerHookHandler } from 'fastify'
import { hasLiveSession } from './member.js'

export const CSRF_FIELD = '_csrf'
export const CSRF_ERROR_CODES: ReadonlySet<string> = new Set(['FST_CSRF_MISSING_SECRET', 'FST_CSRF_INVALID_TOKEN'])

/**
 * CSRF tokens for the login and logout forms, with the secret in the visitor's session, so that a
 * token is worthless in another session. A host that registered @fastify/csrf-protection keeps its own.
 */
export async function registerCsrf (section: FastifyInstance): Promise<{ verify: preHandlerHookHandler, own: boolean }> {
  const own = !section.hasReplyDecorator('generateCsrf')
  if (own) await section.register(csrfProtection, { sessionPlugin: '@fastify/session', sessionKey: CSRF_FIELD })
  return { verify: section.csrfProtection, own }
}

/** A fresh token for a form, or undefined where the request has no usable session. */
export function csrfTokenFor (reply: FastifyReply): string | undefined {
  return hasLiveSession(reply.request) ? reply.generateCsrf() : undefined
}

/**
 * A fresh token for `secret`, where the request has no session object (the member fast path read the
 * secret from the store). Only with our own registration of @fastify/csrf-protection, whose
 * generateCsrf reads the secret from `request.session` and, when there is one, writes nothing.
 */
export function csrfTokenForSecret (reply: FastifyReply, secret: string): string {
  const request = reply.request as unknown as { session: unknown }
  const session = request.session
  request.session = { [CSRF_FIELD]: secret }
  try {
    return reply.generateCsrf()
  } finally {
    request.session = session
  }
}

/**
 * The member fast path's tokens: one per CSRF secret (that is, per session), made on its first fast
 * page view and reused on the next ones. A fresh token is an OpenSSL hash, which cost about 10 µs of a
 * 50 µs page view in the bench (far more than the hash alone: its code and tables are cold between
 * requests). A reused token is still tied to its session and dies with it (sign-out destroys the
 * secret), as with the synchronizer-token pattern; @fastify/csrf salts each token against BREACH,
 * which needs attacker-chosen text in the same compressed response, and a category page echoes only
 * the filter values its category offers. At most `maxEntries` secrets are remembered, the oldest
 * forgotten first; a forgotten one just gets a fresh token.
 */
export function sessionTokens (maxEntries = 10_000): (reply: FastifyReply, secret: string) => string {
  const tokens = new Map<string, string>()
  return function sessionToken (reply, secret) {
    let token = tokens.get(secret)
    if (token === undefined) {
      token = csrfTokenForSecret(reply, secret)
      if (tokens.size >= maxEntries) tokens.delete(tokens.keys().next().value!)
      tokens.set(secret, token)
    }
    return token
  }
}
