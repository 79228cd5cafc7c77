import type { FastifyRequest } from 'fastify'

/**
 * The origin the visitor used, as Fastify sees it: behind a proxy, `trustProxy` decides whether
 * X-Forwarded-Proto/Host count. Without `baseUrl` this ends up in Location headers.
 */
export function requestOrigin (request: FastifyRequest): string {
  return `${request.protocol}://${request.host || 'localhost'}`
}

export function siteOrigin (request: FastifyRequest, baseUrl: string | undefined): string {
  return baseUrl ?? requestOrigin(request)
}
