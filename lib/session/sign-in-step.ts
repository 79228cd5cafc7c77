// The session's side of every sign-in, whatever proved who the member is (a password, an OpenID
// provider, a host's own callback): the new session, what it keeps, the member stored, the event.
// The answer (a 303 to the return address) is the caller's.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { Member } from '../types.js'
import { errorCodes } from '../errors.js'
import { eventBase, signInSucceeded } from '../events.js'
import { SECURE_COOKIE_OVER_HTTP_WARNING, warnHostMistakeOnce } from '../warnings.js'
import { isHttpsBase } from '../redirect/site-origin.js'
import { invalidMember, isMember, type MemberAnswerSource, type StoredMember } from './member.js'
import type { MemberFinder } from './find-member.js'
import type { SessionAdapter, SessionHandle } from './session-adapter.js'
import { keptAtSignIn, providerKey, type KeepSessionData } from './session-data.js'
import { timesAtSignIn, timesKey, type TimeoutSettings } from './timeouts.js'
import { generationKey, type Generations } from './sign-out-everywhere.js'
import type { RememberMe } from './remember-me.js'

const { FST_SR_INSECURE_SIGN_IN, FST_SR_INVALID_SIGN_IN_OPTIONS } = errorCodes

/** How a member proved who they are, as the sign-in event says it: a word of a–z, 0–9 and `-`. */
const METHOD = /^[a-z0-9-]{1,32}$/

/** How a sign-in came about: `method` (`'password'`, `'oidc'`, a host's own word) and, for OIDC, the provider's id. */
export interface SignInHow {
  method: string
  provider?: string
  /** The login form's "Keep me signed in on this device" was ticked: a remember token too (remember-me.ts). */
  remember?: boolean
  /**
   * What a remembered device's token was checked against: its sign-out-everywhere generation and findMember's
   * session version. The session keeps these rather than the store's and findMember's answers now, so that a
   * sign out everywhere (or a new version) landing after the check ends it.
   */
  checked?: { generation: number, sessionVersion: string | number | undefined }
}

/** `method` (or `provider`: `name`) as given, or FST_SR_INVALID_SIGN_IN_OPTIONS (a TypeError) that says what one is. */
export function checkedMethod (value: unknown, name = 'method'): string {
  if (typeof value !== 'string' || !METHOD.test(value)) {
    throw new FST_SR_INVALID_SIGN_IN_OPTIONS(`${name} must be a word of a-z, 0-9 and - (1 to 32 characters), such as 'password', 'oidc' or your own ('google-oauth'); got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value}`)
  }
  return value
}

/** The options of a call without them. */
export function missingSignInOptions (): Error {
  return new FST_SR_INVALID_SIGN_IN_OPTIONS('needs its options, with method (how the member signed in: \'oidc\', \'google-oauth\', ...)')
}

/** What the sign-in step needs of the section. */
export interface SignInStepDeps {
  session: SessionAdapter
  sessionKey: string
  /** What sign-in keeps of what the host stored in the session (session-data.ts): all (default), a list of keys, or nothing. */
  keepSessionData: KeepSessionData
  /** The host's findMember behind its cache, when given: the session then keeps only the member's id. */
  finder: MemberFinder | undefined
  /** The section's index path, for the event. */
  section: string
  baseUrl: string | undefined
  /** The idle and absolute timeouts, whose times every sign-in starts; false: none kept. */
  timeouts: TimeoutSettings | false
  /** The generation counts of "sign out everywhere", whose current one every sign-in copies; undefined: off. */
  generations: Generations | undefined
  /** "Keep me signed in on this device"; undefined: off. */
  rememberMe?: RememberMe | undefined
  /** Ends the member's password reset links (`passwordReset`): a sign-in proves they need none (set once the reset routes register). */
  endResetLinks?: ((memberId: Member['id']) => Promise<void>) | undefined
  /** Drops the CSRF cookie when it is the section's own, so that sign-in renews it (set once the section registers it). */
  renewCsrfCookie?: ((reply: FastifyReply) => void) | undefined
}

/**
 * What sign-in keeps under `sessionKey`: the member as given (its own fields only), or with findMember
 * only its id and the session version findMember gives now (never its cache: a version changed a moment
 * ago counts). A member findMember does not find is a host mistake (FST_SR_INVALID_MEMBER): nobody is
 * signed in.
 */
async function storedAtSignIn (request: FastifyRequest, member: Member, finder: MemberFinder | undefined, source: MemberAnswerSource,
  checked: SignInHow['checked']): Promise<Member | StoredMember> {
  if (finder !== undefined) {
    // A remembered device: findMember was asked when its token was checked (`member` is its answer).
    const found = checked === undefined ? await finder.findNow(request, member.id) : { sessionVersion: checked.sessionVersion }
    if (found === null) throw invalidMember(request, 'findMember', found, `nothing for the member ${source} signed in`)
    return found.sessionVersion === undefined ? { id: member.id } : { id: member.id, sessionVersion: found.sessionVersion }
  }
  const stored: Member = { id: member.id, name: member.name }
  if (typeof member.email === 'string') stored.email = member.email
  if (member.groups !== undefined) stored.groups = [...member.groups]
  return stored
}

