import type { Member } from '../types.js'
import type { SessionHandle } from '../session/session-adapter.js'

// Sign-in policy: what of the visitor's session a member keeps under the new session id. One function, so
// that every way in (the section's form, a sign-in with the school's account) keeps the same.

// @fastify/csrf-protection's default key, where a host's own registration of it keeps its secret in the session.
export const CSRF_DEFAULT_SESSION_KEY = '_csrf'

/**
 * The `keepSessionData` option: `true` keeps whatever the host stored but the CSRF secret under `_csrf`
 * and the section's own key; a list keeps only the keys named; `false` keeps nothing.
 */
export type KeepSessionData = boolean | readonly string[]

/**
 * Whether the session's value under `sessionKey` belongs to someone other than `member`: a different
 * member id, or something there that has none. Only the id counts, so that sessions holding only an id
 * compare the same way. Their data is theirs, so nothing of it is kept, as Django's login() flushes it.
 */
function heldByAnother (held: unknown, member: Member): boolean {
  if (held === undefined || held === null) return false
  return typeof held !== 'object' || (held as { id?: unknown }).id !== member.id
}

/**
 * The keys a session keeps through `member`'s sign-in (the rest is dropped with the old session id): with
 * `true`, everything the host stored (a language choice, a basket), as Django's login() keeps it, but not
 * the CSRF secret (renewed with the session id) nor `sessionKey` (set again); with a list, those of its
 * keys the session holds; nothing with `false`, or when the session was another member's.
 */
export function keptAtSignIn (session: SessionHandle, member: Member, settings: { sessionKey: string, keepSessionData: KeepSessionData }): string[] {
  const { sessionKey, keepSessionData: keep } = settings
  if (keep === false || heldByAnother(session.get(sessionKey), member)) return []
  if (keep === true) return session.keys().filter((key) => key !== CSRF_DEFAULT_SESSION_KEY && key !== sessionKey)
  return session.keys().filter((key) => keep.includes(key))
}
