import type { SessionHandle } from '../session/session-adapter.js'

// Sign-in policy: what of the visitor's session a member keeps under the new session id.

// @fastify/csrf-protection's default key, where a host's own registration of it keeps its secret in the session.
const CSRF_DEFAULT_SESSION_KEY = '_csrf'

/**
 * What a session keeps through sign-in: everything the host stored (a language choice, a basket), as
 * Django's login() keeps it, but not the CSRF secret (renewed with the session id) nor `sessionKey`
 * (set again).
 */
export function keptAtSignIn (session: SessionHandle, sessionKey: string): string[] {
  return session.keys().filter((key) => key !== CSRF_DEFAULT_SESSION_KEY && key !== sessionKey)
}
