import type { FastifyRequest } from 'fastify'
import type { Member } from '../types.js'
import { errorCodes } from '../errors.js'
import type { SessionAdapter } from './session-adapter.js'
import { emitProcessWarning, kindOfValue, NOT_A_MEMBER_WARNING, warnHostMistakeOnce } from '../warnings.js'

const { FST_SR_INVALID_MEMBER } = errorCodes

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
 * Says once per app (and at most once per section) that the session holds something else under
 * `sessionKey`: a host with its own login storing its user there (`{ id, username }`) would otherwise get
 * a silent redirect loop, every visit counting as signed out.
 */
function warnNotAMember (request: FastifyRequest, sessionKey: string): void {
  const message = `The session holds a value under sessionKey "${sessionKey}" that is not a member ({ id, name }), so ` +
    'every visit counts as signed out. If your own sign-in stores its user there, give the section a getMember ' +
    'option that returns { id, name } for it (or store members under another sessionKey).'
  if (!warnHostMistakeOnce(request.server.log, `sessionKey:${sessionKey}`, { code: NOT_A_MEMBER_WARNING, sessionKey }, message)) return
  emitProcessWarning(message, 'UserWarning', NOT_A_MEMBER_WARNING)
}

/** The member stored under `sessionKey`, or undefined; anything malformed counts as signed out. */
export function sessionMember (session: SessionAdapter, sessionKey: string): MemberLookup {
  let warned = false
  return function memberFromSession (request) {
    const value: unknown = session.of(request)?.get(sessionKey)
    if (isMember(value)) return value
    if (value !== undefined && value !== null && !warned) {
      warned = true
      warnNotAMember(request, sessionKey)
    }
    return undefined
  }
}

/** What a wrong `authenticate` or `getMember` result was, for FST_SR_INVALID_MEMBER: its kind, never its content. */
export function notAMember (value: unknown): string {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? 'an object without them' : kindOfValue(value)
}

/**
 * The error for an `authenticate` or `getMember` (`option`) that gave `value`, not a member, logged once
 * per kind of value with the fix. The section answers it with its 500 page: nobody is let in, and a
 * redirect to the login page would hide the mistake in a loop.
 */
export function invalidMember (request: FastifyRequest, option: 'authenticate' | 'getMember', value: unknown): Error {
  const kind = notAMember(value)
  const answer = option === 'getMember' ? 'return { id, name, email?, groups? } for a signed-in user' : 'resolve to { id, name, email?, groups? } for good credentials'
  warnHostMistakeOnce(request.server.log, `${option}:${kind}`, { code: 'FST_SR_INVALID_MEMBER', option, got: kind },
    `fastify-schools-resources: ${option} gave ${kind} instead of a member, so nobody is let in: these requests get the 500 page. ` +
    `Make ${option} ${answer} (id a non-empty string or a number, name a string) and null for anyone else.`)
  return new FST_SR_INVALID_MEMBER(option, kind)
}

/**
 * The host's `getMember`, checked where its answer enters: a falsy answer (`null`, `undefined`, `false`,
 * `0`, `''`) is a visitor; a member is a member; anything else (`{}`, `{ id: 1, username }`, `true`) is a
 * host mistake that admits nobody ({@link invalidMember}). Synchronous answers stay synchronous.
 */
function checkedGetMember (getMember: MemberLookup): MemberLookup {
  function check (request: FastifyRequest, value: unknown): Member | undefined {
    if (isMember(value)) return value
    // Falsy: no member. `!value` on purpose: a getMember written as `user && toMember(user)` gives '' or 0.
    if (!(value as boolean)) return undefined
    throw invalidMember(request, 'getMember', value)
  }
  return function memberFromHost (request) {
    const value: unknown = getMember(request)
    if (value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function') {
      return Promise.resolve(value).then((resolved) => check(request, resolved))
    }
    return check(request, value)
  }
}

/** Who is signed in: the host's `getMember` (checked) when it has its own authentication, else the session's member. */
export function memberLookup (getMember: MemberLookup | undefined, session: SessionAdapter | undefined, sessionKey: string): MemberLookup {
  return getMember === undefined ? sessionMember(session!, sessionKey) : checkedGetMember(getMember)
}
