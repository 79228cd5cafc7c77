/**
 * Counters of failed sign-ins (and the checks in flight under them), behind an interface so that several instances can share them (Redis).
 * Every method is async so that a networked store fits.
 */
export interface AttemptCount {
  count: number
  /** When this count expires, in epoch milliseconds. */
  expiresAt: number
}

export interface AttemptStore {
  /** Adds one to `key`'s count; a new count lives `windowMs` from its first increment. */
  increment (key: string, windowMs: number): Promise<AttemptCount>
  /** Keeps `key`'s count alive until `ttlMs` from now (used to hold a lockout). */
  hold (key: string, ttlMs: number): Promise<void>
  /** The live count, or undefined. */
  get (key: string): Promise<AttemptCount | undefined>
  reset (key: string): Promise<void>
  /**
   * Optional, for a store several instances share: reserves a place for one check in flight under `key`,
   * atomically, when its count plus the places reserved is under `max` (then true), else false. A place
   * lives `ttlMs` unless released first, so one a dead process held frees itself.
   */
  reserve? (key: string, max: number, ttlMs: number): Promise<boolean>
  /** Frees one place reserved under `key` (the one that would expire first); nothing when there is none. */
  release? (key: string): Promise<void>
}

/** Past this many keys, expired ones are swept before a new key is added. */
const SWEEP_THRESHOLD = 10_000

/** The per-process default. Expired counts are dropped lazily, so the map stays bounded by live keys. */
export class MemoryAttemptStore implements AttemptStore {
  readonly #counts = new Map<string, AttemptCount>()
  // Per key, the expiry times of the places reserved (reserve()); a key goes with its last place.
  readonly #reserved = new Map<string, number[]>()
  readonly #now: () => number

  constructor (options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now
  }

  get size (): number {
    return this.#counts.size
  }

  #live (key: string): AttemptCount | undefined {
    const entry = this.#counts.get(key)
    if (entry !== undefined && entry.expiresAt <= this.#now()) {
      this.#counts.delete(key)
      return undefined
    }
    return entry
  }

  #sweep (): void {
    const now = this.#now()
    for (const [key, entry] of this.#counts) if (entry.expiresAt <= now) this.#counts.delete(key)
  }

  async increment (key: string, windowMs: number): Promise<AttemptCount> {
    const entry = this.#live(key)
    if (entry !== undefined) {
      entry.count++
      return { ...entry }
    }
    if (this.#counts.size >= SWEEP_THRESHOLD) this.#sweep()
    const created = { count: 1, expiresAt: this.#now() + windowMs }
    this.#counts.set(key, created)
    return { ...created }
  }

  async hold (key: string, ttlMs: number): Promise<void> {
    const entry = this.#live(key)
    if (entry !== undefined) entry.expiresAt = this.#now() + ttlMs
  }

  async get (key: string): Promise<AttemptCount | undefined> {
    const entry = this.#live(key)
    return entry === undefined ? undefined : { ...entry }
  }

  async reset (key: string): Promise<void> {
    this.#counts.delete(key)
  }

  /** The places reserved under `key` that have not expired, soonest to expire first. */
  #places (key: string): number[] {
    const places = this.#reserved.get(key)
    if (places === undefined) return []
    const now = this.#now()
    while (places.length > 0 && places[0] <= now) places.shift()
    if (places.length === 0) this.#reserved.delete(key)
    return places
  }

  async reserve (key: string, max: number, ttlMs: number): Promise<boolean> {
    const places = this.#places(key)
    if ((this.#live(key)?.count ?? 0) + places.length >= max) return false
    // One ttl for every place of a store's caller, so pushing keeps them in the order they expire.
    places.push(this.#now() + ttlMs)
    this.#reserved.set(key, places)
    return true
  }

  async release (key: string): Promise<void> {
    this.#places(key).shift()
    if (this.#reserved.get(key)?.length === 0) this.#reserved.delete(key)
  }
}
