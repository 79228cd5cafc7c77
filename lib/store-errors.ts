import createError from '@fastify/error'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { wantsJson } from './pages.js'

/** A shared store (sessions, counters) failed or did not answer in time; the request cannot be served. */
export const FST_SR_STORE_UNAVAILABLE = createError<[string]>(
  'FST_SR_STORE_UNAVAILABLE',
  'fastify-schools-resources: the store is unavailable: %s',
  503
)

/** Seconds a client is told to wait before trying again. */
export const STORE_RETRY_AFTER_SECONDS = 5

// node-redis and ioredis error classes raised while the connection is down, closed or stuck.
const CLIENT_ERROR_NAMES = new Set([
  'ClientClosedError', 'ClientOfflineError', 'ConnectionTimeoutError', 'SocketClosedUnexpectedlyError',
  'ReconnectStrategyError', 'SocketTimeoutError', 'TimeoutError', 'AbortError', 'MaxRetriesPerRequestError'
])
// Node's network error codes.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

/**
 * Whether `error` means the store could not be reached: our own FST_SR_STORE_UNAVAILABLE (raised by the
 * Redis stores of this package) or a Redis client's connection error, as a store from elsewhere
 * (connect-redis, a host's own) would pass it on.
 */
export function isStoreUnavailable (error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false
  const { code, name } = error as { code?: unknown, name?: unknown }
  return code === 'FST_SR_STORE_UNAVAILABLE' ||
    (typeof name === 'string' && CLIENT_ERROR_NAMES.has(name)) ||
    (typeof code === 'string' && NETWORK_CODES.has(code))
}

const MESSAGE = 'This part of the site is briefly unavailable. Please try again in a moment.'

/**
 * Answers a request that needs the store while it is unavailable: 503 with Retry-After and a short
 * message, never a stack, never a page as if signed in, no Set-Cookie (the visitor keeps their cookie,
 * so they are still signed in once the store is back).
 */
export function sendStoreUnavailable (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.warn({ code: (error as FastifyError).code, reason: error.message }, 'store unavailable: answering 503')
  // Nothing can be saved now: stop the session plugin from trying again in onSend.
  ;(request as unknown as { session: null }).session = null
  reply.removeHeader('location')
  reply.removeHeader('set-cookie')
  reply.code(503).header('retry-after', String(STORE_RETRY_AFTER_SECONDS)).header('cache-control', 'no-store')
  if (wantsJson(request)) {
    return reply.send({ statusCode: 503, code: 'FST_SR_STORE_UNAVAILABLE', error: 'Service Unavailable', message: MESSAGE })
  }
  return reply.type('text/html; charset=utf-8').send(
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Temporarily unavailable</title></head>' +
    `<body><main><h1>Temporarily unavailable</h1><p>${MESSAGE}</p></main></body></html>`
  )
}

/**
 * An error handler that answers store failures with {@link sendStoreUnavailable} and passes every other
 * error on to the enclosing handler. The plugin installs it around its own routes; a host can install it
 * for its routes too.
 */
export function storeErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!isStoreUnavailable(error)) throw error
  return sendStoreUnavailable(error, request, reply)
}
