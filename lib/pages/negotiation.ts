import { STATUS_CODES } from 'node:http'
import accepts from 'accepts'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** Plain `Accept` negotiation: HTML unless the client prefers JSON. */
export function wantsJson (request: FastifyRequest): boolean {
  return accepts(request.raw).type(['html', 'json']) === 'json'
}

/** A client that speaks JSON: it prefers JSON, or it sent its request body as JSON. */
export function isJsonClient (request: FastifyRequest): boolean {
  const type = request.headers['content-type']
  return (type !== undefined && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) || wantsJson(request)
}

/** An error answer in JSON, shaped as Fastify's own: `{ statusCode, code, error, message }`. */
export function sendJsonError (reply: FastifyReply, statusCode: number, code: string, message: string): FastifyReply {
  return reply.code(statusCode).send({ statusCode, code, error: STATUS_CODES[statusCode], message })
}
