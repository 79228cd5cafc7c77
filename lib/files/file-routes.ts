import { constants } from 'node:fs'
import { access, realpath, stat } from 'node:fs/promises'
import { isAbsolute, join, relative, sep } from 'node:path'
import type { SendOptions } from '@fastify/static'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Catalog, FileResource } from '../types.js'
import { optionalPeer } from '../errors.js'
import { grantedAccess } from '../access/access-guard.js'
import { guardedAnswers, membersOnlyRoute, type MembersOnlyDeps } from '../access/members-only-kit.js'
import { isSlug } from '../section/catalog.js'
import { notFoundAnswer } from '../section/section-routes.js'
import { file, hostError, noBody, page, routeSchema, type OpenApi, type RouteDoc } from '../pages/openapi.js'
import { fileName, isFileResource } from '../pages/views.js'
import { FILE_UNAVAILABLE_WARNING, forgetHostMistake, warnHostMistakeOnce } from '../warnings.js'
import { eventBase, fileDownloaded, type FileDownloadedEvent } from '../events.js'

export { optionalPeer }

/** What every members-only route needs, the catalog, where the section is, and the files directory. */
export interface FileRoutesDeps extends MembersOnlyDeps {
  catalog: Catalog
  /** The section's own path, as its routes are registered (Fastify puts the register prefix in front). */
  prefix: string
  /** Hidden from a host's @fastify/swagger, or shown under a tag (pages/openapi.ts). */
  openapi: OpenApi
  /** The files directory's real path; undefined when the section has no files option. */
  root: string | undefined
}

/** What a file address names: its category (whose audience decides) and, when there is one, the resource. */
interface FileTarget {
  title: string
  audience?: readonly string[]
  slug: string
  resource: FileResource | undefined
}

// A member's copy only (private), and asked again each time (no-cache): access is checked on every
// open, and a 304 on an unchanged file costs no body.
const CACHE_CONTROL = 'private, no-cache'
// The answers that are the file (or a part of it, or "unchanged"); anything else is a page of its own.
const DOWNLOAD_STATUSES = new Set([200, 206, 304])
// The answers whose body is the file or a part of it: only these carry its Content-Disposition.
const FILE_BODY_STATUSES = new Set([200, 206])

// Every option @fastify/send reads, set here, so that a host's own @fastify/static registration (whose
// decorator is reused) changes none of them: ranges, validators and the type on; no index, no other
// extensions tried, no Cache-Control of its own (ours above), every file name allowed.
const SEND_OPTIONS: SendOptions = {
  acceptRanges: true,
  cacheControl: false,
  contentType: true,
  dotfiles: 'allow',
  etag: true,
  extensions: [],
  immutable: false,
  index: false,
  lastModified: true,
  maxAge: 0
}

/**
 * `<slug>/<id>/<file name>`, each segment percent-decoded, or undefined for any other shape. `url` is
 * the request's own (its last three segments, as sent) and `wildcard` what the router matched after
 * `/files/`: decoded whole, so that a `%2F` in it would look like a segment boundary. When the two
 * disagree, the address had fewer or more than three segments.
 */
export function fileAddress (url: string, wildcard: string): { slug: string, id: string, name: string } | undefined {
  const query = url.indexOf('?')
  const segments = (query === -1 ? url : url.slice(0, query)).split('/').slice(-3)
  let parts: string[]
  try {
    parts = segments.map((segment) => decodeURIComponent(segment))
  } catch {
    // The router refuses such a path (400) before any route; kept so that no router change can make it a 500.
    return undefined
  }
  if (parts.join('/') !== wildcard) return undefined
  const [slug, id, name] = parts
  return { slug, id, name }
}

/** The value of a settled promise, or what it was rejected with, thrown: checks read in the order they matter. */
function outcome<T> (result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason
  return result.value
}

/**
 * The protected files: `<prefix>/files/<category>/<resource id>/<file name>`, served with @fastify/static
 * to members who may see the category. The address names the category so that its audience is known
 * without a lookup by resource id; nothing from the address ever becomes a path: the file served is
 * the one the catalog names for that resource, and only when its real path is inside the files
 * directory.
 */
