import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { answerAnonymous } from './access-guard.js'
import { FST_SR_INVALID_OPTION } from './errors.js'
import type { Member } from './member.js'
import type { StoredMemberReader } from './member-fast-path.js'
import type { ResolvedOptions } from './options.js'

export interface AnonymousFastPathOptions {
  /** The session cookie's name: @fastify/session's `cookieName` option (default `sessionId`). */
  cookieName?: string
}

/** What the section tells the fast path about itself when it is registered (after the session plugin). */
export interface SectionTarget {
  baseUrl: string | undefined
  loginPath: string
  indexPath: string
  sessionKey: string
  /**
   * Sends a member the category page asked for, from what was read in the store; resolves to false
   * (nothing sent) when the normal path must answer instead.
   */
  serveMember?: (request: FastifyRequest, reply: FastifyReply, member: Member, csrfSecret: string | undefined) => Promise<boolean>
}

interface FastPath {
  sections: Map<string, SectionTarget>
  /** Set by resourcesSession, which knows the session plugin's store and signer. */
  members: StoredMemberReader | undefined
}

// Symbol.for, so that the CJS and ESM copies of this package find each other's registration.
const kFastPath = Symbol.for('fastify-schools-resources.anonymousFastPath')
type WithFastPath = FastifyInstance & { [kFastPath]?: FastPath }

/** The route the section's guard sits on: one per section, keyed by its URL pattern. */
function categoryRoute (prefix: string): string {
  return `${prefix}/resources/*`
}

/**
 * The onRequest hook in front of the session plugin: a category request without a session cookie gets
 * the guard's own anonymous answer (login redirect, the refused index redirect and its warning) before
 * the session plugin builds, signs and hashes a session only to throw it away. With `members`, a
 * category request whose session cookie belongs to a stored member gets the page, read from the store
 * without building a Session. Anything else takes the normal path: the session plugin reads the
 * cookie and the guard decides.
 */
export function installFastPath (fastify: FastifyInstance, cookieName: unknown, members?: StoredMemberReader): void {
  if (typeof cookieName !== 'string' || cookieName === '') {
    throw new FST_SR_INVALID_OPTION('cookieName', 'must be the session cookie\'s name, as given to @fastify/session')
  }
  const state: FastPath = { sections: new Map(), members }
  const { sections } = state
  fastify.decorate(kFastPath, state)

  fastify.addHook('onReady', async function anonymousFastPathWired () {
    if (sections.size === 0) {
      throw new Error('fastify-schools-resources: anonymousFastPath or resourcesSession is registered but no resources section was registered after it')
    }
  })

  fastify.addHook('onRequest', function anonymousFastPath (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const url = request.routeOptions.url
    const section = url === undefined ? undefined : sections.get(url)
    if (section === undefined || (request.method !== 'GET' && request.method !== 'HEAD')) {
      done()
      return
    }
    const cookie = sessionCookie(request, cookieName)
    if (cookie === undefined) {
      answerAnonymous(request, reply, section)
      return
    }
    const serveMember = section.serveMember
    if (members === undefined || serveMember === undefined || cookie === true) {
      done()
      return
    }
    members(cookie, section.sessionKey)
      .then((stored) => stored !== undefined && serveMember(request, reply, stored.member, stored.csrfSecret))
      // A failing store, catalog or CSP function would fail the normal path as well: the error goes to
      // the route's error handler now (503 for a store that is down) instead of being met a second time.
      .then((answered) => { if (!answered) done() }, (err: Error) => { done(err) })
  })
}

/**
 * The session cookie as @fastify/cookie parsed it (the session plugin reads the same value); true when
 * the cookie plugin has not run yet but there is a Cookie header; undefined when there is none.
 */
function sessionCookie (request: FastifyRequest, cookieName: string): string | true | undefined {
  const cookies = (request as { cookies?: Record<string, string | undefined> | null }).cookies
  if (cookies === undefined || cookies === null) return request.headers.cookie === undefined ? undefined : true
  const value = cookies[cookieName]
  return value === undefined || value === '' ? undefined : value
}

/**
 * Registered by the host BEFORE @fastify/session (resourcesSession registers it for you, with members):
 * the anonymous answers of the fast path. The section registers itself with it, so no option is repeated.
 */
const anonymousFastPathPlugin: FastifyPluginAsync<AnonymousFastPathOptions> = async (fastify, opts) => {
  installFastPath(fastify, opts.cookieName ?? 'sessionId')
}

/**
 * Called by the section plugin while it registers: tells a fast path registered before it where the
 * section is. Without a fast path this does nothing.
 */
export function registerWithFastPath (fastify: FastifyInstance, opts: Pick<ResolvedOptions, 'prefix' | 'baseUrl' | 'loginPath' | 'getMember' | 'sessionKey'>): SectionTarget | undefined {
  const fastPath = (fastify as WithFastPath)[kFastPath]
  if (fastPath === undefined) return undefined
  if (opts.getMember !== undefined) {
    throw new FST_SR_INVALID_OPTION('getMember', 'cannot be used with anonymousFastPath or resourcesSession, whose fast path decides from the session alone')
  }
  const target: SectionTarget = { baseUrl: opts.baseUrl, loginPath: opts.loginPath, indexPath: `${opts.prefix}/`, sessionKey: opts.sessionKey }
  fastPath.sections.set(categoryRoute(opts.prefix), target)
  return fastPath.members === undefined ? undefined : target
}

export const anonymousFastPath = fp(anonymousFastPathPlugin, {
  fastify: '5.x',
  name: 'fastify-schools-resources-anonymous-fast-path'
})
