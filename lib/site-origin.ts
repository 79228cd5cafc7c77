import type { FastifyRequest } from 'fastify'
import { FST_SR_BAD_HOST } from './errors.js'

// A host name, IPv4 or bracketed IPv6 address, and an optional port: nothing that could carry a path.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::\d{1,5})?$/

/**
 * The origin the visitor used, as Fastify sees it: behind a proxy, `trustProxy` decides whether
 * X-Forwarded-Proto/Host count. Only used without `baseUrl`; a malformed Host is refused with a 400.
 */
export function requestOrigin (request: FastifyRequest): string {
  const host = request.host || 'localhost'
  if (!HOST.test(host)) throw new FST_SR_BAD_HOST(JSON.stringify(host.slice(0, 100)))
  return `${request.protocol}://${host}`
}

export function siteOrigin (request: FastifyRequest, baseUrl: string | undefined): string {
  return baseUrl ?? requestOrigin(request)
}
