import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Catalog, CategoryWithResources } from './catalog.js'
import { isSlug } from './catalog.js'
import { loginRedirectUrl } from './back-url.js'
import { releaseUntouchedSession, type Member, type MemberLookup } from './member.js'
import { siteOrigin } from './site-origin.js'

export interface AccessGuardDeps {
  memberOf: MemberLookup
  catalog: Catalog
  baseUrl: string | undefined
  loginPath: string
  indexPath: string
}

/** What the guard learnt, for the route handler: it never looks anything up twice. */
export interface GrantedAccess {
  member: Member
  category: CategoryWithResources
}

const granted = new WeakMap<FastifyRequest, GrantedAccess>()

export function grantedAccess (request: FastifyRequest): GrantedAccess | undefined {
  return granted.get(request)
}

/** `resources/<slug>/` or `resources/<slug>` → `<slug>`; anything else is not a slug. */
export function requestedSlug (request: FastifyRequest): string {
  const rest = (request.params as { '*': string })['*']
  return rest.endsWith('/') ? rest.slice(0, -1) : rest
}

/**
 * onRequest hook of the category pages, in the legacy order: an anonymous visitor is sent to the login
 * page, then everyone who cannot see the category is sent to the section index. For an anonymous
 * visitor that second redirect is refused by redirectOnce (with its warning) and the login redirect
 * stands; a member asking for an unknown category lands on the index.
 */
export function accessGuard (deps: AccessGuardDeps): onRequestHookHandler {
  const { memberOf, catalog, indexPath } = deps

  /** True when the request may go on to the page; otherwise it has been redirected. */
  async function admit (request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const member = await memberOf(request) ?? undefined
    const slug = requestedSlug(request)
    // Anonymous visitors cost no lookup and learn nothing about which categories exist.
    const category = member !== undefined && isSlug(slug) ? await catalog.getCategory(slug) : undefined
    if (member !== undefined && category !== undefined) {
      granted.set(request, { member, category })
      return true
    }
    if (member === undefined) {
      releaseUntouchedSession(request)
      answerAnonymous(request, reply, deps)
      return false
    }
    reply.header('cache-control', 'no-store')
    reply.redirectOnce(indexPath)
    return false
  }

  // Callback style on purpose: a redirected request must stop here even while an asynchronous
  // session store is still saving in onSend. Fastify only stops an async hook's chain once
  // reply.sent is true, which that save delays, so the page handler would run and send twice.
  return function schoolsResourcesAccessGuard (request, reply, done) {
    admit(request, reply).then((proceed) => { if (proceed) done() }, done)
  }
}

/**
 * The answer to an anonymous visitor, in the legacy order: the login redirect, then the redirect to the
 * index, which redirectOnce refuses with its warning. Shared with the anonymous fast path.
 */
export function answerAnonymous (request: FastifyRequest, reply: FastifyReply, target: Pick<AccessGuardDeps, 'baseUrl' | 'loginPath' | 'indexPath'>): FastifyReply {
  reply.header('cache-control', 'no-store')
  reply.redirectOnce(loginRedirectUrl(siteOrigin(request, target.baseUrl), target.loginPath, request.url))
  reply.redirectOnce(target.indexPath)
  return reply
}
