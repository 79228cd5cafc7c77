import Negotiator from 'negotiator'
import type { FastifyRequest } from 'fastify'

const TYPES = ['text/html', 'application/json']
/** How many distinct `Accept` headers keep their answer (browsers and clients send few). */
export const ACCEPT_ANSWERS_KEPT = 256
const answers = new Map<string, boolean>()

/**
 * Plain `Accept` negotiation: HTML unless the client prefers JSON (HTML on a tie, as without the header).
 * Negotiator rather than `accepts`, which loads the whole mime-db to map `html` and `json` to these
 * types. Each distinct header is parsed once (bounded: the oldest answer goes first).
 */
export function wantsJson (request: FastifyRequest): boolean {
  const accept = request.headers.accept
  if (accept === undefined) return false
  let json = answers.get(accept)
  if (json === undefined) {
    json = new Negotiator({ headers: { accept } }).mediaType(TYPES) === 'application/json'
    if (answers.size >= ACCEPT_ANSWERS_KEPT) answers.delete(answers.keys().next().value!)
    answers.set(accept, json)
  }
  return json
}

/** A client that speaks JSON: it prefers JSON, or it sent its request body as JSON. */
export function isJsonClient (request: FastifyRequest): boolean {
  const type = request.headers['content-type']
  return (type !== undefined && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) || wantsJson(request)
}