const PROXY_FIX = 'Behind a proxy that terminates TLS, have it send X-Forwarded-Proto: https and set Fastify\'s trustProxy to that proxy\'s address or CIDR'

/**
 * Whether @fastify/session can keep a member signed in after this sign-in. It writes no cookie, and
 * saves no session, when the session cookie is Secure and Fastify sees the request as plain http (a TLS
 * proxy without X-Forwarded-Proto, or not trusted): the member would be sent on as signed in and land
 * on the login page again. That is said once in the log with the fix; so is an https `baseUrl` reached
 * over what Fastify sees as http, where a `secure: 'auto'` cookie goes out without Secure.
 */
export function sessionCookieWritten (request: FastifyRequest, session: SessionHandle | undefined, log: FastifyBaseLogger, baseUrl: string | undefined): session is SessionHandle {
  if (session === undefined) {
    warnHostMistakeOnce(log, `${SECURE_COOKIE_OVER_HTTP_WARNING}:no-session`, { code: SECURE_COOKIE_OVER_HTTP_WARNING, path: request.url.split('?')[0] },
      'Sign-in refused: the sign-in route has no session (it is outside the session cookie\'s path), so nobody could stay signed in. ' +
      'Give the session plugin\'s cookie path: \'/\' (its default), or a path that covers the sign-in routes and the section.')
    return false
  }
  if (request.protocol === 'https') return true
  const secure = session.secureCookie === true
  if (secure) {
    warnHostMistakeOnce(log, `${SECURE_COOKIE_OVER_HTTP_WARNING}:secure`, { code: SECURE_COOKIE_OVER_HTTP_WARNING, protocol: request.protocol },
      'Sign-in refused: the session cookie is Secure but Fastify sees the request as plain http, so @fastify/session would write ' +
      `no cookie and the member would land on the login page again. ${PROXY_FIX}; or give @fastify/session cookie.secure: 'auto'.`)
  } else if (isHttpsBase(baseUrl)) {
    warnHostMistakeOnce(log, `${SECURE_COOKIE_OVER_HTTP_WARNING}:base-url`, { code: SECURE_COOKIE_OVER_HTTP_WARNING, protocol: request.protocol, baseUrl },
      `baseUrl is ${baseUrl} but Fastify sees the sign-in as plain http, so a session cookie with secure: 'auto' goes out without Secure. ${PROXY_FIX}.`)
  }
  return !secure
}

/**
 * Signs `member` in on this request's session: a new session id, so that an id planted before it
 * (session fixation) is worthless; what of the host's data comes along is keepSessionData's
 * (session-data.ts: nothing of another member's session, the CSRF secret never); the member (or its
 * id) stored; a new CSRF cookie; the sign-in event. A `member` that is not one is FST_SR_INVALID_MEMBER
 * (naming `source`); a session that could not be kept is FST_SR_INSECURE_SIGN_IN. `admit`, when given,
 * runs once both checks pass and before the session changes: a sign-in policy of the caller's (the
 * bound on a member's new sessions), which refuses by throwing. Resolves to the member's id.
 */
export async function signInSession (request: FastifyRequest, reply: FastifyReply, member: unknown, how: SignInHow, deps: SignInStepDeps, source: MemberAnswerSource,
  admit?: (member: Member) => Promise<void>): Promise<Member['id']> {
  if (!isMember(member)) throw invalidMember(request, source, member)
  const session = deps.session.of(request)
  // Fail closed: a 303 "signed in" that no cookie backs would be a lie, and a login loop.
  if (!sessionCookieWritten(request, session, request.server.log, deps.baseUrl)) throw new FST_SR_INSECURE_SIGN_IN()
  await admit?.(member)
  const stored = await storedAtSignIn(request, member, deps.finder, source, how.checked)
  // Read from the store itself (not a cache), before the session changes: an outage leaves it as it was.
  const generation = deps.generations === undefined ? undefined : how.checked?.generation ?? await deps.generations.now(member.id)
  // The token is stored before the session changes too; its cookie goes out with the new session.
  const token = how.remember === true ? await deps.rememberMe?.issue(stored, generation) : undefined
  await deps.endResetLinks?.(member.id)
  await session.renew(keptAtSignIn(session, member, deps))
  session.set(deps.sessionKey, stored)
  if (how.provider !== undefined) session.set(providerKey(deps.sessionKey), how.provider)
  if (deps.timeouts !== false) session.set(timesKey(deps.sessionKey), timesAtSignIn(Date.now()))
  if (generation !== undefined) session.set(generationKey(deps.sessionKey), generation)
  // A new CSRF secret too (the next page makes it), so that a token seen before sign-in is worthless after.
  deps.renewCsrfCookie?.(reply)
  if (token !== undefined) deps.rememberMe!.setCookie(request, reply, token)
  if (signInSucceeded.hasSubscribers) {
    signInSucceeded.publish({ ...eventBase(request, deps.section), memberId: stored.id, method: how.method, ...(how.provider === undefined ? {} : { provider: how.provider }) })
  }
  return stored.id
}
