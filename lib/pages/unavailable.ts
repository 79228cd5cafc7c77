import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../stores/store-unavailable.js'
import { wantsJson } from './negotiation.js'

const MESSAGE = 'This part of the site is briefly unavailable. Please try again in a moment.'

/**
 * Answers a request that needs the store while it is unavailable: 503 with Retry-After and a short
 * message, never a stack, never a page as if signed in, no Set-Cookie (the visitor keeps their cookie,
 * so they are still signed in once the store is back).
 *
 * The answer is written directly (`reply.hijack()`), so no onSend hook runs for it: @fastify/session's
 * onSend would try the failed store again to save a modified session, and a second failure would reach
 * Fastify's fallback handler with the internal message. onResponse hooks still run, and the headers
 * already set on the reply (security headers) are kept.
 */
export function sendStoreUnavailable (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.warn({ code: (error as FastifyError).code, reason: error.message }, 'store unavailable: answering 503')
  const json = wantsJson(request)
  const body = json
    ? JSON.stringify({ statusCode: 503, code: 'FST_SR_STORE_UNAVAILABLE', error: 'Service Unavailable', message: MESSAGE })
    : '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Temporarily unavailable</title></head>' +
      `<body><main><h1>Temporarily unavailable</h1><p>${MESSAGE}</p></main></body></html>`
  const headers: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && name !== 'location' && name !== 'set-cookie') headers[name] = value
  }
  reply.hijack()
  reply.raw.writeHead(503, {
    ...headers,
    'retry-after': String(STORE_RETRY_AFTER_SECONDS),
    'cache-control': 'no-store',
    'content-type': json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body)
  })
  reply.raw.end(request.method === 'HEAD' ? undefined : body)
  return reply
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
