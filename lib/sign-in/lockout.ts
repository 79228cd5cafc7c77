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

  /**
   * Counts an attempt before its password is checked, in one atomic step of the store, so that however
   * many sign-ins run at once, at most `maxAttempts` per window get as far as the password. Returns the
   * attempt's number, and when the lock ends if the username may not try.
   */
  async begin (username: string): Promise<{ attempt: number, lockedUntil: Date | undefined }> {
    const { count, expiresAt } = await this.#settings.store.increment(Lockout.key(username), this.#settings.windowMs)
    return { attempt: count, lockedUntil: count > this.#settings.maxAttempts ? new Date(expiresAt) : undefined }
  }

  /** The attempt numbered `attempt` failed; returns when the lock ends if it was the last one allowed. */
  async recordFailure (username: string, attempt: number): Promise<Date | undefined> {
    const { store, maxAttempts, durationMs } = this.#settings
    if (attempt < maxAttempts) return undefined
    await store.hold(Lockout.key(username), durationMs)
    return new Date(Date.now() + durationMs)
  }

  async recordSuccess (username: string): Promise<void> {
    await this.#settings.store.reset(Lockout.key(username))
  }
}
