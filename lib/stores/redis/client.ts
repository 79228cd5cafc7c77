import { errorCodes } from '../../errors.js'
import { isStoreUnavailable } from '../../errors.js'

const { FST_SR_INVALID_OPTION, FST_SR_STORE_ERROR, FST_SR_STORE_UNAVAILABLE, FST_SR_UNSUPPORTED_REDIS_CLIENT } = errorCodes

/**
 * A node-redis (v5 or later) client: `createClient()`, `createSentinel()` or `createCluster()` from
 * `redis`. Their `sendCommand` signatures differ (a Sentinel takes `isReadonly` first, a Cluster the key
 * that picks its slot), so the stores recognise which one they were given; this package does not depend
 * on a Redis client itself.
 */
export type RedisCommandClient =
  | { sendCommand (args: string[]): Promise<unknown> }
  | { sendCommand (isReadonly: boolean | undefined, args: string[]): Promise<unknown> }
  | { sendCommand (firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown> }

/** The breaker every store on one client shares: see {@link RedisStoreOptions.breaker}. */
export interface RedisBreakerOptions {
  /** Consecutive outages (failures or timeouts) that open it (default 5). */
  failures?: number
  /** How long it stays open, failing fast, before one command probes Redis again (default 1000 ms). */
  openMs?: number
}

export interface RedisStoreOptions {
  /** Prefix of every key this store writes, so that several apps (or test runs) can share one Redis. */
  prefix?: string
  /**
   * Milliseconds to wait for an answer before giving up with FST_SR_STORE_UNAVAILABLE (default 2000).
   * Keep it short: a visitor waits this long before the 503.
   */
  timeoutMs?: number
  /**
   * The client's breaker: after `failures` consecutive outages, commands fail at once (503) for `openMs`,
   * then one probes Redis. One per client, shared by every store on it; the first store made on a client
   * sets it, and a later store that asks for other settings is refused.
   */
  breaker?: RedisBreakerOptions
}

const DEFAULT_TIMEOUT_MS = 2000
const DEFAULT_BREAKER: Required<RedisBreakerOptions> = { failures: 5, openMs: 1000 }

type Kind = 'client' | 'sentinel' | 'cluster'
// node-redis's classes, known by name: this package cannot import `redis` (an optional peer).
const KINDS = new Map<string, Kind>([['RedisClient', 'client'], ['RedisSentinel', 'sentinel'], ['RedisCluster', 'cluster']])
const ACCEPTED = 'pass a node-redis (v5 or later) client: createClient(), createSentinel() or createCluster() from "redis"'

/** The names of `value`'s classes, its own first. */
function classNames (value: object): string[] {
  const names: string[] = []
  for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const name: unknown = proto.constructor?.name
    if (typeof name === 'string') names.push(name)
  }
  return names
}

/** Which node-redis client `client` is; anything else is refused with the reason. */
function assertRedisClient (client: unknown, who: string): Kind {
  if (client === null || typeof client !== 'object' || typeof (client as { sendCommand?: unknown }).sendCommand !== 'function') {
    throw new FST_SR_INVALID_OPTION('client', `${who} needs a Redis client with sendCommand(), such as createClient() from "redis"`)
  }
  for (const name of classNames(client)) {
    const kind = KINDS.get(name)
    if (kind !== undefined) return kind
  }
  const { call, status } = client as { call?: unknown, status?: unknown }
  const ioredis = typeof call === 'function' && typeof status === 'string'
  throw new FST_SR_UNSUPPORTED_REDIS_CLIENT(who, ioredis ? `ioredis is not supported; ${ACCEPTED}` : `it is not a node-redis client; ${ACCEPTED}`)
}

function timeoutOption (options: RedisStoreOptions): number {
  const value = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!Number.isSafeInteger(value) || value < 1) throw new FST_SR_INVALID_OPTION('timeoutMs', 'must be a positive whole number of milliseconds')
  return value
}

export function prefixOption (options: RedisStoreOptions, fallback: string): string {
  const value = options.prefix ?? fallback
  if (typeof value !== 'string') throw new FST_SR_INVALID_OPTION('prefix', 'must be a string')
  return value
}

