import type { FastifyRequest } from 'fastify'
import type { Member } from '../types.js'

export type MemberLookup = (request: FastifyRequest) => Member | null | undefined | Promise<Member | null | undefined>

export function isMember (value: unknown): value is Member {
  return value !== null && typeof value === 'object' &&
    typeof (value as Member).id === 'string' && (value as Member).id !== '' &&
    typeof (value as Member).name === 'string'
}

/**
 * Whether the request carries a real session. Outside its cookie path @fastify/session leaves a plain
 * object (an undocumented detail), and without the session plugin's onRequest there is none: only an
 * object with get() counts, so any other shape reads as "no session" rather than failing.
 */
export function hasLiveSession (request: FastifyRequest): boolean {
  const session = request.session as { get?: unknown } | null | undefined
  return typeof session?.get === 'function'
}

/** The member stored under `sessionKey`, or undefined; anything malformed counts as signed out. */
export function sessionMember (sessionKey: string): MemberLookup {
  return function memberFromSession (request) {
    const value = hasLiveSession(request) ? request.session.get(sessionKey as 'member') : undefined
    return isMember(value) ? value : undefined
  }
}

/** Who is signed in: the host's `getMember` when it has its own authentication, else the session's member. */
export function memberLookup (getMember: MemberLookup | undefined, sessionKey: string): MemberLookup {
  return getMember ?? sessionMember(sessionKey)
}
