import type { FastifyError, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify'
import type { AnonymousRedirect, Member } from '../types.js'
import type { errorCodes } from '../errors.js'
import { answerAnonymous, targetTooLong } from './anonymous-answer.js'
import type { MemberLookup } from '../session/member.js'
import { noteSessionEnd } from '../session/timeouts.js'
import { wantsJson } from '../pages/negotiation.js'
import type { AnswerLanguage } from '../pages/answer-language.js'
import type { PageRenderer } from '../pages/page-renderer.js'
import { applyOwnHeaders, type ApplySecurityHeaders } from '../pages/security-headers.js'
import { canSee } from './audience.js'
import { accessRefused, eventBase } from '../events.js'

// The 403's code; its message is written in the request's language (its error's own is English, for logs).
const FORBIDDEN: keyof typeof errorCodes = 'FST_SR_FORBIDDEN'

/** What the event and the error name when the route gives no title: English, as the logs are. */
const UNTITLED = 'this page'

/** What a guarded route serves: its title (named on the 403 page) and who may see it. */
export interface Protected {
  /** What the 403 page names; absent (a host route that gives none): "this page" in the page's language. */
  title?: string
  /** Groups that may see it; absent: every signed-in member. */
  audience?: readonly string[]
}

export interface AccessGuardDeps extends AnonymousRedirect {
  memberOf: MemberLookup
  pages: PageRenderer
  /** The language of the 403's JSON `message` (the page's, for the same request). */
  answers: AnswerLanguage
  /** The section's security headers, for its 403 answer where its own onRequest hook did not run (a host route). */
  securityHeaders?: ApplySecurityHeaders
  /**
   * Answers what the guard itself failed with (a getMember that throws or gives no member, a view), on a
   * host's route where the section's error handler does not reach; throws back what it leaves to the
   * host's handler. Absent on the section's own routes, whose error handler gets every error.
   */
  answerError?: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown
}

/** What the guard learnt, for the route handler: it never looks anything up twice. */
export interface GrantedAccess<T extends Protected = Protected> {
  member: Member
  target: T
}

/** A grant, and every target a guard approved for this request (a route may have more than one guard). */
interface Grant extends GrantedAccess {
  approved: readonly Protected[]
}

// Keyed by the request, in this module alone: nothing else can read or write a grant.
const grants = new WeakMap<FastifyRequest, Grant>()

export function grantedAccess<T extends Protected> (request: FastifyRequest): GrantedAccess<T> | undefined {
  return grants.get(request) as GrantedAccess<T> | undefined
}

/** Finds what a member asked for; undefined when there is no such thing. */
export type FindTarget<T extends Protected> = (request: FastifyRequest, member: Member) => T | undefined | Promise<T | undefined>
/** Answers a member who asked for something that does not exist. */
export type AnswerUnknown = (request: FastifyRequest, reply: FastifyReply, member: Member) => unknown

/**
 * The 403 for a member outside the audience: a page naming what was refused, with a way to sign in as
 * someone else that comes back here, or for a JSON client the error with its code. Never cached: the
 * same address serves the page to a member who is in the audience.
 */
async function answerForbidden (request: FastifyRequest, reply: FastifyReply, deps: Pick<AccessGuardDeps, 'pages' | 'answers' | 'securityHeaders' | 'indexPath'>, member: Member, given: string | undefined): Promise<FastifyReply> {
  const title = given ?? UNTITLED
  if (accessRefused.hasSubscribers) {
    const query = request.url.indexOf('?')
    accessRefused.publish({ ...eventBase(request, deps.indexPath), memberId: member.id, title, path: query === -1 ? request.url : request.url.slice(0, query) })
  }
  applyOwnHeaders(deps.securityHeaders, request, reply)
  reply.code(403).header('cache-control', 'private, no-store').header('vary', 'Accept')
  if (wantsJson(request)) {
    // A route without a title of its own is "this page" in the answer's language, as on the page.
    return deps.answers.sendJsonError(reply, 403, FORBIDDEN, (language) => language.t('error.FST_SR_FORBIDDEN', { page: given ?? language.t('forbidden.thisPage') }))
  }
  const { pages } = deps
  const ctx = await pages.context(member, reply)
  // A route without a title of its own is "this page" in the page's language.
  return pages.sendView(reply, 'forbidden', { title: given ?? ctx.t('forbidden.thisPage'), backUrl: request.url }, ctx)
}

/** Decides for a signed-in member: true when the request may go on to the page; otherwise it has been answered. */
type Admit = (request: FastifyRequest, reply: FastifyReply, member: Member) => boolean | Promise<boolean>

/**
 * What a member outside the audience gets: `'mark'`, the 403 naming what was refused; `'hide'`, the
 * answer for something that does not exist, so that nothing tells a hidden target from an unknown one.
 */
export type OutsideAudience = 'mark' | 'hide'

/**
 * A members-only route's own preHandler: the last hook before the page, so that every hook the host
 * registered (onRequest to preHandler: an MFA gate, a suspension check) has run before anyone, member or
 * not, gets an answer from the section. An anonymous visitor gets the spec's login redirect (then the
 * redirect to the section index, which redirectOnce refuses with its warning) before anything is looked
 * up, so the redirect never tells what exists or who may see it. A member gets `unknown`'s answer for
 * something that does not exist, outside its audience the 403 (or with `'hide'` `unknown`'s answer
 * again), and otherwise the page.
 */
export function accessGuard<T extends Protected> (deps: AccessGuardDeps, find: FindTarget<T>, unknown: AnswerUnknown, outside: OutsideAudience): preHandlerHookHandler {
  return guard(deps, async function admitFound (request, reply, member) {
    const target = await find(request, member)
    if (target === undefined || (outside === 'hide' && !canSee(member, target.audience))) {
      await unknown(request, reply, member)
      return false
    }
    return admitTo(request, reply, deps, member, target)
  }, true)
}

/**
 * The same guard for one fixed target (a host's members-only route): nothing to look up. Only the login
 * redirect has a length limit here (its Location quotes the address): members of a host page with a long
 * query string still get the page.
 */
export function fixedAccessGuard (deps: AccessGuardDeps, target: Protected): preHandlerHookHandler {
  return guard(deps, (request, reply, member) => admitTo(request, reply, deps, member, target), false)
}

/**
 * Whether a guard has already let this request through; with `targets`, whether the guards of exactly
 * these targets did (another guard's approval, for other groups, does not count).
 */
export function isGranted (request: FastifyRequest, targets?: readonly Protected[]): boolean {
  const grant = grants.get(request)
  if (grant === undefined) return false
  return targets === undefined || targets.every((target) => grant.approved.includes(target))
}

function admitTo (request: FastifyRequest, reply: FastifyReply, deps: AccessGuardDeps, member: Member, target: Protected): boolean | Promise<boolean> {
  if (!canSee(member, target.audience)) return answerForbidden(request, reply, deps, member, target.title).then(() => false)
  const earlier = grants.get(request)?.approved ?? []
  grants.set(request, { member, target, approved: [...earlier, target] })
  return true
}

/** The guard around `admitMember`; `limitEveryone`: refuse a too-long address before anything else. */
function guard (deps: AccessGuardDeps, admitMember: Admit, limitEveryone: boolean): preHandlerHookHandler {
  const { memberOf, answerError } = deps

  /** True when the request may go on to the page; otherwise it has been answered. */
  async function admit (request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    // With the reply: a remembered device is signed in here, and the page served.
    const member = await memberOf(request, reply) ?? undefined
    if (member === undefined) {
      // Checked for everyone already when limitEveryone; otherwise only here, as the Location quotes the address.
      const tooLong = limitEveryone ? undefined : targetTooLong(request)
      if (tooLong !== undefined) throw tooLong
      noteSessionEnd(request, reply, deps.loginPath)
      answerAnonymous(request, reply, deps)
      return false
    }
    return admitMember(request, reply, member)
  }

  // Callback style on purpose: an answered request must stop here even while an asynchronous
  // session store is still saving in onSend. Fastify only stops an async hook's chain once
  // reply.sent is true, which that save delays, so the page handler would run and send twice.
  return function schoolsResourcesAccessGuard (request, reply, done) {
    const tooLong = limitEveryone ? targetTooLong(request) : undefined
    if (tooLong !== undefined) {
      done(tooLong)
      return
    }
    admit(request, reply).then((proceed) => { if (proceed) done() }, answerError === undefined
      ? done
      : (error: FastifyError) => {
          try {
            answerError(error, request, reply)
          } catch (passed) {
            done(passed as FastifyError)
          }
        })
  }
}
