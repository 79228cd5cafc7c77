import type { AttemptStore } from '../stores/attempt-store.js'

const MINUTE_MS = 60_000

/**
 * The sessions sign-in makes per member, counted per minute in the lockout's store (so across instances):
 * each sign-in mints a session that lives for hours, and a shared account or a stolen password could
 * otherwise mint them without bound. The bound is far above a class signing in on one shared login at once.
 */
export class NewSessions {
  readonly #store: AttemptStore
  readonly #max: number

  constructor (store: AttemptStore, max: number) {
    this.#store = store
    this.#max = max
  }

  /** Counts a new session for the member `id`: undefined when it is within the bound, else when the minute's count ends. */
  async take (id: string | number): Promise<Date | undefined> {
    const { count, expiresAt } = await this.#store.increment(`sessions:${id}`, MINUTE_MS)
    return count > this.#max ? new Date(expiresAt) : undefined
  }
}
