import type { Member } from '../types.js'
import type { SessionHandle } from './session-adapter.js'
import { timesKey } from './timeouts.js'
import { generationKey } from './sign-out-everywhere.js'

// Sign-in policy: what of the visitor's session a member keeps under the new session id. One function, so
// that every way in (the section's form, a sign-in with the school's account, a host's reply.signInMember)
// keeps the same.

// @fastify/csrf-protection's default key, where a host's own registration of it keeps its secret in the session.
export const CSRF_DEFAULT_SESSION_KEY = '_csrf'

/**
 * The `keepSessionData` option: `true` keeps whatever the host stored but the CSRF secret under `_csrf`
 * and the section's own keys; a list keeps only the keys named; `false` keeps nothing.
 */
export type KeepSessionData = boolean | readonly string[]

/** Where an OpenID sign-in notes its provider's id beside the member, for the provider's sign-out (set again at each sign-in). */
export function providerKey (sessionKey: string): string {
  return `${sessionKey}.provider`
}

/** The keys no sign-in keeps: the CSRF secret (renewed with the session id) and the section's own (set again). */
function ownKeys (sessionKey: string): string[] {
  return [CSRF_DEFAULT_SESSION_KEY, sessionKey, providerKey(sessionKey), timesKey(sessionKey), generationKey(sessionKey)]
}

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
 * `true`, everything the host stored (a language choice, a basket), as Django's login() keeps it; with a
 * list, those of its keys the session holds; nothing with `false`, or when the session was another
 * member's. Never the CSRF secret (renewed with the session id), `sessionKey` nor the provider an OpenID
 * sign-in came through (both set again), whichever form: options.ts refuses a list naming them, and a
 * list made some other way is held to the same.
 */
export function keptAtSignIn (session: SessionHandle, member: Member, settings: { sessionKey: string, keepSessionData: KeepSessionData }): string[] {
  const { sessionKey, keepSessionData: keep } = settings
  if (keep === false || heldByAnother(session.get(sessionKey), member)) return []
  const own = ownKeys(sessionKey)
  return session.keys().filter((key) => !own.includes(key) && (keep === true || keep.includes(key)))
}
