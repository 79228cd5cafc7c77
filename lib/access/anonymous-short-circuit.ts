import fp from 'fastify-plugin'
import type { FastifyContextConfig, FastifyPluginCallback, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { AnonymousRedirect } from '../types.js'
import { errorCodes } from '../errors.js'
import { invalidOption } from '../option-checks.js'
import { kAnonymousRedirect } from '../symbols.js'
import { answerAnonymous, targetTooLong } from './anonymous-answer.js'
import { FASTIFY_SESSION, SECURE_SESSION } from '../session/session-adapter.js'
import { hasRememberCookie } from '../session/remember-me.js'

const { FST_SR_NO_SECTION, FST_SR_PLUGIN_ORDER } = errorCodes

export interface AnonymousShortCircuitOptions {
  /**
   * The session cookie's name: the session plugin's `cookieName` option (default: `sessionId`, or `session`
   * when @fastify/secure-session is the only session plugin registered).
   */
  cookieName?: string
}

/**
 * The session cookie's name from a `cookieName` option (this plugin's and the section's, which expires
 * the cookie at a sign-out during a store outage), checked; unset, the session plugin's default applies.
 */
export function sessionCookieName (name: unknown): string {
  if (typeof name !== 'string' || name === '' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) {
    invalidOption('cookieName', 'must be the session cookie\'s name, as given to @fastify/session')
  }
  return name
}

/**
 * Whether the request carries a session cookie (or a remember cookie), as @fastify/cookie parsed it. When the cookie plugin
 * has not parsed anything (its hook is set to run later), any Cookie header counts: the request then
 * takes the normal path, where the session plugin decides.
 */
function hasSessionCookie (request: FastifyRequest, cookieName: string): boolean {
  const cookies = (request as { cookies?: Record<string, string | undefined> }).cookies
  if (cookies === undefined || cookies === null) return request.headers.cookie !== undefined
  const value = cookies[cookieName]
  // A remembered device has no session yet: the section signs it in (session/remember-me.ts).
  return (value !== undefined && value !== '') || hasRememberCookie(cookies)
}

/**
 * The route config that lets the short-circuit answer a members-only route's visitors with `target`. None
 * when the host's getMember decides who is signed in: its members may carry no session cookie.
 */
export function shortCircuitMark (target: AnonymousRedirect, sessionDecides: boolean): FastifyContextConfig {
  return sessionDecides ? { [kAnonymousRedirect]: target } : {}
}

/**
 * Opt-in, registered after @fastify/cookie and before @fastify/session: a GET or HEAD for a
 * section's category page that carries no session cookie gets the section's login redirect here,
 * before @fastify/session builds a session only to throw it away. The route is recognised by the
 * route config the section puts on it, so any register prefix works. Requests with a session cookie,
 * and every other route, take the normal path; nothing here ever serves a page. docs/session-wiring.md
 * lists the hooks its answers skip.
 */
const anonymousShortCircuitPlugin: FastifyPluginCallback<AnonymousShortCircuitOptions> = (fastify, opts, done) => {
  let cookieName: string | undefined
  try {
    cookieName = opts.cookieName === undefined ? undefined : sessionCookieName(opts.cookieName)
  } catch (err) {
    done(err as Error)
    return
  }
  // Behind the session plugin this would change nothing; say so rather than do nothing silently.
  if (fastify.hasRequestDecorator('session')) {
    done(new FST_SR_PLUGIN_ORDER())
    return
  }

  let sectionRoutes = 0
  fastify.addHook('onRoute', function countSectionRoutes (route) {
    if (route.config?.[kAnonymousRedirect] !== undefined) sectionRoutes++
  })
  fastify.addHook('onReady', function anonymousShortCircuitWired (ready) {
    // The session plugin comes after this one: by now it is registered, and its default cookie is known.
    cookieName ??= fastify.hasPlugin(SECURE_SESSION) && !fastify.hasPlugin(FASTIFY_SESSION) ? 'session' : 'sessionId'
    ready(sectionRoutes === 0 ? new FST_SR_NO_SECTION() : undefined)
  })

  fastify.addHook('onRequest', function anonymousShortCircuit (request: FastifyRequest, reply: FastifyReply, next: HookHandlerDoneFunction) {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      next()
      return
    }
    const target = request.routeOptions.config[kAnonymousRedirect]
    if (target === undefined || hasSessionCookie(request, cookieName!)) {
      next()
      return
    }
    const tooLong = targetTooLong(request)
    if (tooLong !== undefined) reply.send(tooLong)
    else answerAnonymous(request, reply, target)
  })
  done()
}

export const anonymousShortCircuit = fp(anonymousShortCircuitPlugin, {
  fastify: '5.x',
  name: 'fastify-schools-resources-anonymous-short-circuit'
})
