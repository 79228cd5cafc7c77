import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { FastifyInstance, preHandlerHookHandler } from 'fastify'
import { errorCodes } from '../errors.js'

export interface LoginRateLimitOptions {
  /** Sign-in attempts one client address may make per `timeWindow` (default 50). */
  max?: number
  /** Milliseconds, or a string such as `'15 minutes'` (default 15 minutes). */
  timeWindow?: number | string
  /** A Redis client (ioredis-compatible, as @fastify/rate-limit expects) to share the counts between instances. */
  redis?: unknown
  /** Key prefix in Redis. */
  nameSpace?: string
  /**
   * A @fastify/rate-limit store class, e.g. `redisRateLimitStore(client)` for a node-redis client
   * (which the `redis` option cannot take). Takes precedence over `redis`.
   */
  store?: FastifyRateLimitStoreCtor
}

const { FST_SR_LOGIN_RATE_LIMITED } = errorCodes

/**
 * Limits sign-in attempts per client address with @fastify/rate-limit, so that one address cannot
 * lock out many accounts. Behind a proxy, Fastify's `trustProxy` decides what the address is.
 */
export async function loginRateLimit (section: FastifyInstance, options: LoginRateLimitOptions & { max: number }): Promise<preHandlerHookHandler> {
  if (!section.hasDecorator('rateLimit')) {
    const shared = Object.fromEntries(Object.entries({ redis: options.redis, store: options.store, nameSpace: options.nameSpace }).filter(([, v]) => v !== undefined))
    await section.register(rateLimit, { global: false, ...shared })
  }
  return section.rateLimit({
    max: options.max,
    timeWindow: options.timeWindow ?? 15 * 60 * 1000,
    errorResponseBuilder: (_request, context) => new FST_SR_LOGIN_RATE_LIMITED(context.after)
  }) as preHandlerHookHandler
}
