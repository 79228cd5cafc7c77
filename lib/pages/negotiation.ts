import accepts from 'accepts'
import type { FastifyRequest } from 'fastify'

/** Plain `Accept` negotiation: HTML unless the client prefers JSON. */
export function wantsJson (request: FastifyRequest): boolean {
  return accepts(request.raw).type(['html', 'json']) === 'json'
}