export async function fileRoutes (fastify: FastifyInstance, deps: FileRoutesDeps): Promise<void> {
  const { catalog, memberOf, pages, root } = deps
  let contentDisposition: ((name: string) => string) | undefined
  if (root !== undefined) {
    // One after the other, content-disposition first: @fastify/static require()s it, and on Node 22 a
    // require() of an ES module that a parallel import() is still loading fails ("not yet fully loaded").
    const disposition = await optionalPeer('content-disposition', () => import('content-disposition'))
    const fastifyStatic = await optionalPeer('@fastify/static', () => import('@fastify/static'))
    contentDisposition = disposition.create
    // serve: false: no routes of its own, only the reply decorators, in the section's context. A host
    // that registered @fastify/static itself already has them here; SEND_OPTIONS and the root passed on
    // each call make its settings irrelevant.
    if (!fastify.hasReplyDecorator('sendFile')) await fastify.register(fastifyStatic.default, { serve: false })
  }

  const notFound = notFoundAnswer({ memberOf, pages })
  // The file-downloaded event of a request whose file is being sent, published once it is answered 200 or 206.
  const sending = new WeakMap<FastifyRequest, Omit<FileDownloadedEvent, 'status'>>()
  // Per section, category and resource: said once until the file is served again.
  const mistakeKey = (slug: string, resource: FileResource) => `files:${fastify.prefix}${deps.prefix}:${slug}\0${resource.id}`

  /** Says once per resource (until it is served again) why its file cannot be served, for the site owner. */
  function warnOnce (request: FastifyRequest, slug: string, resource: FileResource, problem: string): void {
    warnHostMistakeOnce(request.server.log, mistakeKey(slug, resource), { code: FILE_UNAVAILABLE_WARNING, category: slug, resource: resource.id, file: resource.file },
      `fastify-schools-resources: the file of resource "${resource.id}" (category "${slug}") ${problem}; members get the 404 page`)
  }

  /** The file's path inside the root (`/maths/sheet.pdf`), or why there is none to serve. */
  async function onDisk (file: string): Promise<{ path: string } | { problem: string }> {
    if (root === undefined) return { problem: 'cannot be served: the section has no files option' }
    // The record was checked where it entered (checkedCatalog): `file` is a relative path of named
    // segments, so joined to the root it can only leave it through a symlink, which is checked here.
    const path = join(root, file)
    try {
      // The three at once: each is a trip to the thread pool and back through the event loop, and while
      // the loop is busy (a password spray) every trip waits for it. stat and access follow symlinks as
      // realpath does, so they see the file realpath names; their answers count only once it is inside.
      const [found, info, readable] = await Promise.allSettled([realpath(path), stat(path), access(path, constants.R_OK)])
      const real = outcome(found)
      // The real path, symlinks followed, must stay inside the root's real path.
      const inside = relative(root, real)
      if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
        return { problem: `${JSON.stringify(file)} leads outside the files directory (a symlink to ${real})` }
      }
      if (!outcome(info).isFile()) return { problem: `${JSON.stringify(file)} is not a file` }
      // Unreadable (EACCES) would otherwise reach @fastify/send as a 500 that names the path.
      outcome(readable)
      return { path: `/${inside.split(sep).join('/')}` }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      return { problem: code === 'ENOENT' ? `${JSON.stringify(file)} is missing from ${root}` : `${JSON.stringify(file)} cannot be opened (${code})` }
    }
  }

  async function findFile (request: FastifyRequest): Promise<FileTarget | undefined> {
    const address = fileAddress(request.url, (request.params as { '*': string })['*'])
    if (address === undefined || !isSlug(address.slug)) return undefined
    const category = await catalog.getCategory(address.slug)
    if (category === undefined) return undefined
    // A member outside the audience gets the 403 (with 'hide', the 404) for any address in the category,
    // so that it cannot learn which resources exist; the resource is looked for here and missing ones
    // answered after.
    const resource = category.resources.find((r): r is FileResource => r.id === address.id && isFileResource(r) && fileName(r.file) === address.name)
    return { title: category.title, audience: category.audience, slug: category.slug, resource }
  }

  async function download (request: FastifyRequest, reply: FastifyReply) {
    const { member, target } = grantedAccess<FileTarget>(request)!
    const { resource, slug } = target
    if (resource === undefined) return notFound(request, reply, member)
    const found = await onDisk(resource.file)
    if ('problem' in found) {
      warnOnce(request, slug, resource, found.problem)
      return notFound(request, reply, member)
    }
    forgetHostMistake(request.server.log, mistakeKey(slug, resource))
    const name = fileName(resource.file)
    reply.header('cache-control', CACHE_CONTROL).header('content-disposition', contentDisposition!(name))
    if (fileDownloaded.hasSubscribers && request.method === 'GET') {
      sending.set(request, { ...eventBase(request, deps.anonymous.indexPath), memberId: member.id, category: slug, resource: resource.id, file: name })
    }
    return reply.sendFile(found.path, root!, SEND_OPTIONS)
  }

  const doc: RouteDoc = {
    summary: 'A protected file (members only)',
    description: 'The file of a file resource, to members who may see its category, as an attachment (Content-Disposition), with ranges and validators (ETag, Last-Modified).',
    wildcard: 'The category\'s slug, the resource\'s id and the file\'s name: maths/fraction-wall/fraction-wall.pdf',
    answers: {
      200: file('OK: the file'),
      206: file('Partial Content: the range asked for'),
      304: noBody('Not Modified: the copy the member has is current'),
      ...guardedAnswers(deps),
      404: page('Not Found: no such file resource in the category, or its file cannot be served (logged as FST_SR_FILE_UNAVAILABLE)'),
      412: hostError('Precondition Failed: If-Match or If-Unmodified-Since does not hold'),
      416: hostError('Range Not Satisfiable: the range is past the end of the file')
    }
  }

  await fastify.register(async function schoolsResourcesFiles (files) {
    // @fastify/static's own 404 (a file removed between the check above and its opening) gets the
    // section's page too.
    files.setNotFoundHandler(notFound)
    // A wildcard, as for the category pages, so that every shape of address reaches the guard, and
    // marked for the anonymous short-circuit in the same way.
    files.get('/*', {
      schema: routeSchema(deps.openapi, doc),
      ...membersOnlyRoute<FileTarget>(deps, findFile, notFound),
      // A host's @fastify/static setHeaders runs after ours: on a file, the private Cache-Control is put back last.
      onSend: function privateFile (_request, reply, payload, done) {
        if (reply.hasHeader('content-disposition')) {
          if (DOWNLOAD_STATUSES.has(reply.statusCode)) reply.header('cache-control', CACHE_CONTROL)
          // @fastify/send's 412 (If-Match, If-Unmodified-Since) and 416 (a range past the end) are error
          // bodies: with the attachment header a browser would save one under the file's name.
          if (!FILE_BODY_STATUSES.has(reply.statusCode)) reply.removeHeader('content-disposition')
        }
        done(null, payload)
      },
      // One event per file answered (a 304 or a HEAD sends none of it).
      onResponse: function fileDownloadedEvent (request, reply, done) {
        const event = sending.get(request)
        const status = reply.statusCode
        if (event !== undefined && (status === 200 || status === 206)) fileDownloaded.publish({ ...event, status })
        done()
      }
    }, download)
  }, { prefix: `${deps.prefix}/files` })
}
