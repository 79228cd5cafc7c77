import type { FastifyRequest } from 'fastify'
import { errorCodes } from '../errors.js'

const { FST_SR_BAD_HOST, FST_SR_INVALID_OPTION } = errorCodes

/**
 * C0 and C1 controls, DEL, and backslashes: browsers drop tabs and newlines from an address and read
 * "\" as "/" in http(s) URLs, so `/\evil.example` or `/<TAB>/evil.example` lead to another site.
 * Refused in return addresses and in a catalog's links.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const UNSAFE_URL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\\]/

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

/** A site origin such as `https://www.example.org`; the trailing slash is dropped. */
export function parseBaseUrl (value: unknown, name = 'baseUrl'): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new FST_SR_INVALID_OPTION(name, 'must be a string such as "https://www.example.org"')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new FST_SR_INVALID_OPTION(name, `${JSON.stringify(value)} is not an absolute URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FST_SR_INVALID_OPTION(name, 'must use http or https')
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new FST_SR_INVALID_OPTION(name, `must be an origin only (scheme, host and port), got ${JSON.stringify(value)}`)
  }
  return url.origin
}
