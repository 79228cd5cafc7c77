import csrfProtection from '@fastify/csrf-protection'
import type { FastifyInstance, FastifyReply, preHandlerHookHandler } from 'fastify'
import { hasLiveSession } from './member.js'

/** Where @fastify/csrf-protection keeps its secret in the session. */
export const CSRF_SESSION_KEY = '_csrf'
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

/**
 * What a session keeps through sign-in: everything the host stored (a language choice, a basket), as
 * Django's login() keeps it, but not the CSRF secret (renewed with the session id) nor `sessionKey`
 * (set again). @fastify/session keeps its data as the session's own enumerable fields; `cookie` is its own.
 */
export function keptAtSignIn (session: object, sessionKey: string): string[] {
  return Object.keys(session).filter((key) => key !== 'cookie' && key !== CSRF_SESSION_KEY && key !== sessionKey)
}

/** A fresh token for a form, or undefined where the request has no usable session. */
export function csrfTokenFor (reply: FastifyReply): string | undefined {
  return hasLiveSession(reply.request) ? reply.generateCsrf() : undefined
}
