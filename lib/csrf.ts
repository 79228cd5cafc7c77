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
