import { errorCodes } from '../../errors.js'
import { emitProcessWarning, REPLICAS_WARNING } from '../../warnings.js'
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
   * It waits for no more replicas than the primary has online (`INFO replication`): a primary just
   * promoted, whose old primary is dead, takes writes at once, unreplicated. A primary that had them and
   * lost them (an old primary being replaced, a replica that died) refuses writes (503) for
   * `lostReplicasMs` (default 5000), longer than clients take to follow a failover, before it takes them
   * with fewer. Each change is logged once (`log`).
   */
  waitForReplicas?: { replicas: number, timeoutMs?: number, lostReplicasMs?: number }
  /** Where the store says that it waits for fewer replicas, and when it is back to `replicas` (default: a process warning). */
  log?: { warn: (fields: object, message: string) => void }
}

type Callback = (err?: unknown) => void
type GetCallback = (err: unknown, result?: any) => void

const ONE_DAY = 24 * 60 * 60 * 1000
const { FST_SR_INVALID_OPTION, FST_SR_STORE_UNAVAILABLE } = errorCodes
const DEFAULT_WAIT_MS = 500
const DEFAULT_LOST_REPLICAS_MS = 5000

interface WaitSettings { replicas: number, timeoutMs: number, lostReplicasMs: number }

function waitOption (options: RedisSessionStoreOptions): WaitSettings | undefined {
  const wait = options.waitForReplicas
  if (wait === undefined) return undefined
  const given = (wait ?? {}) as { replicas?: unknown, timeoutMs?: unknown, lostReplicasMs?: unknown }
  const settings = { replicas: given.replicas, timeoutMs: given.timeoutMs ?? DEFAULT_WAIT_MS, lostReplicasMs: given.lostReplicasMs ?? DEFAULT_LOST_REPLICAS_MS }
  if (!Object.values(settings).every((value) => Number.isSafeInteger(value) && (value as number) >= 1)) {
    throw new FST_SR_INVALID_OPTION('waitForReplicas', 'must be { replicas, timeoutMs, lostReplicasMs }: a positive whole number of replicas, and of milliseconds (defaults 500 and 5000)')
  }
  return settings as WaitSettings
}

/**
 * What `INFO replication` says of a node: its role, its replication id (new at each promotion) and its
 * replicas online.
 */
export function replicationOf (info: unknown): { role: string, replid: string, online: number } {
  const text = String(info)
  return {
    role: /^role:(\S+)/m.exec(text)?.[1] ?? '',
    replid: /^master_replid:(\S+)/m.exec(text)?.[1] ?? '',
    online: (text.match(/^slave\d+:.*state=online/gm) ?? []).length
  }
}

/**
 * A primary (by replication id) a store has written to: the most replicas seen online, since when fewer
 * than that are, and the replicas its writes wait for when fewer than asked (logged when it changes).
 */
interface Primary { most: number, fewerSince: number, degradedTo: number | undefined }

// Primaries are forgotten after this many newer ones (a Cluster has one per master).
const REMEMBERED_PRIMARIES = 32

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
  readonly #wait: WaitSettings | undefined
  readonly #log: (message: string) => void
  readonly #primaries = new Map<string, Primary>()

  constructor (client: RedisCommandClient, options: RedisSessionStoreOptions = {}) {
    this.#redis = new RedisCommands(client, 'RedisSessionStore', options)
    this.#prefix = prefixOption(options, 'schools-resources:sess:')
    this.#wait = waitOption(options)
    const log = options.log
    this.#log = log === undefined
      ? (message) => emitProcessWarning(message, 'UserWarning', REPLICAS_WARNING)
      : (message) => log.warn({ code: REPLICAS_WARNING }, message)
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

  /**
   * A write, then (with `waitForReplicas`) what its primary has and the replicas' confirmation of it, on
   * the same connection (a Cluster: the key's master's).
   */
  async #write (key: string, args: string[], always = false): Promise<void> {
    await this.#redis.send(key, args, always)
    if (this.#wait === undefined) return
    const { timeoutMs } = this.#wait
    const replicas = this.#replicasFor(replicationOf(await this.#redis.send(key, ['INFO', 'replication'], always, 0, true)))
    if (replicas === 0) return
    const confirmed = Number(await this.#redis.send(key, ['WAIT', String(replicas), String(timeoutMs)], always, timeoutMs, true))
    if (confirmed < replicas) {
      throw new FST_SR_STORE_UNAVAILABLE(`${confirmed} of ${replicas} replicas confirmed the session write within ${timeoutMs} ms (waitForReplicas)`)
    }
  }

  /**
   * How many replicas to wait for on this primary: `replicas`, or as many as are online if fewer. Fewer
   * than this primary had is refused (503) for `lostReplicasMs` first: an old primary that a failover is
   * replacing has lost its replica too, and a write it took now would be lost when it rejoins as a replica.
   */
  #replicasFor ({ role, replid, online }: { role: string, replid: string, online: number }): number {
    const { replicas, lostReplicasMs } = this.#wait!
    // A master demoted between the write and now (a Cluster's old master): the write may be lost.
    if (role !== 'master') throw new FST_SR_STORE_UNAVAILABLE(`the node that took the session write is a ${role || 'node of unknown role'} now, not a primary (a failover); not confirmed (waitForReplicas)`)
    let primary = this.#primaries.get(replid)
    if (primary === undefined) {
      primary = { most: 0, fewerSince: 0, degradedTo: undefined }
      this.#primaries.set(replid, primary)
      if (this.#primaries.size > REMEMBERED_PRIMARIES) this.#primaries.delete(this.#primaries.keys().next().value!)
    }
    const wanted = Math.min(replicas, online)
    if (wanted >= Math.min(replicas, primary.most)) {
      primary.most = Math.max(primary.most, wanted)
      primary.fewerSince = 0
    } else {
      primary.fewerSince ||= Date.now()
      const waited = Date.now() - primary.fewerSince
      if (waited < lostReplicasMs) {
        throw new FST_SR_STORE_UNAVAILABLE(`the primary has ${online} of its ${primary.most} replicas online; writes wait ${lostReplicasMs} ms (waitForReplicas.lostReplicasMs) in case a failover is replacing it (${waited} ms so far)`)
      }
    }
    this.#degraded(primary, wanted)
    return wanted
  }

  /** Logs once when a primary's writes wait for fewer replicas than asked, and once when they wait for all again. */
  #degraded (primary: Primary, wanted: number): void {
    const { replicas } = this.#wait!
    const now = wanted < replicas ? wanted : undefined
    if (now === primary.degradedTo) return
    primary.degradedTo = now
    this.#log(now === undefined
      ? `session writes wait for ${replicas} replica(s) again (waitForReplicas)`
      : `session writes wait for ${now} replica(s), not ${replicas}: the primary has only ${now} online. ` +
        (now === 0 ? 'A sign-in now is lost if this primary fails before a replica has it; ' : '') +
        'bring a replica back (waitForReplicas, docs/redis.md)')
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
