import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Catalog, FileResource, Member } from '../types.js'
import type { MemberLookup } from '../session/member.js'
import { wantsJson } from '../pages/negotiation.js'
import { isFileResource } from '../pages/views.js'
import type { PageRenderer, SectionPaths } from '../pages/page-renderer.js'
import type { ResourceFilter } from '../pages/filters.js'
import { asksForPage, pageHref, pagination, type PageWindow } from '../pages/pagination.js'
import { grantedAccess } from '../access/access-guard.js'
import { guardedAnswers, membersOnlyRoute, type MembersOnlyDeps } from '../access/members-only-kit.js'
import { page, redirect, routeSchema, STORE_DOWN, type OpenApi, type RouteDoc } from '../pages/openapi.js'
import { isSlug } from './catalog.js'
import { readCategory, readIndex, type CategoryRead } from './catalog-reads.js'
import { noteSessionEnd } from '../session/timeouts.js'
import { answerLanguageOf } from '../pages/answer-language.js'

// Every page here depends on the session (the member's name, the logout token), so no cache keeps any.
const PRIVATE = 'private, no-store'

// The JSON answers' documented fields (docs/pages-and-views.md#json), as response schemas: Fastify's
// serializer writes these fields only, and a host's @fastify/swagger can describe the routes. The
// records are the catalog boundary's copies, which carry these fields only, so a host serializer that
// ignores schemas (setReplySerializer) sends nothing more either.
const STRING = { type: 'string' } as const
const STRINGS = { type: 'array', items: STRING } as const
const OPTIONAL_STRING = { type: ['string', 'null'] } as const
const OPTIONAL_INTEGER = { type: ['integer', 'null'] } as const

// Present when the client asked for a page (`?start=`): docs/pages-and-views.md#pages.
const PAGE_JSON = {
  type: 'object',
  required: ['start', 'size', 'total', 'prev', 'next'],
  properties: { start: { type: 'integer' }, size: { type: 'integer' }, total: { type: 'integer' }, prev: OPTIONAL_INTEGER, next: OPTIONAL_INTEGER }
} as const

const INDEX_JSON = {
  type: 'object',
  required: ['categories'],
  properties: {
    categories: {
      type: 'array',
      items: {
        type: 'object',
        required: ['slug', 'title', 'description', 'url', 'locked'],
        properties: { slug: STRING, title: STRING, description: STRING, url: STRING, locked: { type: 'boolean' } }
      }
    },
    page: PAGE_JSON
  }
} as const

const CATEGORY_JSON = {
  type: 'object',
  required: ['category', 'resources', 'filter'],
  properties: {
    category: {
      type: 'object',
      required: ['slug', 'title', 'description'],
      properties: { slug: STRING, title: STRING, description: STRING, audience: STRINGS }
    },
    resources: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'title', 'summary', 'url', 'subject', 'yearLevels', 'format'],
        properties: { id: STRING, title: STRING, summary: STRING, url: STRING, subject: STRING, yearLevels: STRINGS, format: STRING }
      }
    },
    filter: {
      type: 'object',
      required: ['subject', 'year', 'subjects', 'years'],
      properties: { subject: OPTIONAL_STRING, year: OPTIONAL_STRING, subjects: STRINGS, years: STRINGS }
    },
    page: PAGE_JSON
  }
} as const

/** The members-only kit's deps (memberOf, pages, anonymous, sessionDecides, restrictedCategories) and the section's own. */
export interface SectionDeps extends MembersOnlyDeps {
  catalog: Catalog
  /** Where links point (under the register prefix). */
  paths: SectionPaths
  /** The section's own path, as its routes are registered (Fastify puts the register prefix in front). */
  prefix: string
  /** How many categories a page of the index, and resources a page of a category, shows. */
  pageSize: number
  /** Hidden from a host's @fastify/swagger, or shown under a tag (pages/openapi.ts). */
  openapi: OpenApi
}

function fileAsUrl ({ file: _file, ...fields }: FileResource, url: string) {
  return { ...fields, url }
}

/** A JSON answer's `page`: where the page asked for sits in the whole list. */
function pageJson ({ start, size, total, prev, next }: PageWindow) {
  return { start, size, total, prev: prev ?? null, next: next ?? null }
}

/** The filters a page's links keep, by their query names. */
function filterParams (filter: ResourceFilter): Record<string, string | undefined> {
  return { subject: filter.subject, year: filter.year }
}

/**
 * The section's 404: its page, or JSON for JSON clients. Sends the answer itself, so that a guard can use
 * it; a caller that already knows the member (the guard, the download) passes it, the router does not.
 */
export function notFoundAnswer ({ memberOf, pages }: { memberOf: MemberLookup, pages: PageRenderer }) {
  return async function notFound (request: FastifyRequest, reply: FastifyReply, known?: Member): Promise<FastifyReply> {
    // Not a download (a file that vanished after it was checked): the browser must not save this page as it.
    reply.removeHeader('content-disposition')
    reply.code(404).header('cache-control', PRIVATE).header('vary', 'Accept')
    const member = known ?? await memberOf(request) ?? undefined
    if (wantsJson(request)) {
      // The section's language, from the context it was registered in (the file routes' too).
      const message = await answerLanguageOf(request).say(reply, { key: 'error.notFound' })
      return reply.send({ statusCode: 404, error: 'Not Found', message })
    }
    const ctx = pages.context(member, reply)
    return pages.sendView(reply, 'notFound', {}, ctx)
  }
}

/**
 * The section index (open to everyone), the members-only category pages with their filters, and the
 * section's own 404 page for unknown paths under the prefix.
 */
