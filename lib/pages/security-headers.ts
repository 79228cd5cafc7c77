import helmet, { type HelmetOptions } from 'helmet'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * The pages need nothing but their own stylesheet and forms that post to this site, so the policy
 * allows exactly that; no inline script or style runs.
 */
export const CONTENT_SECURITY_POLICY = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"]
  }
}

/**
 * The section's security headers, worked out once from its `helmet` option (undefined with `false`).
 * helmet's middleware is built once here (@fastify/helmet builds it again for every request). When
 * no option is a function (a CSP nonce, say), its headers are the same for every request, so they are
 * worked out once and copied onto each reply: running its dozen middlewares against the raw response
 * was a visible share of a member's page view.
 */
export function securityHeaders (options: HelmetOptions | false): ApplySecurityHeaders | undefined {
  if (options === false) return undefined
  const settings: HelmetOptions = { contentSecurityPolicy: CONTENT_SECURITY_POLICY, ...hstsOffUnlessAsked(options) }
  const setHeaders = helmet(settings)
  const fixed = hasFunction(settings) ? undefined : fixedHeaders(setHeaders)
  return fixed === undefined
    ? (request, reply) => {
        // A CSP function that throws or returns a value helmet refuses reaches next(err), synchronously:
        // the page must not go out without its policy, so the error is thrown to the caller.
        let failure: unknown
        setHeaders(request.raw, reply.raw, (err?: unknown) => { failure = err })
        if (failure !== undefined && failure !== null) throw failure
      }
    : (_request, reply) => {
        reply.headers(fixed.set)
        for (const name of fixed.removed) reply.raw.removeHeader(name)
      }
}

/**
 * Sets the section's headers on an answer it gives where its own onRequest hook did not run (a host's
 * route, or an error before the hook), unless the host's @fastify/helmet covers that route: its own hook
 * set its headers already. Throws helmet's error when an option function fails.
 */
export function applyOwnHeaders (apply: ApplySecurityHeaders | undefined, request: FastifyRequest, reply: FastifyReply): void {
  if (apply !== undefined && !reply.server.hasReplyDecorator('helmet')) apply(request, reply)
}

/**
 * Security headers on every request of the section's own routes; a host that registered @fastify/helmet
 * keeps its own. (The section's answers on the host's members-only routes apply them where they answer.)
 */
export function registerSecurityHeaders (section: FastifyInstance, apply: ApplySecurityHeaders | undefined): void {
  if (apply === undefined || section.hasReplyDecorator('helmet')) return
  section.addHook('onRequest', function securityHeaders (request, reply, done) {
    try {
      apply(request, reply)
    } catch (err) {
      done(err as Error)
      return
    }
    done()
  })
}

/**
 * Strict-Transport-Security off unless the host asks for it (`strictTransportSecurity` or its alias `hsts`):
 * helmet's default, a year with includeSubDomains, would pin every subdomain of the host's site to https
 * from a page of this section, a decision that belongs to the host.
 */
function hstsOffUnlessAsked (options: HelmetOptions): HelmetOptions {
  if (options.strictTransportSecurity !== undefined || options.hsts !== undefined) return options
  // An alias left as undefined would make helmet refuse the option as given twice.
  const { hsts: _hsts, strictTransportSecurity: _sts, ...rest } = options
  return { ...rest, strictTransportSecurity: false }
}

function hasFunction (value: unknown, seen = new WeakSet<object>()): boolean {
  if (typeof value === 'function') return true
  if (value === null || typeof value !== 'object' || seen.has(value)) return false
  seen.add(value)
  return Object.values(value).some((v) => hasFunction(v, seen))
}

/** What helmet's middleware does to a response, recorded once: the headers it sets and those it removes. */
function fixedHeaders (setHeaders: ReturnType<typeof helmet>): { set: Record<string, string>, removed: string[] } {
  const set: Record<string, string> = {}
  const removed: string[] = []
  const recorder = {
    setHeader (name: string, value: string) { set[name.toLowerCase()] = value },
    removeHeader (name: string) { removed.push(name) }
  }
  // Synchronous, and it only ever calls next() without an error (bad options throw when it is built).
  setHeaders({} as IncomingMessage, recorder as unknown as ServerResponse, () => {})
  return { set: Object.freeze(set), removed }
}

/** Sets the headers on the reply; throws helmet's error when an option function fails. */
export type ApplySecurityHeaders = (request: FastifyRequest, reply: FastifyReply) => void
