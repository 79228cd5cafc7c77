/**
 * Counters of failed sign-ins, behind an interface so that several instances can share them (Redis).
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
}

/** Past this many keys, expired ones are swept before a new key is added. */
const SWEEP_THRESHOLD = 10_000

/** The per-process default. Expired counts are dropped lazily, so the map stays bounded by live keys. */
export class MemoryAttemptStore implements AttemptStore {
  readonly #counts = new Map<string, AttemptCount>()
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
}
