import fp from 'fastify-plugin'
import { inspect } from 'node:util'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { errorCodes } from '../errors.js'
import { kRedirectedTo, kRedirectOnceOptions } from '../symbols.js'
import { emitProcessWarning, REDIRECT_CONFLICT_WARNING } from '../warnings.js'
import { parseBaseUrl, requestOrigin } from './site-origin.js'
import { conflictLog, parseConflictLog, type ConflictLog, type ConflictLogOption } from './conflict-log.js'
import { eventBase, redirectRefused } from '../events.js'

const { FST_SR_INVALID_REDIRECT_CODE, FST_SR_INVALID_REDIRECT_URL } = errorCodes

export interface RedirectOnceOptions {
  /** Origin used to decide whether two targets are the same URL (default: the request's own origin). */
  baseUrl?: string
  /** How refused redirects are logged (default: a summary a minute); the warning is raised for every one regardless. */
  conflictLog?: ConflictLogOption
}

const REDIRECT_STATUS_CODES: ReadonlySet<number> = new Set([300, 301, 302, 303, 307, 308])

type GuardedReply = FastifyReply & { [kRedirectedTo]: string | null }

function assertRedirectable (url: unknown, code: unknown): asserts url is string {
  if (typeof code !== 'number' || !REDIRECT_STATUS_CODES.has(code)) {
    throw new FST_SR_INVALID_REDIRECT_CODE(inspect(code))
  }
  if (typeof url !== 'string' || url === '') {
    throw new FST_SR_INVALID_REDIRECT_URL(inspect(url))
  }
  if (INVALID_HEADER_CHAR.test(url)) throw new FST_SR_INVALID_REDIRECT_URL(inspect(url))
}

// The test node:http's validateHeaderValue makes of a string (checkInvalidHeaderChar), without the
// error it builds and we would discard: two of these run on every anonymous request.
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/

// The same few targets come back on every request (the index, the login URL of a popular page), and
// parsing them was the guard's largest own cost, so recent results are kept. Bounded in entries and in
// length, so that odd paths sent by a crawler cannot make it large.
const MAX_RESOLVED_ENTRIES = 500
const MAX_RESOLVED_LENGTH = 512
// Per base, then per target: no key is built per call (a concatenated key had to be copied and hashed).
const resolvedTargets = new Map<string, Map<string, string | null>>()
let resolvedCount = 0

/** `url` resolved against `base`, or null when it is not a URL. */
function resolveTarget (url: string, base: string): string | null {
  let forBase = resolvedTargets.get(base)
  let href = forBase?.get(url)
  if (href !== undefined) return href
  try {
    href = new URL(url, base).href
  } catch {
    href = null
  }
  if (url.length <= MAX_RESOLVED_LENGTH) {
    if (resolvedCount >= MAX_RESOLVED_ENTRIES) {
      resolvedTargets.clear()
      resolvedCount = 0
      forBase = undefined
    }
    if (forBase === undefined) {
      forBase = new Map()
      resolvedTargets.set(base, forBase)
    }
    forBase.set(url, href)
    resolvedCount++
  }
  return href
}

// The section whose anonymous answer is redirecting this reply, named by its redirect-refused event.
const sections = new WeakMap<FastifyReply, string>()

/** Names the section (its index path) answering `reply`, for the redirect-refused event; costs nothing unheard. */
export function redirectingFor (reply: FastifyReply, section: string): void {
  if (redirectRefused.hasSubscribers) sections.set(reply, section)
}

/** Whether `a` and `b` are the same URL once resolved against `base` (an origin). */
function sameTarget (a: string, b: string, base: string): boolean {
  if (a === b) return true
  const href = resolveTarget(a, base)
  return href !== null && href === resolveTarget(b, base)
}

function redirectOnce (reply: GuardedReply, url: string, code: number, baseUrl: string | undefined, log: ConflictLog): FastifyReply | undefined {
  assertRedirectable(url, code)
  // Our own record first: after a send, Fastify lets later reply.redirect() calls rewrite the header.
  const redirectedTo = reply[kRedirectedTo]
  const header = reply.getHeader('location')
  const existing = redirectedTo ?? (header === undefined ? undefined : String(header))
  if (existing !== undefined) {
    if (!sameTarget(existing, url, baseUrl ?? requestOrigin(reply.request))) {
      const message = `Already directed to ${existing}; now trying to direct to ${url}`
      emitProcessWarning(message, 'UserWarning', REDIRECT_CONFLICT_WARNING)
      log.record(reply, existing, url, message)
      if (redirectRefused.hasSubscribers) {
        const section = sections.get(reply)
        // The access guard's own second redirect, to its section's index: the spec's warning, on every visit.
        const expected = url === section
        redirectRefused.publish({ ...eventBase(reply.request, section), existingLocation: existing, refusedLocation: url, expected })
      }
      return undefined
    }
    if (redirectedTo !== null || reply.sent || reply.raw.headersSent) return reply
  }
  reply[kRedirectedTo] = url
  return reply.redirect(url, code)
}

// The options the decorator was made with, so that a later registration can tell whether its own differ.
interface Registered { baseUrl: string | undefined, conflictLog: ConflictLogOption }

const redirectOncePlugin: FastifyPluginAsync<RedirectOnceOptions> = async (fastify, opts) => {
  const baseUrl = parseBaseUrl(opts.baseUrl)
  const logOption = parseConflictLog(opts.conflictLog)
  // Registering twice (the host and the section plugin both do) keeps the first decorator; options
  // given again and different from the first ones are said to be ignored rather than silently dropped.
  if (fastify.hasReplyDecorator('redirectOnce')) {
    const first = (fastify as unknown as { [kRedirectOnceOptions]?: Registered })[kRedirectOnceOptions]
    const differs = first !== undefined && (
      (opts.baseUrl !== undefined && baseUrl !== first.baseUrl) ||
      (opts.conflictLog !== undefined && JSON.stringify(logOption) !== JSON.stringify(first.conflictLog)))
    if (differs) {
      fastify.log.warn({ ignored: { baseUrl, conflictLog: logOption }, inEffect: first },
        'redirectOnce was registered already: its first options stay in effect and these are ignored')
    }
    return
  }
  fastify.decorate(kRedirectOnceOptions, { baseUrl, conflictLog: logOption } satisfies Registered)
  const log = conflictLog(logOption, fastify.log)
  fastify.addHook('onClose', function redirectConflictLogClose (_instance, done) {
    log.close()
    done()
  })
  fastify.decorateReply(kRedirectedTo, null)
  fastify.decorateReply('redirectOnce', function (this: FastifyReply, url: string, code = 302) {
    return redirectOnce(this as GuardedReply, url, code, baseUrl, log)
  })
}

export default fp(redirectOncePlugin, { fastify: '5.x', name: 'fastify-schools-resources-redirect-once' })
