import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Member } from '../types.js'
import { errorCodes } from '../errors.js'
import type { SessionAdapter } from './session-adapter.js'
import { emitProcessWarning, kindOfValue, NOT_A_MEMBER_WARNING, warnHostMistakeOnce } from '../warnings.js'

const { FST_SR_INVALID_MEMBER } = errorCodes

/**
 * Who is signed in on `request`. Given the `reply` too (the guards, the index, the login page), a
 * remembered device may be signed in on the way (remember-me.ts).
 */
export type MemberLookup = (request: FastifyRequest, reply?: FastifyReply) => Member | null | undefined | Promise<Member | null | undefined>

export function isMember (value: unknown): value is Member {
  if (value === null || typeof value !== 'object') return false
  const { id, name, groups } = value as Member
  return isMemberId(id) && typeof name === 'string' && (groups === undefined || isGroupList(groups))
}

/** A member id: a non-empty string or a finite number, as a database gives it. */
function isMemberId (value: unknown): value is Member['id'] {
  return (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))
}

/** A member's session version (findMember's `sessionVersion`): a string or a finite number, when there is one. */
export function isSessionVersion (value: unknown): value is string | number | undefined {
  return value === undefined || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}

/**
 * What sign-in keeps under `sessionKey` when the host gives `findMember`: the member's id, and the version
 * of its sessions when findMember gives one. The member itself is loaded by its id on each request.
 */
export interface StoredMember {
  id: Member['id']
  sessionVersion?: string | number
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

// The requests whose session a check may end while a remember cookie could still sign them in again
// (remember-me.ts): the end is noted here, and done only if the token does not replace the session.
const deferred = new WeakMap<FastifyRequest, boolean>()

/** From now until sessionEndDeferred(request), an end of this request's session is only noted. */
export function deferSessionEnd (request: FastifyRequest): void {
  deferred.set(request, false)
}

/** Stops deferring; whether a session end was noted meanwhile. */
export function sessionEndDeferred (request: FastifyRequest): boolean {
  const noted = deferred.get(request) === true
  deferred.delete(request)
  return noted
}

/**
 * Ends the session of a member who may no longer be signed in (findMember no longer finds them, or their
 * session version changed), as a sign-out does. Resolves in any case: should the store fail here, the
 * request is still answered as a visitor's, and the next one tries again.
 */
export async function forgetStoredMember (request: FastifyRequest, session: SessionAdapter): Promise<void> {
  // A remember cookie is being checked: the session ends only if the token does not replace it.
  if (deferred.has(request)) {
    deferred.set(request, true)
    return
  }
  try {
    // Only for a session that held a member's id: there is one.
    await session.of(request)!.end()
  } catch (err) {
    request.log.warn({ code: 'FST_SR_STORE_UNAVAILABLE', err }, 'fastify-schools-resources: the session of a member no longer found could not be ended; answered as a visitor')
  }
}

/** Reads `sessionKey` with `accept`; anything else there counts as signed out, and is said once (warnNotAMember). */
function fromSession<T> (session: SessionAdapter, sessionKey: string, accept: (value: unknown) => T | undefined): (request: FastifyRequest) => T | undefined {
  let warned = false
  return function readSession (request) {
    const value = session.of(request)?.get(sessionKey)
    const accepted = accept(value)
    if (accepted !== undefined) return accepted
    if (value !== undefined && value !== null && !warned) {
      warned = true
      warnNotAMember(request, sessionKey)
    }
    return undefined
  }
}

/** The member stored under `sessionKey`, or undefined; anything malformed counts as signed out. */
function sessionMember (session: SessionAdapter, sessionKey: string): MemberLookup {
  return fromSession(session, sessionKey, (value) => isMember(value) ? value : undefined)
}

/**
 * The id (and session version) stored under `sessionKey`: sign-in's `{ id, sessionVersion? }` with
 * findMember, or a whole member stored before findMember was given (its id), for one session lifetime.
 */
export function storedMember (session: SessionAdapter, sessionKey: string): (request: FastifyRequest) => StoredMember | undefined {
  return fromSession(session, sessionKey, (value) => {
    const { id, sessionVersion } = (value ?? {}) as Partial<StoredMember>
    return typeof value === 'object' && isMemberId(id) && isSessionVersion(sessionVersion) ? { id, sessionVersion } : undefined
  })
}

/** What a wrong `authenticate` or `getMember` result was, for FST_SR_INVALID_MEMBER: its kind, never its content. */
export function notAMember (value: unknown): string {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? 'an object without them' : kindOfValue(value)
}

// How each option that gives a member should answer, for the fix in FST_SR_INVALID_MEMBER's warn line.
const MEMBER_ANSWERS = {
  authenticate: 'resolve to { id, name, email?, groups? } for good credentials',
  getMember: 'return { id, name, email?, groups? } for a signed-in user',
  findMember: 'return { id, name, email?, groups?, sessionVersion? } for the id it is given (that same id, sessionVersion a string or a number)',
  signInMember: 'receive { id, name, email?, groups? }, the member your own sign-in proved',
  resolveMember: 'resolve to { id, name, email?, groups? } for the claims of a member',
  findMemberByEmail: 'resolve to { id, name, email?, groups? } for an address with an account, or null'
}

/** Which of the host's functions gave a member the section checks. */
export type MemberAnswerSource = keyof typeof MEMBER_ANSWERS

/**
 * The error for an `authenticate` or `getMember` (`option`) that gave `value`, not a member, logged once
 * per kind of value with the fix. The section answers it with its 500 page: nobody is let in, and a
 * redirect to the login page would hide the mistake in a loop.
 */
export function invalidMember (request: FastifyRequest, option: MemberAnswerSource, value: unknown, kind = notAMember(value)): Error {
  const answer = MEMBER_ANSWERS[option]
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
