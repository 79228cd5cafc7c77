import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AnonymousRedirect } from '../types.js'
import { errorCodes } from '../errors.js'
import { siteOrigin } from '../redirect/site-origin.js'
import { redirectingFor } from '../redirect/redirect-once.js'
import { loginRedirectUrl } from '../redirect/login-redirect.js'

// What a visitor who is not signed in gets on a members-only route, from the access guard or, earlier, from
// the anonymous short-circuit: the 414 for a long target, else the login redirect.

const { FST_SR_URI_TOO_LONG } = errorCodes

/**
 * The longest request target (path and query) a category page accepts; longer ones are answered 414
 * before any work. Node refuses raw non-ASCII in a request line, so percent-encoding at most triples it:
 * the login redirect's Location stays under 4 KB, within a proxy's default header buffer, and so do the
 * redirect-conflict warning and log line that quote it.
 */
export const MAX_REQUEST_TARGET = 1024

/** The 414 error for a request whose target is over MAX_REQUEST_TARGET, or undefined. */
export function targetTooLong (request: FastifyRequest): Error | undefined {
  return request.url.length > MAX_REQUEST_TARGET ? new FST_SR_URI_TOO_LONG(MAX_REQUEST_TARGET) : undefined
}

/**
 * The answer to an anonymous visitor of a members-only route, in the legacy order: the login redirect,
 * then the redirect to the section index, which redirectOnce refuses with its warning. The access
 * guard and the anonymous short-circuit both answer with it.
 */
export function answerAnonymous (request: FastifyRequest, reply: FastifyReply, target: AnonymousRedirect): FastifyReply {
  reply.header('cache-control', 'no-store')
  redirectingFor(reply, target.indexPath)
  reply.redirectOnce(loginRedirectUrl(siteOrigin(request, target.baseUrl), target.loginPath, request.url, target.returnParam))
  reply.redirectOnce(target.indexPath)
  return reply
}