export function sectionRoutes (fastify: FastifyInstance, deps: SectionDeps): void {
  const { catalog, memberOf, pages, paths, prefix } = deps

  async function sectionIndex (request: FastifyRequest, reply: FastifyReply) {
    // With the reply: a remembered device is signed in here too.
    const member = await memberOf(request, reply) ?? undefined
    // A member a timeout signed out here is told so on the login page, as on a members-only page.
    if (member === undefined) noteSessionEnd(request, reply, paths.login)
    const json = wantsJson(request)
    // JSON is paged only when asked (`?start=`): JSON clients written before paging still get the whole list.
    const paged = !json || asksForPage(request.query)
    const { categories, window } = await readIndex(catalog, request.query, deps.pageSize, !paged, member, deps.restrictedCategories)
    reply.header('cache-control', PRIVATE).header('vary', 'Accept')
    if (json) {
      const listed = categories.map((c) => ({ slug: c.slug, title: c.title, description: c.description, url: paths.category(c.slug), locked: c.locked }))
      return paged ? { categories: listed, page: pageJson(window) } : { categories: listed }
    }
    const ctx = pages.context(member, reply)
    const shown = pagination(window, (start) => pageHref(paths.index, {}, start))
    return pages.sendView(reply, 'index', { categories, ...(shown === undefined ? {} : { pagination: shown }) }, ctx)
  }

  async function categoryPage (request: FastifyRequest, reply: FastifyReply) {
    // The guard has redirected everyone else, so access is always granted here.
    const { member, target } = grantedAccess<CategoryRead>(request)!
    const { category, resources, filter, window } = target
    reply.header('cache-control', PRIVATE).header('vary', 'Accept')
    if (wantsJson(request)) {
      const { resources: _all, ...summary } = category
      const answer = {
        category: summary,
        // A file resource's path on disk stays ours: JSON clients get its download address as its url.
        resources: resources.map((r) => isFileResource(r) ? fileAsUrl(r, paths.file(category.slug, r)) : r),
        filter: { subject: filter.subject ?? null, year: filter.year ?? null, subjects: filter.subjects, years: filter.years }
      }
      // The route read every matching resource unless the query asked for a page (findCategory).
      return asksForPage(request.query) ? { ...answer, page: pageJson(window) } : answer
    }
    const here = paths.category(category.slug)
    const data = { category, resources, filter, count: target.count, pagination: pagination(window, (start) => pageHref(here, filterParams(filter), start)) }
    if (target.cacheable) return pages.sendCategory(reply, data, window.start, member)
    // A host's page of its own (a paged read): rendered for this request only, as it may change on the next.
    return pages.sendView(reply, 'category', data, pages.context(member, reply))
  }

  const notFound = notFoundAnswer(deps)

  const index: RouteDoc = {
    summary: 'The section index',
    description: 'Every category, for everyone; a member outside a category\'s audience sees it marked as locked (or not at all, with restrictedCategories: \'hide\'). HTML, or JSON for a client that prefers it (Accept). Paged by the query\'s start (an offset; pageSize a page); JSON is paged only when start is given.',
    answers: { 200: page('OK: the index page, or its categories as JSON', INDEX_JSON), 503: STORE_DOWN }
  }
  fastify.get(`${prefix}/`, { schema: routeSchema(deps.openapi, index, INDEX_JSON) }, sectionIndex)
  // With the host's ignoreTrailingSlash the router already answers the bare prefix (hasRoute takes the
  // whole path, register prefix included).
  if (!fastify.hasRoute({ method: 'GET', url: paths.index.slice(0, -1) })) fastify.get(prefix, { schema: routeSchema(deps.openapi, index, INDEX_JSON) }, sectionIndex)

  /** `resources/<slug>/` or `resources/<slug>` → the category; any other shape is no category. */
  function findCategory (request: FastifyRequest): Promise<CategoryRead | undefined> | undefined {
    const rest = (request.params as { '*': string })['*']
    const slug = rest.endsWith('/') ? rest.slice(0, -1) : rest
    // One read for the guard and the page: the page the query asks for, or (JSON asking for no page) every resource.
    return isSlug(slug) ? readCategory(catalog, slug, request.query, deps.pageSize, wantsJson(request) && !asksForPage(request.query)) : undefined
  }

  // In the legacy order: a member asking for a category that does not exist lands on the section index.
  function toIndex (_request: FastifyRequest, reply: FastifyReply) {
    reply.header('cache-control', 'no-store')
    reply.redirectOnce(paths.index)
  }

  // A wildcard, so that every shape of slug (too long, nested, odd characters) reaches the guard. The
  // config marks the route for the anonymous short-circuit, which may then answer requests without a
  // session cookie first; not when the host's getMember decides, whose members may have no such cookie.
  const category: RouteDoc = {
    summary: 'A category page (members only)',
    description: 'The category\'s resources, filtered by the query\'s subject and year (both optional) and paged by its start (an offset; JSON is paged only when start is given). HTML, or JSON for a client that prefers it (Accept). A member asking for a category that does not exist is sent to the section index.',
    wildcard: 'The category\'s slug and a slash: maths/',
    answers: {
      200: page('OK: the category page, or the category, its filtered resources and the filter as JSON', CATEGORY_JSON),
      ...guardedAnswers(deps),
      302: redirect('Found: a visitor who is not signed in goes to the login page, BackURL naming this address; a member asking for a category that does not exist (or, with restrictedCategories: \'hide\', one outside their audience) to the section index')
    }
  }
  fastify.get(`${prefix}/resources/*`, {
    schema: routeSchema(deps.openapi, category, CATEGORY_JSON),
    ...membersOnlyRoute(deps, findCategory, toIndex)
  }, categoryPage)

  // Scoped to the prefix: the host's own 404 handling stays in charge everywhere else.
  fastify.register(async function schoolsResourcesNotFound (scoped) {
    scoped.setNotFoundHandler(notFound)
  }, { prefix })
}
