// reply.signInMember: the one way in after a proof of who the member is, for the password form, the
// built-in OpenID callback and a host's own callback (@fastify/oauth2, @fastify/passport, better-auth).
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Member, SignInMemberOptions } from '../types.js'
import { siteOrigin } from '../redirect/site-origin.js'
import { checkedMethod, missingSignInOptions, signInSession, type SignInHow, type SignInStepDeps } from '../session/sign-in-step.js'
import type { MemberAnswerSource } from '../session/member.js'
import { safeBackUrl } from './back-url.js'

/**
 * Signs `member` in (session/sign-in-step.ts) and answers 303 to the checked return address: `backUrl`
 * when it stays on this site, else the section index. Absolute, as documented, either way.
 */
export async function signInAndReturn (reply: FastifyReply, member: unknown, backUrl: unknown, how: SignInHow, deps: SignInStepDeps, source: MemberAnswerSource): Promise<FastifyReply> {
  const { request } = reply
  const origin = siteOrigin(request, deps.baseUrl)
  const returnTo = safeBackUrl(backUrl, origin) ?? `${origin}${deps.section}`
  await signInSession(request, reply, member, how, deps, source)
  reply.header('cache-control', 'no-store')
  // redirectOnce gives undefined only when a redirect elsewhere was already set: the reply is that one.
  return reply.redirectOnce(returnTo, 303) ?? reply
}

/** The options of a host's call, checked where they enter: a mistake is a TypeError at the call. */
function checkedOptions (options: unknown): { backUrl: unknown, how: SignInHow } {
  if (options === null || typeof options !== 'object') throw missingSignInOptions()
  const { method, backUrl, provider } = options as Record<string, unknown>
  const how: SignInHow = { method: checkedMethod(method) }
  if (provider !== undefined) how.provider = checkedMethod(provider, 'provider')
  return { backUrl, how }
}

/**
 * Decorates `reply.signInMember(member, { backUrl, method, provider? })` on the section's context, for
 * every section that keeps its members in the session. Sections registered side by side in one context
 * share one reply: the first one's sign-in (its sessionKey, its index) is the one signInMember does.
 */
export function decorateSignInMember (fastify: FastifyInstance, deps: SignInStepDeps): void {
  if (fastify.hasReplyDecorator('signInMember')) return
  fastify.decorateReply('signInMember', function signInMember (this: FastifyReply, member: Member, options: SignInMemberOptions) {
    const { backUrl, how } = checkedOptions(options)
    return signInAndReturn(this, member, backUrl, how, deps, 'signInMember')
  })
}
