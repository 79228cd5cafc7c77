import csrfProtection from '@fastify/csrf-protection'
import type { FastifyInstance, FastifyReply, preHandlerHookHandler } from 'fastify'
import { hasLiveSession } from './member.js'

/** Where @fastify/csrf-protection keeps its secret in the session. */
const CSRF_SESSION_KEY = '_csrf'
export const CSRF_ERROR_CODES: ReadonlySet<string> = new Set(['FST_CSRF_MISSING_SECRET', 'FST_CSRF_INVALID_TOKEN'])

/**
 * CSRF tokens for the login and logout forms, with the secret in the visitor's session, so that a
 * token is worthless in another session. A host that registered @fastify/csrf-protection keeps its own.
 * Resolves to the hook that checks a form's token.
 */
export async function registerCsrf (section: FastifyInstance): Promise<preHandlerHookHandler> {
  if (!section.hasReplyDecorator('generateCsrf')) {
    await section.register(csrfProtection, { sessionPlugin: '@fastify/session', sessionKey: CSRF_SESSION_KEY })
  }
  return section.csrfProtection
}

/** A fresh token for a form, or undefined where the request has no usable session. */
export function csrfTokenFor (reply: FastifyReply): string | undefined {
  return hasLiveSession(reply.request) ? reply.generateCsrf() : undefined
}
