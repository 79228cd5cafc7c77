import type { SessionStore } from '@fastify/session'
import { errorCodes } from '../../errors.js'
import { assertRedisClient, prefixOption, sendBounded, timeoutOption, type RedisCommandClient, type RedisStoreOptions } from './client.js'

export interface RedisSessionStoreOptions extends RedisStoreOptions {
  /**
   * Lifetime in Redis of a session whose cookie has no expiry (a browser-session cookie without
   * `maxAge`), in milliseconds (default one day). A cookie with `maxAge` or `expires` sets the TTL itself.
   */
  ttlMs?: number
}

type Callback = (err?: unknown) => void
type GetCallback = (err: unknown, result?: any) => void

const ONE_DAY = 24 * 60 * 60 * 1000
const { FST_SR_INVALID_OPTION } = errorCodes

/**
 * A session store for @fastify/session on Redis, so that every instance behind a load balancer sees the
 * same sessions. Each session is one JSON value whose TTL is the cookie's remaining lifetime (its
 * `maxAge`), refreshed on every save, so sessions expire in Redis with their cookies. Every command is
 * bounded by `timeoutMs`; failures reach @fastify/session as FST_SR_STORE_UNAVAILABLE, which the plugin
 * answers with 503.
 */
export class RedisSessionStore implements SessionStore {
  readonly #client: RedisCommandClient
  readonly #prefix: string
  readonly #timeoutMs: number
  readonly #ttlMs: number

  constructor (client: RedisCommandClient, options: RedisSessionStoreOptions = {}) {
    assertRedisClient(client, 'RedisSessionStore')
    this.#client = client
    this.#prefix = prefixOption(options, 'schools-resources:sess:')
    this.#timeoutMs = timeoutOption(options)
    const ttl = options.ttlMs ?? ONE_DAY
    if (!Number.isSafeInteger(ttl) || ttl < 1) throw new FST_SR_INVALID_OPTION('ttlMs', 'must be a positive whole number of milliseconds')
    this.#ttlMs = ttl
  }

  /** Milliseconds the session has left: its cookie's expiry, else `ttlMs`. */
  ttlOf (session: unknown): number {
    const expires = (session as { cookie?: { expires?: unknown } } | null)?.cookie?.expires
    if (expires === undefined || expires === null) return this.#ttlMs
    const at = new Date(expires as string | Date).getTime()
    return Number.isNaN(at) ? this.#ttlMs : at - Date.now()
  }

  #send (args: string[]): Promise<unknown> {
    return sendBounded(this.#client, args, this.#timeoutMs)
  }

  get (sessionId: string, callback: GetCallback): void {
    this.#send(['GET', this.#prefix + sessionId]).then((json) => {
      let session: unknown = null
      if (typeof json === 'string') {
        // An unreadable entry is treated as no session: the visitor starts a new one.
        try { session = JSON.parse(json) } catch { session = null }
      }
      callback(null, session)
    }, callback)
  }

  set (sessionId: string, session: unknown, callback: Callback): void {
    const ttl = this.ttlOf(session)
    const key = this.#prefix + sessionId
    // A session whose cookie has already expired is not worth keeping.
    const args = ttl > 0 ? ['SET', key, JSON.stringify(session), 'PX', String(ttl)] : ['DEL', key]
    this.#send(args).then(() => callback(), callback)
  }

  destroy (sessionId: string, callback: Callback): void {
    this.#send(['DEL', this.#prefix + sessionId]).then(() => callback(), callback)
  }
}