// Error replies that a wait fixes: a replica not yet promoted, a Redis loading its data, a cluster or a
// Sentinel set between masters, a script still running, too few replicas for min-replicas-to-write, a
// master turned replica under a WAIT (UNBLOCKED) or before it (WAIT refused on a replica).
const OUTAGE_REPLY = /^(READONLY|LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|NOREPLICAS|BUSY|MOVED|ASK|UNBLOCKED|ERR WAIT cannot be used with replica)\b/
const PROGRAMMING_ERRORS = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError'])

/**
 * Whether a failed command is an outage (503: a wait fixes it) rather than a mistake (500). Outages:
 * node-redis's connection errors, Node's network errors, the replies above, and any other error a client
 * raises; mistakes: a JavaScript TypeError (and its kind) and any other error reply (`WRONGTYPE`, a script
 * error), since Redis answered.
 */
export function isOutage (error: unknown): boolean {
  if (isStoreUnavailable(error)) return true
  if (!(error instanceof Error)) return true
  if (OUTAGE_REPLY.test(error.message)) return true
  const names = classNames(error)
  return !names.includes('ErrorReply') && !names.some((name) => PROGRAMMING_ERRORS.has(name))
}

/** One command's failure as the plugin answers it: FST_SR_STORE_UNAVAILABLE (503) or FST_SR_STORE_ERROR (500). */
function storeError (err: unknown, command: string): Error {
  const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
  const Code = isOutage(err) ? FST_SR_STORE_UNAVAILABLE : FST_SR_STORE_ERROR
  return Object.assign(new Code(`${command} failed: ${reason}`), { cause: err })
}

/**
 * Fails fast while Redis is known down: `failures` consecutive outages open it; while open every command
 * is refused at once; after `openMs` one command goes through as a probe (the others are still refused),
 * and its answer closes it, its failure opens it again.
 */
class Breaker {
  readonly failures: number
  readonly openMs: number
  #count = 0
  #openUntil = 0
  #probing = false
  #reason = ''

  constructor (options: Required<RedisBreakerOptions>) {
    this.failures = options.failures
    this.openMs = options.openMs
  }

  /** Undefined to go ahead, else why not. */
  refusal (): string | undefined {
    if (this.#count < this.failures) return undefined
    if (Date.now() >= this.#openUntil && !this.#probing) {
      this.#probing = true
      return undefined
    }
    return `Redis is failing (breaker open after ${this.#count} consecutive failures; the latest: ${this.#reason})`
  }

  answered (): void {
    this.#count = 0
    this.#probing = false
  }

  failed (reason: string): void {
    this.#probing = false
    this.#reason = reason
    if (++this.#count >= this.failures) this.#openUntil = Date.now() + this.openMs
  }
}

const breakers = new WeakMap<object, Breaker>()

function breakerOption (options: RedisStoreOptions): Required<RedisBreakerOptions> {
  const given = options.breaker ?? {}
  if (given === null || typeof given !== 'object') throw new FST_SR_INVALID_OPTION('breaker', 'must be an object: { failures, openMs }')
  const settings = { ...DEFAULT_BREAKER, ...given }
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new FST_SR_INVALID_OPTION(`breaker.${name}`, 'must be a positive whole number')
  }
  return settings
}

/** The client's breaker, made by its first store. */
function breakerOf (client: object, options: RedisStoreOptions): Breaker {
  const settings = breakerOption(options)
  const found = breakers.get(client)
  if (found === undefined) {
    const made = new Breaker(settings)
    breakers.set(client, made)
    return made
  }
  if (options.breaker !== undefined && (found.failures !== settings.failures || found.openMs !== settings.openMs)) {
    throw new FST_SR_INVALID_OPTION('breaker', `differs from the breaker another store set on this client ({ failures: ${found.failures}, openMs: ${found.openMs} }); one client has one breaker`)
  }
  return found
}

type Send = (key: string, args: string[], onNode: boolean) => Promise<unknown>
type NodeClient = { sendCommand (args: string[]): Promise<unknown> }

/**
 * The client's sendCommand as one shape: every command names the one key it touches. `onNode`: a
 * command about the node that holds the key rather than the key (INFO, WAIT), sent on that node's
 * connection.
 */
function sender (client: RedisCommandClient, kind: Kind): Send {
  const send = client.sendCommand.bind(client) as (...args: unknown[]) => Promise<unknown>
  // Never a replica: a read must see the write just made (a sign-in, then its first page).
  if (kind === 'sentinel') return (_key, args) => send(false, args)
  if (kind === 'cluster') {
    // node-redis 6 sends a keyless command by its own policy (WAIT to every master, INFO to any node),
    // whatever key it is given: such a command goes to the key's master's connection itself.
    const { getNodeClientForKey } = client as { getNodeClientForKey?: (key: string, isReadonly: boolean) => Promise<NodeClient> }
    const toNode = typeof getNodeClientForKey === 'function'
      ? (key: string, args: string[]) => getNodeClientForKey.call(client, key, false).then((node) => node.sendCommand(args))
      : (key: string, args: string[]) => send(key, false, args)
    // The key picks the slot, so the node; every script touches one key, so slots never cross.
    return (key, args, onNode) => onNode ? toNode(key, args) : send(key, false, args)
  }
  return (_key, args) => send(args)
}

/**
 * A store's way to Redis: each command bounded by `timeoutMs`, its failure told apart (outage or
 * mistake), and the client's breaker in front of it.
 */
export class RedisCommands {
  readonly kind: Kind
  readonly #send: Send
  readonly #timeoutMs: number
  readonly #breaker: Breaker

