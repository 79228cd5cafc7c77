import { errorCodes } from '../../errors.js'
import { prefixOption, RedisCommands, type RedisCommandClient, type RedisStoreOptions } from './client.js'

export interface RedisSessionStoreOptions extends RedisStoreOptions {
  /**
   * Lifetime in Redis of a session whose cookie has no expiry (a browser-session cookie without
   * `maxAge`), in milliseconds (default one day). A cookie with `maxAge` or `expires` sets the TTL itself.
   */
  ttlMs?: number
  /**
   * After each session write, `WAIT` until `replicas` replicas have it, at most `timeoutMs`; fewer is a
   * 503 (FST_SR_STORE_UNAVAILABLE), so a sign-in is answered 303 only once its session would survive a
   * failover to one of them. Off by default (one Redis has no replica to wait for).
   */
  waitForReplicas?: { replicas: number, timeoutMs?: number }
}

type Callback = (err?: unknown) => void
type GetCallback = (err: unknown, result?: any) => void

const ONE_DAY = 24 * 60 * 60 * 1000
const { FST_SR_INVALID_OPTION, FST_SR_STORE_UNAVAILABLE } = errorCodes
const DEFAULT_WAIT_MS = 500

function waitOption (options: RedisSessionStoreOptions): { replicas: number, timeoutMs: number } | undefined {
  const wait = options.waitForReplicas
  if (wait === undefined) return undefined
  const replicas = (wait as { replicas?: unknown } | null)?.replicas
  const timeoutMs = (wait as { timeoutMs?: unknown } | null)?.timeoutMs ?? DEFAULT_WAIT_MS
  if (!Number.isSafeInteger(replicas) || (replicas as number) < 1 || !Number.isSafeInteger(timeoutMs) || (timeoutMs as number) < 1) {
    throw new FST_SR_INVALID_OPTION('waitForReplicas', 'must be { replicas, timeoutMs }: a positive whole number of replicas, and of milliseconds (default 500)')
  }
  return { replicas: replicas as number, timeoutMs: timeoutMs as number }
}

/**
 * A session store for @fastify/session on Redis, so that every instance behind a load balancer sees the
 * same sessions. Each session is one JSON value whose TTL is the cookie's remaining lifetime (its
 * `maxAge`), refreshed on every save, so sessions expire in Redis with their cookies. Every command is
 * bounded by `timeoutMs`; outages reach @fastify/session as FST_SR_STORE_UNAVAILABLE, which the plugin
 * answers with 503, and other failures as FST_SR_STORE_ERROR (500).
 */
// No `implements SessionStore`: that would make this entry's declarations import @fastify/session, which a
// host using only RedisAttemptStore need not have. test/types/redis.tst.ts checks the contract instead.
export class RedisSessionStore {
  readonly #redis: RedisCommands
  readonly #prefix: string
  readonly #ttlMs: number
  readonly #wait: { replicas: number, timeoutMs: number } | undefined

  constructor (client: RedisCommandClient, options: RedisSessionStoreOptions = {}) {
    this.#redis = new RedisCommands(client, 'RedisSessionStore', options)
    this.#prefix = prefixOption(options, 'schools-resources:sess:')
    this.#wait = waitOption(options)
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

  /** A write, then (with `waitForReplicas`) the replicas' confirmation of it, on the same connection. */
  async #write (key: string, args: string[], always = false): Promise<void> {
    await this.#redis.send(key, args, always)
    if (this.#wait === undefined) return
    const { replicas, timeoutMs } = this.#wait
    const confirmed = Number(await this.#redis.send(key, ['WAIT', String(replicas), String(timeoutMs)], always, timeoutMs))
    if (confirmed < replicas) {
      throw new FST_SR_STORE_UNAVAILABLE(`${confirmed} of ${replicas} replicas confirmed the session write within ${timeoutMs} ms (waitForReplicas)`)
    }
  }

  get (sessionId: string, callback: GetCallback): void {
    const key = this.#prefix + sessionId
    this.#redis.send(key, ['GET', key]).then((json) => {
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
    this.#write(key, args).then(() => callback(), callback)
  }

  /** A sign-out: tried even while the breaker is open, so it reaches Redis as soon as Redis answers. */
  destroy (sessionId: string, callback: Callback): void {
    const key = this.#prefix + sessionId
    this.#write(key, ['DEL', key], true).then(() => callback(), callback)
  }
}
