import type { SessionStore } from '@fastify/session'
import { isMember, type Member } from './member.js'
import { CSRF_FIELD } from './csrf.js'

/** What a member's stored session says, read without building a @fastify/session Session. */
export interface StoredMember {
  member: Member
  /** The secret of the member's CSRF tokens, when the session has one already. */
  csrfSecret: string | undefined
}

export type StoredMemberReader = (signedCookie: string, sessionKey: string) => Promise<StoredMember | undefined>

/** A cookie signer as @fastify/session takes it (a @fastify/cookie Signer, a CachedSigner). */
export interface SessionSigner {
  sign (value: string): string
  unsign (signed: string): { valid: boolean, renew: boolean, value: string | null }
}

/**
 * Whether @fastify/session would treat the stored session as expired (and regenerate it): it compares
 * the stored cookie's `expires` with now. Anything unreadable counts as expired, so the session plugin decides.
 */
function expired (cookie: unknown): boolean {
  if (cookie === null || cookie === undefined) return false
  if (typeof cookie !== 'object') return true
  const expires = (cookie as { expires?: unknown }).expires
  if (expires === null || expires === undefined) return false
  if (!(expires instanceof Date) && typeof expires !== 'string' && typeof expires !== 'number') return true
  const at = new Date(expires).getTime()
  return Number.isNaN(at) || at <= Date.now()
}

/**
 * Reads the member of a session cookie straight from the store the session plugin uses, with its signer.
 * Resolves to undefined whenever the session plugin's own path might answer differently (a cookie
 * that does not verify or was signed with an older secret, no such session, an expired one, no
 * member): the request then takes the normal path and the session plugin decides, exactly as without
 * this reader. A store error rejects: the session plugin would fail the request with it too, and
 * leaving it to a second read would only make the visitor wait for the store twice.
 */
export function storedMemberReader (signer: SessionSigner, store: SessionStore): StoredMemberReader {
  return function readStoredMember (signedCookie, sessionKey) {
    const unsigned = signer.unsign(signedCookie)
    // renew: signed with an older secret, which the session plugin answers in its own way (it may clear the cookie).
    if (!unsigned.valid || unsigned.renew || unsigned.value === null || unsigned.value === '') return Promise.resolve(undefined)
    const sessionId = unsigned.value
    return new Promise((resolve, reject) => {
      const answer = (err: unknown, session: unknown) => {
        if (err !== null && err !== undefined) {
          // ENOENT: "no such session" to the session plugin, which then starts a new one.
          return (err as { code?: unknown }).code === 'ENOENT' ? resolve(undefined) : reject(err)
        }
        if (session === null || typeof session !== 'object') return resolve(undefined)
        const data = session as Record<string, unknown>
        if (expired(data.cookie) || !isMember(data[sessionKey])) return resolve(undefined)
        const secret = data[CSRF_FIELD]
        resolve({ member: data[sessionKey] as Member, csrfSecret: typeof secret === 'string' && secret !== '' ? secret : undefined })
      }
      try {
        store.get(sessionId, answer)
      } catch (err) {
        reject(err)
      }
    })
  }
}
