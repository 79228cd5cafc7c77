import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import { assertRedisClient, INCREMENT_SCRIPT, prefixOption, sendBounded, timeoutOption, type RedisCommandClient, type RedisStoreOptions } from './client.js'

/**
 * A @fastify/rate-limit store over a node-redis client. @fastify/rate-limit's own `redis` option wants
 * ioredis (it calls `defineCommand`), which node-redis does not have; this store lets one node-redis
 * client serve sessions, lockout and the rate limit. Pass the returned class as `loginRateLimit.store`.
 * It counts fixed windows (INCR, PEXPIRE on the first hit); `continueExceeding` and
 * `exponentialBackoff` are not supported.
 */
export function redisRateLimitStore (client: RedisCommandClient, options: RedisStoreOptions = {}): FastifyRateLimitStoreCtor {
  assertRedisClient(client, 'redisRateLimitStore')
  const basePrefix = prefixOption(options, 'schools-resources:rate-limit:')
  const timeoutMs = timeoutOption(options)

  class RedisRateLimitStore implements FastifyRateLimitStore {
    readonly prefix: string

    constructor (_globalOptions?: unknown, prefix = basePrefix) {
      this.prefix = prefix
    }

    incr (key: string, callback: (error: Error | null, result?: { current: number, ttl: number }) => void, timeWindow: number): void {
      sendBounded(client, ['EVAL', INCREMENT_SCRIPT, '1', this.prefix + key, String(timeWindow)], timeoutMs).then(
        (reply) => {
          const [current, ttl] = reply as [number, number]
          callback(null, { current: Number(current), ttl: Number(ttl) })
        },
        (err: Error) => callback(err)
      )
    }

    // One counter per route, as @fastify/rate-limit's own stores do; `fastify.rateLimit()` hooks have no route.
    // (Its types say RouteOptions; at run time it passes the merged options with `routeInfo`.)
    child (routeOptions: unknown): FastifyRateLimitStore {
      const { method, url } = (routeOptions as { routeInfo: { method?: string, url?: string } }).routeInfo
      return new RedisRateLimitStore(undefined, method === undefined ? this.prefix : `${this.prefix}${method}${url}:`)
    }
  }
  return RedisRateLimitStore as unknown as FastifyRateLimitStoreCtor
}
