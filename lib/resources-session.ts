import fp from 'fastify-plugin'
import fastifySession, { MemoryStore, type FastifySessionOptions } from '@fastify/session'
import { Signer } from '@fastify/cookie'
import type { FastifyPluginAsync } from 'fastify'
import { installFastPath } from './anonymous-fast-path.js'
import { FST_SR_INVALID_OPTION } from './errors.js'
import { storedMemberReader, type SessionSigner } from './member-fast-path.js'

/** @fastify/session's own options, passed to it unchanged. */
export type ResourcesSessionOptions = FastifySessionOptions

/** The signer @fastify/session would build from `secret`, built here so that the fast path shares it. */
function signerFor (options: FastifySessionOptions): SessionSigner {
  const { secret, algorithm = 'sha256' } = options
  // The checks @fastify/session makes of a string or an array; it cannot make them of a signer object.
  if (typeof secret === 'string') {
    if (secret.length < 32) throw new FST_SR_INVALID_OPTION('secret', 'must have 32 or more characters')
    return new Signer(secret, algorithm)
  }
  if (Array.isArray(secret)) {
    if (secret.length === 0) throw new FST_SR_INVALID_OPTION('secret', 'must hold at least one secret')
    // The array itself, so that rotating secrets in it (as @fastify/session allows) still works.
    return new Signer(secret, algorithm)
  }
  if (secret === null || typeof secret !== 'object' || typeof secret.sign !== 'function' || typeof secret.unsign !== 'function') {
    throw new FST_SR_INVALID_OPTION('secret', 'must be a string of 32 or more characters, an array of them, or a signer object with sign() and unsign()')
  }
  return secret
}

/**
 * Registers @fastify/session with the given options, behind the section's fast path, so that the fast
 * path reads sessions with the session plugin's own store and signer. Register it after
 * @fastify/cookie and before the section plugin, in place of @fastify/session.
 *
 * - Anonymous category requests are answered as with `anonymousFastPath`.
 * - A member's GET for a category page is answered from the stored session, without building a
 *   @fastify/session Session (an object, a copy and two SHA-256 hashes per request): only when
 *   `rolling` is false (with rolling sessions every page must be saved again), without
 *   `cookiePrefix`, and with the cookie on path `/`. Everything else, and anything unusual (see
 *   member-fast-path.ts and memberPageServer), takes the normal path.
 *
 * A request answered by the fast path runs none of the hooks registered after this plugin before the
 * reply (onRequest, preParsing, preValidation, preHandler, the session plugin's own): only onSend,
 * onResponse and error hooks, with request.session not set.
 */
const resourcesSessionPlugin: FastifyPluginAsync<ResourcesSessionOptions> = async (fastify, options) => {
  const signer = signerFor(options)
  // One store for both, so that the fast path reads exactly what the session plugin wrote.
  const store = options.store ?? new MemoryStore()
  const cookiePath = options.cookie?.path ?? '/'
  const readsMembers = options.rolling === false && (options.cookiePrefix ?? '') === '' && cookiePath === '/'
  installFastPath(fastify, options.cookieName ?? 'sessionId', readsMembers ? storedMemberReader(signer, store) : undefined)
  await fastify.register(fastifySession, { ...options, secret: signer, store })
}

export const resourcesSession = fp(resourcesSessionPlugin, {
  fastify: '5.x',
  name: 'fastify-schools-resources-session',
  dependencies: ['@fastify/cookie']
})
