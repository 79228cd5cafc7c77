// "Keep me signed in on this device" (docs/session-lifecycle.md#keep-me-signed-in): a remember token in a
// cookie of its own, in the split selector/validator form. The store keeps the selector's record with a
// hash of the validator, never the validator, so that a copy of the store signs nobody in. A browser that
// comes back without a session but with a good token gets a new session through the shared sign-in step
// and a new token; a validator presented again after it was rotated is a stolen copy.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Member } from '../types.js'
import type { TokenStore } from '../stores/token-store.js'
import { deferSessionEnd, isMember, sessionEndDeferred, type MemberLookup, type StoredMember } from './member.js'

/** The cookie's name over http; over https it is `__Host-sr_remember` (Secure, Path /, no Domain). */
export const REMEMBER_COOKIE = 'sr_remember'
/** The login form's checkbox (value `1`), and the OpenID start's query field that carries it. */
export const REMEMBER_FIELD = 'remember'
/**
 * How long a rotated validator still signs in: tabs restored at once and a lost response present the one
 * the browser had. Later, it is a stolen copy (SilverStripe dropped rotation over such false alarms, #11281).
 */
export const ROTATION_GRACE_MS = 60_000
/** The `requestedBy` of the sign-out everywhere that a stolen copy sets off. */
export const STOLEN_TOKEN = 'stolen-remember-token'

/** The `rememberMe` option. */
export interface RememberMeOptions {
  /** How long a device is remembered from the sign-in where the box was ticked (default 30 days); using it does not extend it. */
  maxAgeMs?: number
  /** Where the tokens live (default a MemoryTokenStore in this process); `new RedisTokenStore(client)` shares them. */
  store?: TokenStore
}

export interface RememberMeSettings {
  maxAgeMs: number
  store: TokenStore
}

/** The box as a form or a query gives it: `'1'`, `1` or `true` is ticked, anything else is not. */
export function wantsRemember (value: unknown): boolean {
  return value === '1' || value === 1 || value === true
}

/** The cookie's name for this request: a `__Host-` name on https, which no subdomain and no http page can set. */
export function rememberCookieName (request: FastifyRequest): string {
  return request.protocol === 'https' ? `__Host-${REMEMBER_COOKIE}` : REMEMBER_COOKIE
}

/** Whether the request carries a remember cookie of either name (for the anonymous short-circuit). */
export function hasRememberCookie (cookies: Record<string, string | undefined>): boolean {
  return (cookies[REMEMBER_COOKIE] ?? cookies[`__Host-${REMEMBER_COOKIE}`] ?? '') !== ''
}

/** 16 random bytes and 32 random bytes, base64url, a dot between. */
const TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/
const HASH = /^[0-9a-f]{64}$/

/** What the store keeps under `remember:{selector}` (as JSON in the record's data). */
interface Remembered {
  /** The member's id as the host gives it (string or number). */
  id: Member['id']
  /** SHA-256 (hex) of the current validator; null once this selector was rotated to a new one. */
  hash: string | null
  /** The validator this one replaced, for the rotation's grace and to know a stolen copy. */
  previous?: { hash: string, rotatedAt: number }
  /** When the device is forgotten (epoch ms): set at the sign-in with the box, never moved. */
  expiresAt: number
  /** The member as the session keeps it, without findMember (with it, findMember answers). */
  member?: Member
  /** The sign-out-everywhere generation at the sign-in; another one now: the token is worthless. */
  generation?: number
  /** findMember's sessionVersion at the sign-in; another one now: the token is worthless. */
  version?: string | number
}

/** A token made and stored, for the cookie. */
export interface IssuedToken {
  value: string
  expiresAt: number
}

function storeKey (selector: string): string {
  return `remember:${selector}`
}

function hashOf (validator: string): string {
  return createHash('sha256').update(validator).digest('hex')
}

/** Compares two hashes (64 hex digits each) in constant time. */
function sameHash (a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'))
}

function isId (value: unknown): value is Member['id'] {
  return (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))
}

/** A record this section wrote, read back; anything else is no token. */
function readRemembered (data: string): Remembered | undefined {
  let parsed: Partial<Remembered>
  try {
    parsed = JSON.parse(data) as Partial<Remembered>
  } catch {
    return undefined
  }
  const { id, hash, previous, expiresAt, member } = parsed ?? {}
  if (!isId(id) || !(hash === null || (typeof hash === 'string' && HASH.test(hash))) || !Number.isFinite(expiresAt)) return undefined
  if (previous !== undefined && !(typeof previous?.hash === 'string' && HASH.test(previous.hash) && Number.isFinite(previous.rotatedAt))) return undefined
  if (member !== undefined && !isMember(member)) return undefined
  return parsed as Remembered
}

