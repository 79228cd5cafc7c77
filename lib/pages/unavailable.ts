import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../stores/store-unavailable.js'
import { sendJsonError, wantsJson } from './negotiation.js'

const MESSAGE = 'This part of the site is briefly unavailable. Please try again in a moment.'

/**
 * Answers a request that needs the store while it is unavailable: 503 with Retry-After and a short
 * message, never a stack, never a page as if signed in, no Set-Cookie (the visitor keeps their cookie,
 * so they are still signed in once the store is back).
 */
export function sendStoreUnavailable (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.warn({ code: (error as FastifyError).code, reason: error.message }, 'store unavailable: answering 503')
  reply.removeHeader('location')
  reply.removeHeader('set-cookie')
  reply.code(503).header('retry-after', String(STORE_RETRY_AFTER_SECONDS)).header('cache-control', 'no-store')
  if (wantsJson(request)) return sendJsonError(reply, 503, 'FST_SR_STORE_UNAVAILABLE', MESSAGE)
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
