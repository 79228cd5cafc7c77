import type { FastifyReply } from 'fastify'
import type { AttemptStore } from '../stores/attempt-store.js'

const MINUTE_MS = 60_000
/** How long a sign-in may hold its place before it is counted or given back; a dead process's place frees itself then. */
const PLACE_MS = 30_000

/** A sign-in admitted within the bound, or refused until the minute's count ends. */
export type NewSessionTicket = { until: Date } | { until: undefined, settle (saved: boolean): Promise<void> }

/**
 * The sessions sign-in makes per member, counted per minute in the lockout's store (so across instances):
 * each sign-in mints a session that lives for hours, and a shared account or a stolen password could
 * otherwise mint them without bound. The bound is far above a class signing in on one shared login at once.
 *
 * Only sessions that were made count: a sign-in takes a place in flight (the store's reserve(), atomic
 * against the count and the other places, so parallel sign-ins cannot pass the bound together), and is
 * counted once its answer went out as a success. A sign-in answered 503 because the session store was
 * down made no session, so a class retrying through an outage is not locked out after it. A store
 * without reserve() and release() counts every attempt up front, as before.
 */
export class NewSessions {
  readonly #store: AttemptStore
  readonly #max: number

  constructor (store: AttemptStore, max: number) {
    this.#store = store
    this.#max = max
  }

  /** Admits a new session for the member `id` within the bound, or says until when it is refused. */
  async take (id: string | number): Promise<NewSessionTicket> {
    const key = `sessions:${id}`
    const store = this.#store
    if (store.reserve === undefined || store.release === undefined) {
      const { count, expiresAt } = await store.increment(key, MINUTE_MS)
      return count > this.#max ? { until: new Date(expiresAt) } : { until: undefined, settle: async () => {} }
    }
    const release = store.release.bind(store)
    if (!await store.reserve(key, this.#max, PLACE_MS)) {
      // Full with sessions counted this minute, or with sign-ins still in flight (a moment).
      const counted = await store.get(key)
      return { until: new Date(counted !== undefined && counted.count >= this.#max ? counted.expiresAt : Date.now() + 1000) }
    }
    return {
      until: undefined,
      async settle (saved) {
        // Counted before the place is given back, so that the two never leave room for one more together.
        if (saved) await store.increment(key, MINUTE_MS)
        await release(key)
      }
    }
  }
}

/**
 * Settles an admitted sign-in once its answer has gone: counted when it went out whole as a success
 * (the session saved by then), given back otherwise (a 503 from the session store, a refusal, a client
 * gone). A store failing at that point is logged: the answer is already sent.
 */
export function settleWhenAnswered (reply: FastifyReply, ticket: { settle (saved: boolean): Promise<void> }): void {
  let sent = false
  reply.raw.once('finish', () => { sent = true })
  reply.raw.once('close', () => {
    const saved = sent && reply.raw.statusCode < 400
    ticket.settle(saved).catch((error: Error) => {
      reply.log.warn({ code: 'FST_SR_STORE_UNAVAILABLE', reason: error.message }, 'the bound on new sessions could not count this sign-in')
    })
  })
}
