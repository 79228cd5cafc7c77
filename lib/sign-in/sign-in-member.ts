// reply.signInMember: the one way in after a proof of who the member is, for the password form, the
// built-in OpenID callback and a host's own callback (@fastify/oauth2, @fastify/passport, better-auth).
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Member, SignInMemberOptions } from '../types.js'
import { eventBase, signInFailed } from '../events.js'
import { siteOrigin } from '../redirect/site-origin.js'
import { checkedMethod, missingSignInOptions, signInSession, type SignInHow, type SignInStepDeps } from '../session/sign-in-step.js'
import type { MemberAnswerSource } from '../session/member.js'
import { safeBackUrl } from './back-url.js'
import { settleWhenAnswered, type NewSessions } from './new-sessions.js'
import { refusalError } from './refusals.js'

/** Retry-After for a refusal that lasts until `until`: whole seconds, at least one. */
export function retryAfter (until: Date): string {
  return String(Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000)))
}

/**
 * The bound on a member's new sessions (lockout.maxNewSessionsPerMinute, new-sessions.ts) as the step's
 * `admit`: within it the sign-in goes on; past it, the signInFailed event (`too-many-sessions`), Retry-After
 * on the reply and FST_SR_SESSION_RATE_LIMITED (429) thrown: no session is made.
 */
function withinNewSessions (reply: FastifyReply, how: SignInHow, deps: SignInStepDeps, newSessions: NewSessions) {
  return async function admit (member: Member): Promise<void> {
    const ticket = await newSessions.take(member.id)
    const { until } = ticket
    if (until === undefined) {
      settleWhenAnswered(reply, ticket)
      return
    }
    const { request } = reply
    if (signInFailed.hasSubscribers) {
      signInFailed.publish({ ...eventBase(request, deps.section), reason: 'too-many-sessions', identifierHash: undefined, ...(how.provider === undefined ? {} : { provider: how.provider }) })
    }
    reply.header('retry-after', retryAfter(until))
    throw refusalError('FST_SR_SESSION_RATE_LIMITED', until)
  }
}

/**
 * Signs `member` in (session/sign-in-step.ts) and answers 303 to the checked return address: `backUrl`
 * when it stays on this site, else the section index. Absolute, as documented, either way. `newSessions`
 * bounds the member's new sessions (undefined with the lockout off, or for the password form, which
 * counts before its turn succeeds): past it, FST_SR_SESSION_RATE_LIMITED with Retry-After, thrown.
 */
export async function signInAndReturn (reply: FastifyReply, member: unknown, backUrl: unknown, how: SignInHow, deps: SignInStepDeps, source: MemberAnswerSource,
  newSessions: NewSessions | undefined): Promise<FastifyReply> {
  const { request } = reply
  const origin = siteOrigin(request, deps.baseUrl)
  const returnTo = safeBackUrl(backUrl, origin) ?? `${origin}${deps.section}`
  await signInSession(request, reply, member, how, deps, source, newSessions === undefined ? undefined : withinNewSessions(reply, how, deps, newSessions))
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
 * share one reply: the first one's sign-in (its sessionKey, its index, its bound on new sessions) is the
 * one signInMember does.
 */
export function decorateSignInMember (fastify: FastifyInstance, deps: SignInStepDeps, newSessions: NewSessions | undefined): void {
  if (fastify.hasReplyDecorator('signInMember')) return
  fastify.decorateReply('signInMember', function signInMember (this: FastifyReply, member: Member, options: SignInMemberOptions) {
    const { backUrl, how } = checkedOptions(options)
    return signInAndReturn(this, member, backUrl, how, deps, 'signInMember', newSessions)
  })
}
