// reply.signInMember: the one way in after a proof of who the member is, for the password form, the
// built-in OpenID callback and a host's own callback (@fastify/oauth2, @fastify/passport, better-auth).
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Member, SignInMemberOptions } from '../types.js'
import { errorCodes } from '../errors.js'
import { siteOrigin } from '../redirect/site-origin.js'
import { checkedMethod, missingSignInOptions, signInSession, type SignInHow, type SignInStepDeps } from '../session/sign-in-step.js'
import type { MemberAnswerSource } from '../session/member.js'
import { safeBackUrl } from './back-url.js'

const { FST_SR_SHARED_SIGN_IN } = errorCodes

/** The step's settings the decorator was made with, per app, to compare a second section's against. */
const decorated = new WeakMap<object, { deps: SignInStepDeps, login: string }>()

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
 * every section that keeps its members in the session. A second section in the same context shares the
 * first one's when it would sign in the same way; otherwise start-up fails rather than sign members in
 * under the wrong key.
 */
export function decorateSignInMember (fastify: FastifyInstance, deps: SignInStepDeps, login: string): void {
  if (fastify.hasReplyDecorator('signInMember')) {
    const first = decorated.get(fastify.server)
    if (first !== undefined && (first.deps.sessionKey !== deps.sessionKey || first.deps.session.plugin !== deps.session.plugin ||
      first.deps.keepSessionData !== deps.keepSessionData || (first.deps.finder === undefined) !== (deps.finder === undefined))) {
      throw new FST_SR_SHARED_SIGN_IN(deps.section, login)
    }
    return
  }
  decorated.set(fastify.server, { deps, login })
  fastify.decorateReply('signInMember', function signInMember (this: FastifyReply, member: Member, options: SignInMemberOptions) {
    const { backUrl, how } = checkedOptions(options)
    return signInAndReturn(this, member, backUrl, how, deps, 'signInMember')
  })
}
