import type { FastifyRequest } from 'fastify'
import type { Member } from '../types.js'
import { emitProcessWarning, NOT_A_MEMBER_WARNING } from '../warnings.js'

export type MemberLookup = (request: FastifyRequest) => Member | null | undefined | Promise<Member | null | undefined>

export function isMember (value: unknown): value is Member {
  if (value === null || typeof value !== 'object') return false
  const { id, name, groups } = value as Member
  return ((typeof id === 'string' && id !== '') || (typeof id === 'number' && Number.isFinite(id))) && typeof name === 'string' &&
    (groups === undefined || isGroupList(groups))
}

/** A list of group names: strings, none empty (`[]` is a member of no group). */
export function isGroupList (value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((group) => typeof group === 'string' && group !== '')
}

/**
 * Says once per section that the session holds something else under `sessionKey`: a host with its own
 * login storing its user there (`{ id, username }`) would otherwise get a silent redirect loop, every
 * visit counting as signed out.
 */
function warnNotAMember (request: FastifyRequest, sessionKey: string): void {
  const message = `The session holds a value under sessionKey "${sessionKey}" that is not a member ({ id, name }), so ` +
    'every visit counts as signed out. If your own sign-in stores its user there, give the section a getMember ' +
    'option that returns { id, name } for it (or store members under another sessionKey).'
  emitProcessWarning(message, 'UserWarning', NOT_A_MEMBER_WARNING)
  request.log.warn({ code: NOT_A_MEMBER_WARNING, sessionKey }, message)
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
  let warned = false
  return function memberFromSession (request) {
    const value: unknown = hasLiveSession(request) ? request.session.get(sessionKey as 'member') : undefined
    if (isMember(value)) return value
    if (value !== undefined && value !== null && !warned) {
      warned = true
      warnNotAMember(request, sessionKey)
    }
    return undefined
  }
}

/** Who is signed in: the host's `getMember` when it has its own authentication, else the session's member. */
export function memberLookup (getMember: MemberLookup | undefined, sessionKey: string): MemberLookup {
  return getMember ?? sessionMember(sessionKey)
}
