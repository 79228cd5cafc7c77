import fp from 'fastify-plugin'
import { validateHeaderValue } from 'node:http'
import { inspect } from 'node:util'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { FST_SR_INVALID_REDIRECT_CODE, FST_SR_INVALID_REDIRECT_URL, REDIRECT_CONFLICT_WARNING } from './errors.js'
import { requestOrigin } from './site-origin.js'
import { emitProcessWarning } from './process-warning.js'
import { parseBaseUrl } from './options.js'

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Redirects unless this reply is already directed elsewhere. A different target is refused with a
     * `UserWarning` and `undefined`; the same target (after resolving both against the site's base URL)
     * redirects once and returns the reply.
     */
    redirectOnce(url: string, code?: number): FastifyReply | undefined
  }
}

export interface RedirectOnceOptions {
  /** Origin used to decide whether two targets are the same URL (default: the request's own origin). */
  baseUrl?: string
}

export const REDIRECT_STATUS_CODES: ReadonlySet<number> = new Set([300, 301, 302, 303, 307, 308])

// Symbol.for, so that two copies of this package (CJS and ESM) share the per-reply state.
const kRedirectedTo = Symbol.for('fastify-schools-resources.redirectedTo')
type GuardedReply = FastifyReply & { [kRedirectedTo]: string | null }

function assertRedirectable (url: unknown, code: unknown): asserts url is string {
  if (typeof code !== 'number' || !REDIRECT_STATUS_CODES.has(code)) {
    throw new FST_SR_INVALID_REDIRECT_CODE(inspect(code))
  }
  if (typeof url !== 'string' || url === '') {
    throw new FST_SR_INVALID_REDIRECT_URL(inspect(url))
  }
  try {
    validateHeaderValue('location', url)
  } catch {
    throw new FST_SR_INVALID_REDIRECT_URL(inspect(url))
  }
}

function sameTarget (a: string, b: string, base: string): boolean {
  if (a === b) return true
  try {
    return new URL(a, base).href === new URL(b, base).href
  } catch {
    return false
  }
}

function redirectOnce (reply: GuardedReply, url: string, code: number, baseUrl: string | undefined): FastifyReply | undefined {
  assertRedirectable(url, code)
  // Our own record first: after a send, Fastify lets later reply.redirect() calls rewrite the header.
  const redirectedTo = reply[kRedirectedTo]
  const header = reply.getHeader('location')
  const existing = redirectedTo ?? (header === undefined ? undefined : String(header))
  if (existing !== undefined) {
    if (!sameTarget(existing, url, baseUrl ?? requestOrigin(reply.request))) {
      const message = `Already directed to ${existing}; now trying to direct to ${url}`
      emitProcessWarning(message, 'UserWarning', REDIRECT_CONFLICT_WARNING)
      reply.log.warn({ existingLocation: existing, refusedLocation: url, code: REDIRECT_CONFLICT_WARNING }, message)
      return undefined
    }
    if (redirectedTo !== null || reply.sent || reply.raw.headersSent) return reply
  }
  reply[kRedirectedTo] = url
  return reply.redirect(url, code)
}

const redirectOncePlugin: FastifyPluginAsync<RedirectOnceOptions> = async (fastify, opts) => {
  // Registering twice (the host and the section plugin both do) keeps the first decorator.
  if (fastify.hasReplyDecorator('redirectOnce')) return
  const baseUrl = parseBaseUrl(opts.baseUrl)
  fastify.decorateReply(kRedirectedTo, null)
  fastify.decorateReply('redirectOnce', function (this: FastifyReply, url: string, code = 302) {
    return redirectOnce(this as GuardedReply, url, code, baseUrl)
  })
}

export default fp(redirectOncePlugin, { fastify: '5.x', name: 'fastify-schools-resources-redirect-once' })
