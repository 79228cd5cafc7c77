import { errorCodes } from '../errors.js'

const { FST_SR_INVALID_OPTION, FST_SR_INVALID_TOKEN } = errorCodes

/**
 * Tokens that stand for a member for a while (a remembered device, a password reset link), behind an
 * interface so that several instances can share them (Redis). An AttemptStore keeps counts only; a token
 * needs a value, a one-time read (take) and a way to forget every token of one member at once (a leaver,
 * a stolen remember token). Every method is async so that a networked store fits.
 */
export interface TokenRecord {
  /** Whose token it is, as `String(id)`: `deleteAll(memberId)` forgets every token of theirs. */
  memberId: string
  /** What the token stands for, opaque to the store (the caller encodes it, JSON for instance). */
  data: string
}

export interface TokenStore {
  /** The live record under `key`, or undefined. */
  get (key: string): Promise<TokenRecord | undefined>
  /** Stores `value` under `key` (replacing any), to expire `ttlMs` from now. */
  set (key: string, value: TokenRecord, ttlMs: number): Promise<void>
  /** The live record under `key`, deleted in the same step: of two callers at once, one gets it. */
  take (key: string): Promise<TokenRecord | undefined>
  /** Forgets every token of `memberId`. */
  deleteAll (memberId: string): Promise<void>
}

/** The checks every TokenStore of this package makes on what set() is given: a bad call is a bug, said at once. */
export function checkTokenSet (key: unknown, value: unknown, ttlMs: unknown): void {
  if (typeof key !== 'string' || key === '') throw new FST_SR_INVALID_TOKEN('set', 'the key must be a non-empty string')
  const record = value as Partial<TokenRecord> | null
  if (record === null || typeof record !== 'object' || typeof record.memberId !== 'string' || record.memberId === '' || typeof record.data !== 'string') {
    throw new FST_SR_INVALID_TOKEN('set', 'the record must be { memberId: non-empty string, data: string }')
  }
  if (!Number.isSafeInteger(ttlMs) || (ttlMs as number) < 1) throw new FST_SR_INVALID_TOKEN('set', 'ttlMs must be a positive whole number of milliseconds')
}

interface Entry { record: TokenRecord, expiresAt: number }

/** Past this many keys, expired ones are swept before a new key is added. */
const SWEEP_THRESHOLD = 10_000
const DEFAULT_MAX_ENTRIES = 100_000

/**
 * The per-process default. Expired tokens are dropped lazily and swept once the map is large; past
 * `maxEntries` live tokens the oldest written goes first, so memory stays bounded whatever is written
 * (a token dropped that way is one its device no longer has: that device signs in again).
 */
export class MemoryTokenStore implements TokenStore {
  readonly #entries = new Map<string, Entry>()
  // Per member, the keys of their tokens; a member goes with their last key.
  readonly #byMember = new Map<string, Set<string>>()
  readonly #now: () => number
  readonly #maxEntries: number

  constructor (options: { now?: () => number, maxEntries?: number } = {}) {
    this.#now = options.now ?? Date.now
    const max = options.maxEntries ?? DEFAULT_MAX_ENTRIES
    if (!Number.isSafeInteger(max) || max < 1) throw new FST_SR_INVALID_OPTION('maxEntries', 'must be a positive whole number')
    this.#maxEntries = max
  }

  get size (): number {
    return this.#entries.size
  }

  #drop (key: string): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    const keys = this.#byMember.get(entry.record.memberId)!
    keys.delete(key)
    if (keys.size === 0) this.#byMember.delete(entry.record.memberId)
  }

  #live (key: string): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry !== undefined && entry.expiresAt <= this.#now()) {
      this.#drop(key)
      return undefined
    }
    return entry
  }

  #sweep (): void {
    const now = this.#now()
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#drop(key)
  }

  async get (key: string): Promise<TokenRecord | undefined> {
    const entry = this.#live(key)
    return entry === undefined ? undefined : { ...entry.record }
  }

  async set (key: string, value: TokenRecord, ttlMs: number): Promise<void> {
    checkTokenSet(key, value, ttlMs)
    // Deleted first so that the map's order stays the order of writes (the oldest is evicted first).
    this.#drop(key)
    if (this.#entries.size >= SWEEP_THRESHOLD) this.#sweep()
    while (this.#entries.size >= this.#maxEntries) this.#drop(this.#entries.keys().next().value!)
    const record = { memberId: value.memberId, data: value.data }
    this.#entries.set(key, { record, expiresAt: this.#now() + ttlMs })
    const keys = this.#byMember.get(record.memberId) ?? new Set<string>()
    keys.add(key)
    this.#byMember.set(record.memberId, keys)
  }

  async take (key: string): Promise<TokenRecord | undefined> {
    const entry = this.#live(key)
    if (entry === undefined) return undefined
    this.#drop(key)
    return { ...entry.record }
  }

  async deleteAll (memberId: string): Promise<void> {
    for (const key of [...this.#byMember.get(memberId) ?? []]) this.#drop(key)
  }
}
