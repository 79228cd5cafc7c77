import helmet, { type FastifyHelmetOptions } from '@fastify/helmet'
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

/** Security headers on the plugin's own routes only; a host that registered @fastify/helmet keeps its own. */
export async function registerSecurityHeaders (section: FastifyInstance, options: FastifyHelmetOptions | false): Promise<void> {
  if (options === false || section.hasReplyDecorator('helmet')) return
  await section.register(helmet, { contentSecurityPolicy: CONTENT_SECURITY_POLICY, ...options })
}
