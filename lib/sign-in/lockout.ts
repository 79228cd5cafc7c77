import type { AttemptStore } from '../stores/attempt-store.js'

export interface LockoutOptions {
  /** Failed attempts for one username within `windowMs` that lock it (default 10, as the legacy site). */
  maxAttempts?: number
  /** How long failures are remembered (default 15 minutes). */
  windowMs?: number
  /** How long a locked username is refused (default 15 minutes, as the legacy site). */
  durationMs?: number
  /** Where the counts live (default: in this process). */
  store?: AttemptStore
}

export interface LockoutSettings {
  maxAttempts: number
  windowMs: number
  durationMs: number
  store: AttemptStore
}

const KEY_PREFIX = 'login-failures:'

/**
 * Failed-login lockout per username. Unknown usernames are counted exactly like known ones, so the
 * answers do not tell which accounts exist.
 */
export class Lockout {
  readonly #settings: LockoutSettings

  constructor (settings: LockoutSettings) {
    this.#settings = settings
  }

  static key (username: string): string {
    return KEY_PREFIX + username.trim().toLowerCase()
  }

  /** When the username's lock ends, or undefined when it may try. */
  async lockedUntil (username: string): Promise<Date | undefined> {
    const entry = await this.#settings.store.get(Lockout.key(username))
    return entry !== undefined && entry.count >= this.#settings.maxAttempts ? new Date(entry.expiresAt) : undefined
  }

  /** Counts a failure; returns when the lock ends if this failure locked the username. */
  async recordFailure (username: string): Promise<Date | undefined> {
    const { store, maxAttempts, windowMs, durationMs } = this.#settings
    const key = Lockout.key(username)
    const { count } = await store.increment(key, windowMs)
    if (count < maxAttempts) return undefined
    await store.hold(key, durationMs)
    return new Date(Date.now() + durationMs)
  }

  async recordSuccess (username: string): Promise<void> {
    await this.#settings.store.reset(Lockout.key(username))
  }
}
