import { errorCodes } from '../../errors.js'

const { FST_SR_INVALID_OPTION, FST_SR_STORE_UNAVAILABLE } = errorCodes

/**
 * The one method the Redis stores need. A node-redis client (`createClient()` from `redis`, v4 or later)
 * has it, so this package does not depend on a Redis client itself.
 */
export interface RedisCommandClient {
  sendCommand (args: string[]): Promise<unknown>
}

export interface RedisStoreOptions {
  /** Prefix of every key this store writes, so that several apps (or test runs) can share one Redis. */
  prefix?: string
  /**
   * Milliseconds to wait for an answer before giving up with FST_SR_STORE_UNAVAILABLE (default 2000).
   * Keep it short: a visitor waits this long before the 503.
   */
  timeoutMs?: number
}

export const DEFAULT_TIMEOUT_MS = 2000

/** The one thing the stores need of a client: node-redis's sendCommand(). */
export function assertRedisClient (client: unknown, who: string): asserts client is RedisCommandClient {
  if (client === null || typeof client !== 'object' || typeof (client as RedisCommandClient).sendCommand !== 'function') {
    throw new FST_SR_INVALID_OPTION('client', `${who} needs a Redis client with sendCommand(), such as createClient() from "redis"`)
  }
}

export function timeoutOption (options: RedisStoreOptions): number {
  const value = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!Number.isSafeInteger(value) || value < 1) throw new FST_SR_INVALID_OPTION('timeoutMs', 'must be a positive whole number of milliseconds')
  return value
}

export function prefixOption (options: RedisStoreOptions, fallback: string): string {
  const value = options.prefix ?? fallback
  if (typeof value !== 'string') throw new FST_SR_INVALID_OPTION('prefix', 'must be a string')
  return value
}

/**
 * Sends one command, bounded by `timeoutMs`. Every failure (connection refused or lost, offline queue
 * disabled, no answer in time, an error reply) becomes FST_SR_STORE_UNAVAILABLE with the original as
 * its cause, so the plugin can answer 503.
 */
export function sendBounded (client: RedisCommandClient, args: string[], timeoutMs: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new FST_SR_STORE_UNAVAILABLE(`no answer from Redis within ${timeoutMs} ms (${args[0]})`)), timeoutMs)
  })
  const answer = Promise.resolve().then(() => client.sendCommand(args)).catch((err: unknown) => {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
    throw Object.assign(new FST_SR_STORE_UNAVAILABLE(`${args[0]} failed: ${reason}`), { cause: err })
  })
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer))
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

/** The count and its pttl, or nil for a missing key; one round trip, consistent. */
export const READ_SCRIPT = `local count = redis.call('GET', KEYS[1])
if not count then return nil end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`
