import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify'
import type { AnonymousRedirect, Catalog, CategoryWithResources, Member } from '../types.js'
import { answerAnonymous, targetTooLong } from '../redirect/login-redirect.js'
import type { MemberLookup } from '../session/member.js'
import { isSlug } from './catalog.js'

export interface AccessGuardDeps extends AnonymousRedirect {
  memberOf: MemberLookup
  catalog: Catalog
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
function requestedSlug (request: FastifyRequest): string {
  const rest = (request.params as { '*': string })['*']
  return rest.endsWith('/') ? rest.slice(0, -1) : rest
}

/**
 * The category pages' own preHandler: the last hook before the page, so that every hook the host
 * registered (onRequest to preHandler: an MFA gate, a suspension check) has run before anyone, member or
 * not, gets an answer from the section. In the legacy order: an anonymous visitor is sent to the login
 * page, then everyone who cannot see the category is sent to the section index. For an anonymous
 * visitor that second redirect is refused by redirectOnce (with its warning) and the login redirect
 * stands; a member asking for an unknown category lands on the index.
 */
export function accessGuard (deps: AccessGuardDeps): preHandlerHookHandler {
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
    const tooLong = targetTooLong(request)
    if (tooLong !== undefined) {
      done(tooLong)
      return
    }
    admit(request, reply).then((proceed) => { if (proceed) done() }, done)
  }
}