/** What the section needs to sign a remembered device in: the shared step and its checks. */
export interface RememberedSignIn {
  /**
   * Signs `member` in on this request (the shared step, method 'remembered'); `fresh`: keep nothing of the
   * session; `checked`: the sign-out-everywhere generation and session version the token was checked against.
   */
  signIn: (request: FastifyRequest, reply: FastifyReply, member: Member, fresh: boolean, checked: { generation: number, sessionVersion: string | number | undefined }) => Promise<void>
  /** Whether a session can be kept on this request (a Secure cookie over http cannot); said once in the log. */
  canKeepSession: (request: FastifyRequest) => boolean
  /** findMember's answer now, when the host gives it (null: no such member). */
  findNow?: ((request: FastifyRequest, id: Member['id']) => Promise<(Member & { sessionVersion?: string | number }) | null>) | undefined
  /** The member's sign-out-everywhere generation now (store, not cache), when that is on. */
  generationNow?: ((id: Member['id']) => Promise<number>) | undefined
  /** Signs the member out everywhere (every session, every remembered device), with `by` as the event's requestedBy. */
  everywhere: (id: Member['id'], request: FastifyRequest, by: string) => Promise<void>
  /** Ends the session a timeout or a check ended this request, when the token does not replace it. */
  endSession: (request: FastifyRequest) => Promise<void>
}

/**
 * The remember tokens of one section: made at a sign-in with the box, checked and rotated when the device
 * comes back, forgotten at sign-out. `now` is the clock (tests move it).
 */
export class RememberMe {
  readonly store: TokenStore
  readonly maxAgeMs: number
  readonly #now: () => number

  constructor (settings: RememberMeSettings, now: () => number = Date.now) {
    this.store = settings.store
    this.maxAgeMs = settings.maxAgeMs
    this.#now = now
  }

