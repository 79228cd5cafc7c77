import { BlockList, isIP } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { errorCodes } from '../errors.js'
import { invalidOption } from '../option-checks.js'
import { TRUST_PROXY_WARNING, warnHostMistakeOnce } from '../warnings.js'

const { FST_SR_BAD_HOST, FST_SR_BAD_PROTOCOL } = errorCodes

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
 * X-Forwarded-Proto/Host count. Only used without `baseUrl`; a malformed Host, or a scheme other than
 * http and https (`X-Forwarded-Proto: javascript`), is refused with a 400.
 */
export function requestOrigin (request: FastifyRequest): string {
  const host = request.host || 'localhost'
  if (!HOST.test(host)) throw new FST_SR_BAD_HOST(JSON.stringify(host.slice(0, 100)))
  // A proxy may write the scheme in capitals; schemes are case-insensitive.
  const scheme = String(request.protocol).toLowerCase()
  if (scheme !== 'http' && scheme !== 'https') throw new FST_SR_BAD_PROTOCOL(JSON.stringify(String(request.protocol).slice(0, 100)))
  return `${scheme}://${host}`
}

/** Whether the site's `baseUrl` is https: its cookies are then always Secure, whatever a request looks like. */
export function isHttpsBase (baseUrl: string | undefined): boolean {
  return baseUrl?.startsWith('https:') === true
}

export function siteOrigin (request: FastifyRequest, baseUrl: string | undefined): string {
  return baseUrl ?? requestOrigin(request)
}

/** A site origin such as `https://www.example.org`; the trailing slash is dropped. */
export function parseBaseUrl (value: unknown, name = 'baseUrl'): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') invalidOption(name, 'must be a string such as "https://www.example.org"')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    invalidOption(name, `${JSON.stringify(value)} is not an absolute URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') invalidOption(name, 'must use http or https')
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    invalidOption(name, `must be an origin only (scheme, host and port), got ${JSON.stringify(value)}`)
  }
  return url.origin
}

/**
 * Fastify's own options as given to `Fastify()`. Fastify leaves `trustProxy` out of `initialConfig`
 * (its documentation says so), and keeps the options under a symbol of its own on the root instance,
 * which every context inherits; undefined where there is none.
 */
export function fastifyOption (instance: object, name: string): unknown {
  for (let o: object | null = instance; o !== null; o = Object.getPrototypeOf(o) as object | null) {
    const key = Object.getOwnPropertySymbols(o).find((symbol) => symbol.description === 'fastify.options')
    if (key !== undefined) return (Reflect.get(o, key) as Record<string, unknown>)[name]
  }
  return undefined
}

const TRUST_PROXY_FIX = 'Set trustProxy to the addresses or CIDRs of your own proxies (such as \'10.0.0.1\' or \'10.0.0.0/8\'), ' +
  'or to a function that checks the proxy\'s address (docs/security.md).'

/** Two public peers, from the documentation ranges (RFC 5737, RFC 3849): no proxy of a real site is one. */
export const PUBLIC_PEERS = ['203.0.113.1', '2001:db8::1'] as const

/**
 * The list Fastify trusts (`'10.0.0.1, 10.0.0.0/8'`, `['fd00::/8']`, `'10.0.0.0/255.0.0.0'`) as a node:net
 * BlockList, which matches as proxy-addr does, IPv4-mapped addresses included. Fastify has already refused
 * a list proxy-addr cannot read, so every entry here is an address, a subnet or one of proxy-addr's names.
 */
function trustedList (entries: readonly unknown[]): BlockList {
  const list = new BlockList()
  for (const entry of entries) {
    const [address, prefix] = String(entry).trim().split('/')
    // proxy-addr's names (loopback, linklocal, uniquelocal) are private ranges.
    if (isIP(address) === 0) continue
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4'
    if (prefix === undefined) list.addAddress(address, family)
    // A prefix length, or an IPv4 netmask: its bits set.
    else list.addSubnet(address, /^\d+$/.test(prefix) ? Number(prefix) : prefix.split('.').reduce((bits, octet) => bits + Number(octet).toString(2).replaceAll('0', '').length, 0), family)
  }
  return list
}

/**
 * Whether a trustProxy setting trusts a public peer, found by asking it (never by reading its spelling):
 * `'0.0.0.0/1,128.0.0.0/1'` trusts everyone as surely as `true`. A function is called with each public
 * peer (one that throws counts as trusting: it would on a request too); a list is matched as proxy-addr does.
 */
function trustsPublicPeer (value: unknown): boolean {
  if (typeof value === 'function') {
    return PUBLIC_PEERS.some((peer) => {
      try {
        return Boolean(value(peer, 0))
      } catch {
        return true
      }
    })
  }
  const entries: unknown[] = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : []
  const list = trustedList(entries)
  return PUBLIC_PEERS.some((peer) => list.check(peer, isIP(peer) === 6 ? 'ipv6' : 'ipv4'))
}

/** What is wrong with a `trustProxy` value, for the log line; undefined when nothing is. */
function trustProxyMistake (value: unknown): string | undefined {
  if (value === true) {
    return 'Fastify\'s trustProxy is true: every client\'s X-Forwarded-For counts, so a visitor chooses its own address ' +
      'for the section\'s login rate limit (and its own X-Forwarded-Proto and X-Forwarded-Host).'
  }
  if (typeof value === 'number' && value > 0) {
    return `Fastify's trustProxy is the hop count ${value}, which Fastify 5 does not accept as trust: it trusts no proxy at all, ` +
      'so every visitor has the proxy\'s address (one login rate limit for the whole site) and looks like plain http ' +
      '(with an https site, the Secure session cookie is never written).'
  }
  const entries: unknown[] = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : []
  const count = entries.find((entry) => /^\s*\d+\s*$/.test(String(entry)))
  if (count !== undefined) {
    return `Fastify's trustProxy ${JSON.stringify(value)} holds ${JSON.stringify(String(count).trim())}, which is read as an IP address ` +
      '(1 is 0.0.0.1), not as a hop count: no real proxy is trusted, so every visitor has the proxy\'s address and looks like plain http.'
  }
  if (!trustsPublicPeer(value)) return undefined
  return `Fastify's trustProxy ${typeof value === 'function' ? '(a function)' : JSON.stringify(value)} trusts a public peer ` +
    `(asked about ${PUBLIC_PEERS.join(' and ')}, it trusts ${typeof value === 'function' ? 'one, or throws' : 'one'}): a visitor ` +
    'connecting from such an address writes its own X-Forwarded-For, and so chooses its address for the section\'s login ' +
    'rate limit (and its own X-Forwarded-Proto and X-Forwarded-Host), as with true.'
}

/** At start-up: says once, with the fix, when Fastify's trustProxy lets clients choose their own address, or trusts nobody by mistake. */
export function warnTrustProxy (fastify: FastifyInstance): void {
  const trustProxy = fastifyOption(fastify, 'trustProxy')
  const mistake = trustProxyMistake(trustProxy)
  if (mistake === undefined) return
  warnHostMistakeOnce(fastify.log, TRUST_PROXY_WARNING, { code: TRUST_PROXY_WARNING, trustProxy }, `${mistake} ${TRUST_PROXY_FIX}`)
}