  constructor (client: unknown, who: string, options: RedisStoreOptions) {
    this.kind = assertRedisClient(client, who)
    this.#timeoutMs = timeoutOption(options)
    this.#breaker = breakerOf(client as object, options)
    this.#send = sender(client as RedisCommandClient, this.kind)
  }

  /**
   * Sends one command about `key`. `always` skips the open breaker's refusal (a sign-out's DEL is tried
   * whatever the breaker says), though its answer still counts. `waitMs` is added to the bound, for a
   * command that waits on purpose (WAIT). `onNode`: a command about the node holding `key` (INFO, WAIT),
   * sent on the connection that wrote the key.
   */
  send (key: string, args: string[], always = false, waitMs = 0, onNode = false): Promise<unknown> {
    const refusal = always ? undefined : this.#breaker.refusal()
    if (refusal !== undefined) return Promise.reject(new FST_SR_STORE_UNAVAILABLE(refusal))
    let timer: NodeJS.Timeout | undefined
    const bound = this.#timeoutMs + waitMs
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new FST_SR_STORE_UNAVAILABLE(`no answer from Redis within ${bound} ms (${args[0]})`)), bound)
    })
    const answer = Promise.resolve().then(() => this.#send(key, args, onNode)).catch((err: unknown) => { throw storeError(err, args[0]) })
    return Promise.race([answer, timeout]).finally(() => clearTimeout(timer)).then((reply) => {
      this.#breaker.answered()
      return reply
    }, (err: Error & { code?: string }) => {
      if (err.code === 'FST_SR_STORE_UNAVAILABLE') this.#breaker.failed(err.message)
      else this.#breaker.answered()
      throw err
    })
  }
}

/**
 * INCR with the window set on the first increment, atomically; answers `[count, pttl]`. A key left
 * without an expiry (by hand, or an older writer) gets the window too, so no count lives forever.
 */
export const INCREMENT_SCRIPT = `local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`

/**
 * Reserves a place for a check in flight (KEYS[2], a sorted set of places scored by their expiry, on the
 * server's clock) when the count (KEYS[1]) plus the live places is under ARGV[1]; the place lives ARGV[2]
 * ms, named ARGV[3]. 1 when reserved, 0 when full. Atomic, so instances cannot both take the last place.
 */
export const RESERVE_SCRIPT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count + redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`

/** The count and its pttl, or nil for a missing key; one round trip, consistent. */
export const READ_SCRIPT = `local count = redis.call('GET', KEYS[1])
if not count then return nil end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`

/**
 * Adds ARGV[1] to the member's index (KEYS[1], a set) and keeps the index alive at least ARGV[2] ms, so it
 * outlives every token it names and then goes by itself; atomic, so two writes cannot shorten it.
 */
export const INDEX_SCRIPT = `redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`
