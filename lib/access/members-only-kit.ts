import type { FastifyContextConfig, preHandlerHookHandler } from 'fastify'
import type { AnonymousRedirect } from '../types.js'
import type { MemberLookup } from '../session/member.js'
import type { PageRenderer } from '../pages/page-renderer.js'
import type { AnswerLanguage } from '../pages/answer-language.js'
import type { ApplySecurityHeaders } from '../pages/security-headers.js'
import { hostError, page, redirect, STORE_DOWN, type RouteDoc } from '../pages/openapi.js'
import { shortCircuitMark } from './anonymous-short-circuit.js'
import { accessGuard, fixedAccessGuard, type AccessGuardDeps, type AnswerUnknown, type FindTarget, type OutsideAudience, type Protected } from './access-guard.js'

/**
 * What every members-only route needs, the section's (category pages, files) and the host's alike: one
 * deps type, from which the kit below makes the guard, the route config and the documented answers.
 */
export interface MembersOnlyDeps {
  memberOf: MemberLookup
  pages: PageRenderer
  /** The language of a refusal's JSON `message` (the page's, for the same request). */
  answers: AnswerLanguage
  /** The section's login redirect (then the refused index redirect), for visitors. */
  anonymous: AnonymousRedirect
  /** Whether members come from the session alone, so the anonymous short-circuit may answer for these routes. */
  sessionDecides: boolean
  /**
   * How what a member cannot open is shown: `'mark'`, a 403 at its address (and marked on the index);
   * `'hide'`, answered like something that does not exist.
   */
  restrictedCategories: OutsideAudience
}

/** A host route's extras: the section's error handler and headers do not reach it (access-guard.ts). */
export interface HostRouteDeps extends MembersOnlyDeps {
  /** The section's security headers (none with `helmet: false`), for the 403 page it answers on a host route. */
  securityHeaders: ApplySecurityHeaders | undefined
  answerError: AccessGuardDeps['answerError']
}

function guardDeps (deps: MembersOnlyDeps, host?: Pick<AccessGuardDeps, 'securityHeaders' | 'answerError'>): AccessGuardDeps {
  return { memberOf: deps.memberOf, pages: deps.pages, answers: deps.answers, ...host, ...deps.anonymous }
}

/**
 * A members-only route of the section: its guard (the route's own preHandler; `find` looks up what the
 * address names, `unknown` answers a member when there is no such thing) and its config, marked for the
 * anonymous short-circuit unless the host's getMember decides (its members may have no session cookie).
 */
export function membersOnlyRoute<T extends Protected> (deps: MembersOnlyDeps, find: FindTarget<T>, unknown: AnswerUnknown): { config: FastifyContextConfig, preHandler: preHandlerHookHandler } {
  return {
    config: shortCircuitMark(deps.anonymous, deps.sessionDecides),
    preHandler: accessGuard(guardDeps(deps), find, unknown, deps.restrictedCategories)
  }
}

/**
 * The host's members-only routes: the config mark and a guard per fixed target, with the section's
 * headers and error answers (which do not reach a host route on their own).
 */
export function hostRouteKit (deps: HostRouteDeps) {
  const host = guardDeps(deps, { securityHeaders: deps.securityHeaders, answerError: deps.answerError })
  return {
    config: (): FastifyContextConfig => shortCircuitMark(deps.anonymous, deps.sessionDecides),
    guard: (target: Protected): preHandlerHookHandler => fixedAccessGuard(host, target)
  }
}

/**
 * The answers a members-only route of the section gives everyone but the member it serves: visitors the
 * login redirect, and what the options allow (a 400 only where the Host header makes the address, a
 * 403 only when restricted categories are marked).
 */
export function guardedAnswers (deps: Pick<MembersOnlyDeps, 'anonymous' | 'restrictedCategories'>): RouteDoc['answers'] {
  return {
    302: redirect('Found: a visitor who is not signed in goes to the login page, BackURL naming this address'),
    400: deps.anonymous.baseUrl === undefined ? hostError('Bad Request: the Host header cannot make the absolute address of the login redirect (FST_SR_BAD_HOST, FST_SR_BAD_PROTOCOL); set baseUrl') : undefined,
    403: deps.restrictedCategories === 'mark' ? page('Forbidden: the member is outside the category\'s audience (FST_SR_FORBIDDEN)') : undefined,
    414: hostError('URI Too Long: the path and query are over 1024 characters (FST_SR_URI_TOO_LONG)'),
    503: STORE_DOWN
  }
}
