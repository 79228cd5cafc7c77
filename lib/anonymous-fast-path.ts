import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { answerAnonymous } from './access-guard.js'
import { FST_SR_INVALID_OPTION } from './errors.js'
import type { ResolvedOptions } from './options.js'

export interface AnonymousFastPathOptions {
  /** The session cookie's name: @fastify/session's `cookieName` option (default `sessionId`). */
  cookieName?: string
}

/** What the section tells the fast path about itself when it is registered (after the session plugin). */
interface SectionTarget {
  baseUrl: string | undefined
  loginPath: string
  indexPath: string
}

// Symbol.for, so that the CJS and ESM copies of this package find each other's registration.
const kFastPath = Symbol.for('fastify-schools-resources.anonymousFastPath')
type WithFastPath = FastifyInstance & { [kFastPath]?: Map<string, SectionTarget> }

/** The route the section's guard sits on: one per section, keyed by its URL pattern. */
function categoryRoute (prefix: string): string {
  return `${prefix}/resources/*`
}

/**
 * Registered by the host BEFORE @fastify/session: answers a category request that carries no session
 * cookie with the guard's own anonymous answer (login redirect, the refused index redirect and its
 * warning) before the session plugin builds, signs and hashes a session only to throw it away.
 * A request with a session cookie, valid or not, takes the normal path: the session plugin reads it and
 * the guard decides. The section registers itself with the fast path, so no option is repeated.
 */
const anonymousFastPathPlugin: FastifyPluginAsync<AnonymousFastPathOptions> = async (fastify, opts) => {
  const cookieName = opts.cookieName ?? 'sessionId'
  if (typeof cookieName !== 'string' || cookieName === '') {
    throw new FST_SR_INVALID_OPTION('cookieName', 'must be the session cookie\'s name, as given to @fastify/session')
  }
  const sections = new Map<string, SectionTarget>()
  fastify.decorate(kFastPath, sections)

  fastify.addHook('onReady', async function anonymousFastPathWired () {
    if (sections.size === 0) {
      throw new Error('fastify-schools-resources: anonymousFastPath is registered but no resources section was registered after it')
    }
  })

  fastify.addHook('onRequest', function anonymousFastPath (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const url = request.routeOptions.url
    const section = url === undefined ? undefined : sections.get(url)
    if (section === undefined || (request.method !== 'GET' && request.method !== 'HEAD') || hasSessionCookie(request, cookieName)) {
      done()
      return
    }
    answerAnonymous(request, reply, section)
  })
}

/**
 * Whether the request may carry a session: the cookie as @fastify/cookie parsed it (the session plugin
 * reads the same value), or, when the cookie plugin has not run yet, any Cookie header at all.
 */
function hasSessionCookie (request: FastifyRequest, cookieName: string): boolean {
  const cookies = (request as { cookies?: Record<string, string | undefined> | null }).cookies
  if (cookies === undefined || cookies === null) return request.headers.cookie !== undefined
  return Boolean(cookies[cookieName])
}

/**
 * Called by the section plugin while it registers: tells a fast path registered before it where the
 * section is. Without a fast path this does nothing.
 */
export function registerWithFastPath (fastify: FastifyInstance, opts: Pick<ResolvedOptions, 'prefix' | 'baseUrl' | 'loginPath' | 'getMember'>): void {
  const sections = (fastify as WithFastPath)[kFastPath]
  if (sections === undefined) return
  if (opts.getMember !== undefined) {
    throw new FST_SR_INVALID_OPTION('getMember', 'cannot be used with anonymousFastPath, which decides from the session cookie alone')
  }
  sections.set(categoryRoute(opts.prefix), { baseUrl: opts.baseUrl, loginPath: opts.loginPath, indexPath: `${opts.prefix}/` })
}

export const anonymousFastPath = fp(anonymousFastPathPlugin, {
  fastify: '5.x',
  name: 'fastify-schools-resources-anonymous-fast-path'
})
