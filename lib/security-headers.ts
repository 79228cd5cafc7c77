import helmet, { type HelmetOptions } from 'helmet'
import type { FastifyInstance } from 'fastify'

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
 * Security headers on the plugin's own routes only; a host that registered @fastify/helmet keeps its own.
 * helmet's middleware is built once here: @fastify/helmet builds it again for every request, and its
 * directive parsing was a visible share of a signed-in page's CPU time.
 */
export async function registerSecurityHeaders (section: FastifyInstance, options: HelmetOptions | false): Promise<void> {
  if (options === false || section.hasReplyDecorator('helmet')) return
  const setHeaders = helmet({ contentSecurityPolicy: CONTENT_SECURITY_POLICY, ...options })
  section.addHook('onRequest', function securityHeaders (request, reply, done) {
    setHeaders(request.raw, reply.raw, (err) => done(err as Error | undefined))
  })
}