  /**
   * A new selector and validator for `stored` (what the session keeps: the member, or its id and version
   * with findMember), written to the store to expire at `expiresAt` (default: maxAgeMs from now).
   */
  async issue (stored: Member | StoredMember, generation: number | undefined, expiresAt = this.#now() + this.maxAgeMs): Promise<IssuedToken> {
    const selector = randomBytes(16).toString('base64url')
    const validator = randomBytes(32).toString('base64url')
    const record: Remembered = { id: stored.id, hash: hashOf(validator), expiresAt }
    if (isMember(stored)) record.member = stored
    else if (stored.sessionVersion !== undefined) record.version = stored.sessionVersion
    if (generation !== undefined) record.generation = generation
    await this.store.set(storeKey(selector), { memberId: String(stored.id), data: JSON.stringify(record) }, Math.max(1, expiresAt - this.#now()))
    return { value: `${selector}.${validator}`, expiresAt }
  }

  /** Sets the cookie for `token`: HttpOnly, SameSite=Lax, Secure on https, Max-Age the device's time left. */
  setCookie (request: FastifyRequest, reply: FastifyReply, token: IssuedToken): void {
    const maxAge = Math.max(1, Math.ceil((token.expiresAt - this.#now()) / 1000))
    reply.setCookie(rememberCookieName(request), token.value, { path: '/', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', maxAge })
  }

  clearCookie (request: FastifyRequest, reply: FastifyReply): void {
    reply.clearCookie(rememberCookieName(request), { path: '/', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' })
  }

  #cookie (request: FastifyRequest): string | undefined {
    return (request.cookies as Record<string, string | undefined> | undefined)?.[rememberCookieName(request)]
  }

  /** Whether the request carries this protocol's remember cookie. */
  hasCookie (request: FastifyRequest): boolean {
    return (this.#cookie(request) ?? '') !== ''
  }

  /** Sign-out: this device's token leaves the store, and its cookie is cleared. */
  async forgetThisDevice (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const value = this.#cookie(request)
    if (value === undefined) return
    const parts = TOKEN.exec(value)
    if (parts !== null) await this.store.take(storeKey(parts[1]))
    this.clearCookie(request, reply)
  }

  /**
   * Signs in the device whose cookie holds a good token, and gives it a new one: true when it did. Any
   * other token is cleared (a forged, expired or unknown one; one of another generation or session
   * version), and a stolen copy signs the member out everywhere. Store errors go on to the caller (the
   * 503 page): nobody is signed out for them.
   */
  async signIn (request: FastifyRequest, reply: FastifyReply, deps: RememberedSignIn, fresh: boolean): Promise<boolean> {
    // Called only with a cookie (hasCookie).
    const parts = TOKEN.exec(this.#cookie(request)!)
    if (parts === null) return this.#refuse(request, reply)
    const [, selector, validator] = parts
    const key = storeKey(selector)
    const record = await this.store.get(key)
    const data = record === undefined ? undefined : readRemembered(record.data)
    const now = this.#now()
    if (record === undefined || data === undefined || data.expiresAt <= now) return this.#refuse(request, reply)
    const hash = hashOf(validator)
    const current = data.hash !== null && sameHash(hash, data.hash)
    const previous = data.previous !== undefined && sameHash(hash, data.previous.hash)
    if (!current && !(previous && now - data.previous!.rotatedAt <= ROTATION_GRACE_MS)) {
      // A validator this selector never had, or one rotated away a while ago: someone else holds a copy.
      await this.store.deleteAll(record.memberId)
      await deps.everywhere(data.id, request, STOLEN_TOKEN)
      return this.#refuse(request, reply)
    }
    const member = await this.#member(request, deps, data, record.memberId)
    if (member === undefined || !deps.canKeepSession(request)) {
      if (member === undefined) await this.store.take(key)
      return this.#refuse(request, reply, member !== undefined)
    }
    // A new selector, not a new validator in place: two requests with one token at once each make their
    // own (the store has no compare-and-set), so neither overwrites the other's. The device keeps its expiry.
    const next = await this.issue(data.member ?? { id: data.id, ...(data.version === undefined ? {} : { sessionVersion: data.version }) }, data.generation, data.expiresAt)
    await deps.signIn(request, reply, member, fresh, { generation: data.generation ?? 0, sessionVersion: data.version })
    // The old selector keeps only the hash it had, to know a copy presented after the grace.
    if (current) await this.store.set(key, { memberId: record.memberId, data: JSON.stringify({ ...data, hash: null, previous: { hash: data.hash, rotatedAt: now } }) }, data.expiresAt - now)
    this.setCookie(request, reply, next)
    return true
  }

  /** The member the token stands for, if they still count: findMember finds them, their generation and version are the token's. */
  async #member (request: FastifyRequest, deps: RememberedSignIn, data: Remembered, memberId: string): Promise<Member | undefined> {
    let member = data.member
    if (deps.findNow !== undefined) {
      const found = await deps.findNow(request, data.id)
      if (found === null) {
        // A member findMember no longer finds loses every remembered device.
        await this.store.deleteAll(memberId)
        return undefined
      }
      if (found.sessionVersion !== data.version) return undefined
      member = found
    }
    if (deps.generationNow !== undefined && await deps.generationNow(data.id) !== (data.generation ?? 0)) return undefined
    return member
  }

  /** Not signed in from the cookie: cleared, unless `keep` (the token is good, but no session can be kept here). */
  #refuse (request: FastifyRequest, reply: FastifyReply, keep = false): false {
    if (!keep) this.clearCookie(request, reply)
    return false
  }
}

/**
 * `lookup` with remembered devices: when it finds nobody and the request carries a remember cookie (and
 * comes with its reply: the guards, the index and the login page), the token is checked and, when good,
 * the device signed in and the member read again. A session a check ended on the way (a timeout) is ended
 * only when the token does not replace it, and then nothing of it is kept.
 */
export function withRememberMe (lookup: MemberLookup, remember: RememberMe, deps: RememberedSignIn): MemberLookup {
  return async function memberOrRemembered (request, reply) {
    if (reply === undefined || !remember.hasCookie(request)) return lookup(request)
    let member
    let ended = false
    try {
      deferSessionEnd(request)
      member = await lookup(request)
    } finally {
      ended = sessionEndDeferred(request)
    }
    if (member !== undefined && member !== null) return member
    let signedIn = false
    try {
      signedIn = await remember.signIn(request, reply, deps, ended)
    } finally {
      if (ended && !signedIn) await deps.endSession(request)
    }
    return signedIn ? lookup(request) : member
  }
}
