import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Catalog } from './catalog.js'
import { accessGuard, grantedAccess, requestedSlug } from './access-guard.js'
import { isSlug } from './catalog.js'
import { sessionTokens } from './csrf.js'
import type { Member } from './member.js'
import type { SectionTarget } from './anonymous-fast-path.js'
import type { SecurityHeaders } from './security-headers.js'
import { releaseUntouchedSession, type MemberLookup } from './member.js'
import { wantsJson, type PageRenderer, type SectionPaths } from './pages.js'
import { applyFilter, resourceFilter } from './filters.js'

const CATEGORY_CACHE_CONTROL = 'private, no-store'

export interface SectionDeps {
  catalog: Catalog
  memberOf: MemberLookup
  pages: PageRenderer
  paths: SectionPaths
  prefix: string
  baseUrl: string | undefined
  loginPath: string
}

/**
 * The section index (open to everyone), the members-only category pages with their filters, and the
 * section's own 404 page for unknown paths under the prefix.
 */
export function sectionRoutes (fastify: FastifyInstance, deps: SectionDeps): void {
  const { catalog, memberOf, pages, paths, prefix } = deps

  async function sectionIndex (request: FastifyRequest, reply: FastifyReply) {
    const member = await memberOf(request) ?? undefined
    if (member === undefined) releaseUntouchedSession(request)
    const categories = await catalog.listCategories()
    reply.header('vary', 'Accept')
    if (wantsJson(request)) {
      return { categories: categories.map((c) => ({ slug: c.slug, title: c.title, description: c.description, url: paths.category(c.slug) })) }
    }
    const ctx = pages.context(member, reply)
    return pages.send(reply, pages.views.index({ categories }, ctx), ctx)
  }

  async function categoryPage (request: FastifyRequest, reply: FastifyReply) {
    // The guard has redirected everyone else, so access is always granted here.
    const { member, category } = grantedAccess(request)!
    const filter = resourceFilter(category, request.query)
    reply.header('cache-control', CATEGORY_CACHE_CONTROL).header('vary', 'Accept')
    if (wantsJson(request)) {
      const { resources: _all, ...summary } = category
      return {
        category: summary,
        resources: applyFilter(category.resources, filter),
        filter: { subject: filter.subject ?? null, year: filter.year ?? null, subjects: filter.subjects, years: filter.years }
      }
    }
    return pages.sendCategory(reply, category, filter, member, pages.csrfToken(member, reply))
  }

  async function notFound (request: FastifyRequest, reply: FastifyReply) {
    reply.code(404).header('vary', 'Accept')
    const member = await memberOf(request) ?? undefined
    if (member === undefined) releaseUntouchedSession(request)
    if (wantsJson(request)) {
      return { statusCode: 404, error: 'Not Found', message: 'There is no page at this address in the resources section.' }
    }
    const ctx = pages.context(member, reply)
    return pages.send(reply, pages.views.notFound({}, ctx), ctx)
  }

  fastify.get(paths.index, sectionIndex)
  // With the host's ignoreTrailingSlash the router already answers the bare prefix.
  if (!fastify.hasRoute({ method: 'GET', url: prefix })) fastify.get(prefix, sectionIndex)

  // A wildcard, so that every shape of slug (too long, nested, odd characters) reaches the guard.
  fastify.get(`${prefix}/resources/*`, {
    onRequest: accessGuard({ memberOf, catalog, baseUrl: deps.baseUrl, loginPath: deps.loginPath, indexPath: paths.index })
  }, categoryPage)

  // Scoped to the prefix: the host's own 404 handling stays in charge everywhere else.
  fastify.register(async function schoolsResourcesNotFound (scoped) {
    scoped.setNotFoundHandler(notFound)
  }, { prefix })
}

export interface MemberPageDeps {
  catalog: Catalog
  pages: PageRenderer
  securityHeaders: SecurityHeaders
  /** Whose CSRF tokens the pages carry: ours, the host's @fastify/csrf-protection, or none (signIn off). */
  csrf: 'plugin' | 'host' | 'none'
}

/**
 * The member fast path's category page (see resourcesSession): for a member read from the store, the
 * same answer the guard and categoryPage give, without a Session. It declines (resolves to false,
 * nothing sent) wherever the normal path answers differently or knows more: a slug that is not a
 * category, JSON, a session without a CSRF secret yet (the normal path makes one and saves it).
 * Undefined when the host's own helmet or CSRF plugin is in charge, whose work it cannot repeat.
 */
export function memberPageServer (deps: MemberPageDeps): SectionTarget['serveMember'] {
  const { catalog, pages, securityHeaders, csrf } = deps
  if (securityHeaders.owner === 'host' || csrf === 'host') return undefined
  const apply = securityHeaders.owner === 'plugin' ? securityHeaders.apply : undefined
  const sessionToken = sessionTokens()
  return async function serveMember (request: FastifyRequest, reply: FastifyReply, member: Member, csrfSecret: string | undefined): Promise<boolean> {
    const slug = requestedSlug(request)
    if (!isSlug(slug) || (csrf === 'plugin' && csrfSecret === undefined) || wantsJson(request)) return false
    const category = await catalog.getCategory(slug)
    if (category === undefined) return false
    apply?.(request, reply)
    const filter = resourceFilter(category, request.query)
    reply.header('cache-control', CATEGORY_CACHE_CONTROL).header('vary', 'Accept')
    pages.sendCategory(reply, category, filter, member, csrf === 'plugin' ? sessionToken(reply, csrfSecret!) : undefined)
    return true
  }
}
