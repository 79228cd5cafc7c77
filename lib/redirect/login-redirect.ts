import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AnonymousRedirect } from '../types.js'
import { siteOrigin } from './site-origin.js'

// The login redirect with its BackURL, written the way the legacy PHP site wrote it.

const PLAIN_PATH = /^[\w.\-/]*$/

/**
 * PHP's `urlencode`: only `A-Z a-z 0-9 _ . -` stay literal, space becomes `+`, every other UTF-8 byte
 * is `%XX` in upper case. encodeURIComponent does all but `! ' ( ) * ~` and the space.
 */
export function phpUrlencode (value: string): string {
  // The usual request path (letters, digits, `_ . -` and slashes): only the slashes change.
  if (PLAIN_PATH.test(value)) return value.replaceAll('/', '%2F')
  return encodeURIComponent(value.toWellFormed())
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+')
}

/** `{origin}{loginPath}?BackURL=<path as received>`. */
export function loginRedirectUrl (origin: string, loginPath: string, requestUrl: string): string {
  return `${origin}${loginPath}?BackURL=${phpUrlencode(requestUrl)}`
}

/**
 * The answer to an anonymous visitor of a members-only route, in the legacy order: the login redirect,
 * then the redirect to the section index, which redirectOnce refuses with its warning. The access
 * guard and the anonymous short-circuit both answer with it.
 */
export function answerAnonymous (request: FastifyRequest, reply: FastifyReply, target: AnonymousRedirect): FastifyReply {
  reply.header('cache-control', 'no-store')
  reply.redirectOnce(loginRedirectUrl(siteOrigin(request, target.baseUrl), target.loginPath, request.url))
  reply.redirectOnce(target.indexPath)
  return reply
}
