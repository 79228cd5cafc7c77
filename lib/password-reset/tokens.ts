// Reset links: a random selector (the record's key, `m`) and a random token (`t`) whose SHA-256 alone the
// record keeps, in a TokenStore of its own. A stolen store gives no working link; a guessed selector
// without its token gives nothing; take() makes the successful change the only one.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Member } from '../types.js'
import type { TokenStore } from '../stores/token-store.js'

/** 16 bytes, base64url: 22 characters. */
const SELECTOR = /^[A-Za-z0-9_-]{22}$/
/** 32 bytes, base64url: 43 characters. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

/** A link's two parts. */
export interface LinkParts { selector: string, token: string }

/** What a reset record holds (as JSON in the record's data): never the token itself. */
export interface ResetRecord {
  /** The member as findMemberByEmail gave them (their own fields), for setPassword and the sign-in after. */
  member: Member
  /** The address the link was asked for, whose sign-in lockout a change clears. */
  email: string
  expiresAt: number
}

function digest (token: string): Buffer {
  return createHash('sha256').update(token).digest()
}

/** `m` and `t` as a link or the cookie gives them, or undefined when either is not of their shape. */
export function linkParts (selector: unknown, token: unknown): LinkParts | undefined {
  return typeof selector === 'string' && typeof token === 'string' && SELECTOR.test(selector) && TOKEN.test(token) ? { selector, token } : undefined
}

/** The member's own fields (what the session keeps too), so that the record holds nothing else of the host's. */
function ownFields (member: Member): Member {
  const kept: Member = { id: member.id, name: member.name }
  if (typeof member.email === 'string') kept.email = member.email
  if (member.groups !== undefined) kept.groups = [...member.groups]
  return kept
}

/**
 * Reset links keep their own keys and owners in the store (`reset:{selector}`, owner `reset:{id}`), so
 * that a host may give passwordReset and rememberMe one store: ending a member's links (at every sign-in)
 * then leaves their remembered devices alone, and the reverse.
 */
export const RESET_OWNER_PREFIX = 'reset:'
const key = (selector: string) => `${RESET_OWNER_PREFIX}${selector}`
const owner = (id: Member['id']) => `${RESET_OWNER_PREFIX}${String(id)}`

export class ResetTokens {
  readonly #store: TokenStore
  readonly #ttlMs: number

  constructor (store: TokenStore, ttlMs: number) {
    this.#store = store
    this.#ttlMs = ttlMs
  }

  /** A new link for `member`: every older one of theirs ends first. */
  async issue (member: Member, email: string): Promise<LinkParts & { expiresAt: Date }> {
    await this.endAll(member.id)
    const selector = randomBytes(16).toString('base64url')
    const token = randomBytes(32).toString('base64url')
    const expiresAt = Date.now() + this.#ttlMs
    const data = JSON.stringify({ hash: digest(token).toString('base64url'), member: ownFields(member), email, expiresAt })
    await this.#store.set(key(selector), { memberId: owner(member.id), data }, this.#ttlMs)
    return { selector, token, expiresAt: new Date(expiresAt) }
  }

  /** The live record the link stands for, left in place, or undefined (none, expired, another token). */
  async find (link: LinkParts): Promise<ResetRecord | undefined> {
    return matching(await this.#store.get(key(link.selector)), link.token)
  }

  /** The same, taken out of the store in one step: of two changes at once, one gets it. */
  async take (link: LinkParts): Promise<ResetRecord | undefined> {
    return matching(await this.#store.take(key(link.selector)), link.token)
  }

  /** Puts a taken record back for what is left of its time (a change the host could not make). */
  async restore (link: LinkParts, record: ResetRecord): Promise<void> {
    // At least a millisecond: a record past its time is refused by its own expiresAt anyway.
    const left = Math.max(1, record.expiresAt - Date.now())
    const data = JSON.stringify({ hash: digest(link.token).toString('base64url'), member: record.member, email: record.email, expiresAt: record.expiresAt })
    await this.#store.set(key(link.selector), { memberId: owner(record.member.id), data }, left)
  }

  /** Ends every link of the member: a new one asked for, a sign-in, a change. */
  async endAll (memberId: Member['id']): Promise<void> {
    await this.#store.deleteAll(owner(memberId))
  }
}

/** The record when `token` is the one it was made for and it has not expired. */
function matching (stored: { data: string } | undefined, token: string): ResetRecord | undefined {
  if (stored === undefined) return undefined
  let parsed: { hash?: unknown, member?: unknown, email?: unknown, expiresAt?: unknown }
  try {
    parsed = JSON.parse(stored.data)
  } catch {
    return undefined
  }
  const { hash, member, email, expiresAt } = parsed ?? {}
  if (typeof hash !== 'string' || typeof email !== 'string' || typeof expiresAt !== 'number' || member === null || typeof member !== 'object') return undefined
  const expected = Buffer.from(hash, 'base64url')
  const given = digest(token)
  if (expected.length !== given.length || !timingSafeEqual(expected, given) || expiresAt <= Date.now()) return undefined
  return { member: member as Member, email, expiresAt }
}
