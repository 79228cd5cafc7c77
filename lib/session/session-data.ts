import type { SessionHandle } from './session-adapter.js'

// Sign-in policy: what of the visitor's session a member keeps under the new session id.

// @fastify/csrf-protection's default key, where a host's own registration of it keeps its secret in the session.
const CSRF_DEFAULT_SESSION_KEY = '_csrf'

/**
 * What a session keeps through sign-in: everything the host stored (a language choice, a basket), as
 * Django's login() keeps it, but not the CSRF secret (renewed with the session id) nor `sessionKey`
 * (set again), nor the provider an OpenID sign-in came through.
 */
export function keptAtSignIn (session: SessionHandle, sessionKey: string): string[] {
  const provider = providerKey(sessionKey)
  return session.keys().filter((key) => key !== CSRF_DEFAULT_SESSION_KEY && key !== sessionKey && key !== provider)
}

/** Where an OpenID sign-in notes its provider's id beside the member, for the provider's sign-out (set again at each sign-in). */
export function providerKey (sessionKey: string): string {
  return `${sessionKey}.provider`
}
