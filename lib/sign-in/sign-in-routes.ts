import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify'
import type { Credentials, Member } from '../types.js'
import { errorCodes, isStoreUnavailable } from '../errors.js'
import { eventBase, identifierHash, lockedOut, signedOut, signInFailed, type SignInFailureReason } from '../events.js'
import { kOutageSignOut } from '../symbols.js'
import { isHttpsBase, siteOrigin } from '../redirect/site-origin.js'
import { loginRedirectUrl } from '../redirect/login-redirect.js'
import { CSRF_ERROR_CODES, csrfTokenFor } from '../session/csrf.js'
import { invalidMember, isMember, type MemberLookup } from '../session/member.js'
import type { SessionAdapter } from '../session/session-adapter.js'
import { sessionCookieWritten, type SignInStepDeps } from '../session/sign-in-step.js'
import { signInAndReturn } from './sign-in-member.js'
import { providerKey } from '../session/session-data.js'
import { takeNotice, type TimeoutNotice, type TimeoutSettings } from '../session/timeouts.js'
import { REMEMBER_FIELD, rememberCookieName, wantsRemember, type RememberMe, type RememberMeSettings } from '../session/remember-me.js'
import type { ResolvedOidc } from './oidc-options.js'
import type { ProviderConfigs } from './oidc-client.js'
import { oidcRoutes, providerHref, providerSignOut } from './oidc-routes.js'
import { isJsonClient, wantsJson } from '../pages/negotiation.js'
import { sayIn, type AnswerLanguage, type Composed, type Said } from '../pages/answer-language.js'
import type { PageRenderer, SectionPaths } from '../pages/page-renderer.js'
import { logServerError } from '../pages/server-error.js'
import { sendOthersNotSignedOut } from '../pages/unavailable.js'
import { hostError, page, redirect, routeSchema, STORE_DOWN, type OpenApi, type RouteDoc } from '../pages/openapi.js'
import { safeBackUrl } from './back-url.js'
import { DEVICE_COOKIE } from './device-cookie.js'
import type { Refusal, SignInLimits } from './limits.js'
import { settleWhenAnswered, type NewSessions } from './new-sessions.js'
import type { PasswordChecks } from './password-checks.js'
import { refusalError, refusalSaid, type LoginPageData } from './refusals.js'

const { FST_SR_SHARED_SIGN_IN, FST_SR_INSECURE_SIGN_IN } = errorCodes
// The password checks' refusal when every turn is taken (password-checks.ts), with its retryAfter.
const SIGN_IN_BUSY: keyof typeof errorCodes = 'FST_SR_SIGN_IN_BUSY'
type BusyError = FastifyError & { retryAfter: number }

// The login form's JSON (GET with Accept: application/json).
const LOGIN_JSON = {
  type: 'object',
  required: ['signedIn', 'csrfToken'],
  properties: { signedIn: { type: 'boolean' }, csrfToken: { type: 'string' } }
} as const

export interface SignInDeps {
  /** The host's password check; undefined with `passwordSignIn: false` (no password form, no sign-in route). */
  authenticate: ((credentials: Credentials, request: FastifyRequest) => Promise<Member | null | undefined>) | undefined
  /** The OpenID providers and openid-client's configurations of them, with `oidc`. */
  oidc: { options: ResolvedOidc, configs: ProviderConfigs } | undefined
  memberOf: MemberLookup
  /** The session plugin's adapter: where the member is kept. */
  session: SessionAdapter
  pages: PageRenderer
  /** The language of the messages the routes say (the page's; JSON answers' `message`). */
  answers: AnswerLanguage
  /** Where links point (under the register prefix). */
  paths: SectionPaths
  /** The login and logout paths as the routes are registered (Fastify puts the register prefix in front). */
  routes: { login: string, logout: string }
  baseUrl: string | undefined
  /** The return address's query and form field (option returnParam, default `BackURL`). */
  returnParam: string
  /** The session's side of a sign-in (session/sign-in-step.ts), shared with reply.signInMember. */
  step: SignInStepDeps
  /** The lockout and the per-address limit (lib/sign-in/limits.ts), unless both are off. */
  limits: SignInLimits | undefined
  /** The bound on a member's new sessions per minute, with the lockout on. */
  newSessions: NewSessions | undefined
  /** Checks the form's CSRF token (runs before the handlers). */
  verifyCsrf: preHandlerHookHandler
  /** Hidden from a host's @fastify/swagger, or shown under a tag (pages/openapi.ts). */
  openapi: OpenApi
  /** Bounds the `authenticate` calls at once, with a fair share per client address. */
  passwordChecks: PasswordChecks
  /** The key of the identifier hash that failed sign-in events carry (undefined: one per process). */
  auditKey: string | undefined
  /** The timeouts, for the login page's notice of a session they ended. */
  timeouts: TimeoutSettings | false
  /** The logout form's "Sign out on all devices" (`everywhere=1`); undefined: off. */
  signOutEverywhere?: ((memberId: Member['id'], request: FastifyRequest) => Promise<void>) | undefined
  /** "Keep me signed in on this device": the form's box, and the device forgotten at sign-out; undefined: off. */
  rememberMe?: RememberMe | undefined
  /** The "Forgotten your password?" page the login page links to (`passwordReset`); undefined: no link. */
  lostPasswordUrl?: string | undefined
}

// Longer values cannot be real credentials; refusing them early keeps hashing cost bounded.
const MAX_EMAIL_LENGTH = 254
const MAX_PASSWORD_LENGTH = 1024

const EXPIRED_FORM: Said = { key: 'error.formExpired' }

/** A timeout's notice, with its duration, in the page's language. */
function timeoutNotice ({ key, duration }: TimeoutNotice): Composed {
  return (language) => language.t(key, { duration: sayIn(language, duration) })
}

type Fields = Record<string, unknown>

function fields (value: unknown): Fields {
  return value !== null && typeof value === 'object' ? value as Fields : {}
}

/** What sections sharing one sign-in must agree on. */
export interface SignInSettings {
  authenticate: SignInDeps['authenticate']
  /** The host's `oidc` option as given (its providers and resolveMember); `passwordSignIn` follows from `authenticate`. */
  oidc: unknown
  sessionKey: string
  logout: string
  /** The host's own findMember (what the session keeps depends on it). */
  findMember: unknown
  returnParam: string
  /** The timeouts, whose times the shared sign-in starts. */
  timeouts: TimeoutSettings | false
  /** The host's `passwordReset` option as given: its routes sit beside the login page, one set per login path. */
  passwordReset: unknown
  /** "Keep me signed in": the box the shared form shows, the tokens every section reads. */
  rememberMe: RememberMeSettings | false
}

/** Whether two sections remember devices alike: both off, or the same lifetime in the same store. */
function sameRememberMe (a: RememberMeSettings | false, b: RememberMeSettings | false): boolean {
  return a === false || b === false ? a === b : a.maxAgeMs === b.maxAgeMs && a.store === b.store
}

/** Whether two sections keep the same timeouts (each reads them, the shared sign-in starts them). */
function sameTimeouts (a: TimeoutSettings | false, b: TimeoutSettings | false): boolean {
  return a === false || b === false ? a === b : a.idleMs === b.idleMs && a.absoluteMs === b.absoluteMs
}

// Per app (its server, which every context shares): the sign-in routes a section serves, by login path.
const servedSignIns = new WeakMap<object, Map<string, SignInSettings>>()

/**
 * Whether the section with `paths` is the first in the app to use its login path, and so serves the
 * sign-in routes. A later section shares them (several sections, one sign-in), which only works when it
 * would sign in the same way: otherwise start-up fails rather than ignore its settings.
 */
export function servesSignIn (server: object, paths: SectionPaths, settings: SignInSettings): boolean {
  let served = servedSignIns.get(server)
  if (served === undefined) servedSignIns.set(server, served = new Map())
  const first = served.get(paths.login)
  if (first === undefined) {
    served.set(paths.login, settings)
    return true
  }
  if (first.authenticate !== settings.authenticate || first.sessionKey !== settings.sessionKey || first.logout !== settings.logout ||
    first.findMember !== settings.findMember || first.returnParam !== settings.returnParam || first.oidc !== settings.oidc ||
    first.passwordReset !== settings.passwordReset || !sameTimeouts(first.timeouts, settings.timeouts) || !sameRememberMe(first.rememberMe, settings.rememberMe)) {
    throw new FST_SR_SHARED_SIGN_IN(paths.index, paths.login)
  }
  return false
}

/**
 * Login form, sign-in and sign-out, in a context of their own inside the section's: they inherit its
 * CSRF plugin, form parser and error handlers (store outage, 500), and their own error handler sees
 * their errors only. The return address is checked every time it is read.
 */
export function signInRoutes (section: FastifyInstance, deps: SignInDeps): void {
  section.register(async function schoolsResourcesSignIn (fastify) {
    signInForms(fastify, deps)
  })
}

function signInForms (fastify: FastifyInstance, deps: SignInDeps): void {
  const { authenticate, memberOf, pages, paths, baseUrl, limits, returnParam } = deps
  const csrfToken = (reply: FastifyReply) => csrfTokenFor(reply, deps.session)

  /** The sign-in-failed event (events.ts), with a keyed hash of the identifier tried, never the identifier. */
  function failed (request: FastifyRequest, reason: SignInFailureReason, email: unknown): void {
    if (!signInFailed.hasSubscribers) return
    signInFailed.publish({ ...eventBase(request, paths.index), reason, identifierHash: identifierHash(email, deps.auditKey) })
  }

  const passwordForm = authenticate !== undefined
  async function loginPage (reply: FastifyReply, status: number, { error, notice, ...data }: LoginPageData, member: Member | undefined) {
    // The page's own language writes its messages.
    const ctx = await pages.context(member, reply)
    reply.code(status).header('cache-control', 'no-store')
    const providers = deps.oidc?.options.providers.map(({ id, label }) => ({ id, label, href: providerHref(paths, id, returnParam, data.backUrl) })) ?? []
    const link = deps.lostPasswordUrl === undefined ? {} : { lostPasswordUrl: deps.lostPasswordUrl }
    const said = { ...(error === undefined ? {} : { error: sayIn(ctx, error) }), ...(notice === undefined ? {} : { notice: sayIn(ctx, notice) }) }
    return pages.sendView(reply, 'login', { ...data, ...said, csrfToken: csrfToken(reply), providers, passwordForm, remember: deps.rememberMe !== undefined, ...link }, ctx)
  }

  /** A refused sign-in: the form again with the message, or for a JSON client the error with its code. */
  function refuse (reply: FastifyReply, error: FastifyError, data: LoginPageData) {
    // Our own errors, made with @fastify/error and a status each.
    const status = Number(error.statusCode)
    if (isJsonClient(reply.request)) return deps.answers.sendJsonError(reply.header('cache-control', 'no-store'), status, error.code, refusalSaid(error))
    return loginPage(reply, status, { ...data, ...(data.lockedUntil === undefined ? { error: refusalSaid(error) } : {}) }, undefined)
  }

  function returnAddress (request: FastifyRequest, value: unknown): string | undefined {
    return safeBackUrl(value, siteOrigin(request, baseUrl)) === undefined ? undefined : value as string
  }

  // Expired forms and a busy sign-in answer with the form again (HTML) rather than a bare error. Any other
  // error goes on to the section's handlers, which this context inherits.
  fastify.setErrorHandler(async function signInErrors (error: FastifyError, request, reply) {
    const code = error.code ?? ''
    if (!CSRF_ERROR_CODES.has(code) && code !== SIGN_IN_BUSY) throw error
    const status = code === SIGN_IN_BUSY ? 503 : 403
    if (request.routeOptions.url === paths.login) failed(request, status === 503 ? 'busy' : 'csrf', fields(request.body).email)
    if (code === SIGN_IN_BUSY) reply.header('retry-after', String((error as BusyError).retryAfter))
    const said = status === 403 ? EXPIRED_FORM : refusalSaid(error)
    if (isJsonClient(request)) return deps.answers.sendJsonError(reply.header('cache-control', 'no-store'), status, code, said)
    const member = await memberOf(request) ?? undefined
    const backUrl = returnAddress(request, fields(request.body)[returnParam] ?? fields(request.query)[returnParam])
    return loginPage(reply, status, { backUrl, error: said }, member)
  })

  // The form's fields, said in words: a body schema would validate them, before the CSRF check and ours.
  const FIELDS = 'Form fields (urlencoded, or JSON): email, password, _csrf (the token of the login form, or csrfToken of its JSON) and an optional BackURL, a path on this site to return to.'
  const EXPIRED = page('Forbidden: the form\'s CSRF token is missing, wrong or expired (the form again, saying so)')
  const BAD_HOST = baseUrl === undefined ? hostError('Bad Request: the Host header cannot make the absolute address of the redirect (FST_SR_BAD_HOST, FST_SR_BAD_PROTOCOL); set baseUrl') : undefined
  const loginDoc: RouteDoc = {
    summary: 'The login form',
    description: 'The form, with BackURL (the address to return to, kept when it stays on this site). JSON clients get whether they are signed in and the CSRF token to post.',
    answers: { 200: page('OK: the login page, or { signedIn, csrfToken } as JSON', LOGIN_JSON), 503: STORE_DOWN }
  }
  const signInDoc: RouteDoc = {
    summary: 'Sign in',
    description: `Checks the credentials, with the sign-in limits before the password. ${FIELDS} A refusal is the form again with the message (HTML) or the error (JSON).`,
    answers: {
      303: redirect('See Other: signed in (a new session id); to BackURL, or the section index'),
      400: page(`Bad Request: no email or no password (FST_SR_MISSING_CREDENTIALS)${BAD_HOST === undefined ? '' : '; a Host header that cannot make the absolute address of the redirect (FST_SR_BAD_HOST), answered by the host\'s error handler'}`),
      401: page('Unauthorized: wrong email or password (FST_SR_INVALID_CREDENTIALS)'),
      403: EXPIRED,
      429: limits === undefined ? undefined : page(`Too Many Requests: the username is locked out (FST_SR_LOCKED_OUT) or the address failed too often (FST_SR_LOGIN_RATE_LIMITED)${deps.newSessions === undefined ? '' : ', or the member signed in too often this minute (FST_SR_SESSION_RATE_LIMITED)'}, with Retry-After`),
      503: page('Service Unavailable: every password check is taken (FST_SR_SIGN_IN_BUSY), or the store is down (FST_SR_STORE_UNAVAILABLE); with Retry-After')
    }
  }
  const signOutDoc: RouteDoc = {
    summary: 'Sign out',
    description: 'Ends the session. Form fields: _csrf (the token of the page\'s logout form) and an optional BackURL (then the login page, to come back to it as someone else).',
    answers: {
      303: redirect('See Other: signed out; to the section index, or the login page with BackURL'),
      400: BAD_HOST,
      403: EXPIRED,
      503: page('Service Unavailable: the store is down; with a good token the session cookie is still expired (signedOut: true in JSON)')
    }
  }

  fastify.get(deps.routes.login, { schema: routeSchema(deps.openapi, loginDoc) }, async function loginForm (request, reply) {
    // With the reply: a remembered device is signed in here too.
    const member = await memberOf(request, reply) ?? undefined
    if (wantsJson(request)) {
      reply.header('cache-control', 'no-store').header('vary', 'Accept')
      return { signedIn: member !== undefined, csrfToken: csrfToken(reply) }
    }
    const notice = deps.timeouts === false ? undefined : takeNotice(request, reply, paths.login, deps.timeouts)
    return loginPage(reply, 200, { backUrl: returnAddress(request, fields(request.query)[returnParam]), ...(notice === undefined ? {} : { notice: timeoutNotice(notice) }) }, member)
  })

  // While the store is down, @fastify/session fails before this route; the 503 path (pages/unavailable.ts)
  // then checks the form's token with the same hook and expires the session cookie.
  const outageSignOut = { [kOutageSignOut]: { verifyCsrf: deps.verifyCsrf, cookieName: deps.session.cookieName, rememberCookie: deps.rememberMe === undefined ? undefined : rememberCookieName } }
  fastify.post(deps.routes.logout, { schema: routeSchema(deps.openapi, signOutDoc), preHandler: deps.verifyCsrf, config: outageSignOut }, async function signOut (request, reply) {
    // @fastify/session: the session goes from the store, so its cookie is worthless (the plugin clears it
    // on the next request, finding no session behind it). @fastify/secure-session: its cookie is cleared.
    const everywhere = deps.signOutEverywhere !== undefined && fields(request.body).everywhere === '1'
    const member = signedOut.hasSubscribers || everywhere ? await memberOf(request) ?? undefined : undefined
    // Every session of the member first. When the store of the counts is down, this browser is still
    // signed out (the person may be leaving a shared computer) and the 503 says the others were not.
    let othersKept: Error | undefined
    if (everywhere && member !== undefined) {
      try {
        await deps.signOutEverywhere!(member.id, request)
      } catch (err) {
        if (!isStoreUnavailable(err)) throw err
        othersKept = err as Error
      }
    }
    const session = deps.session.of(request)
    const via = deps.oidc === undefined ? undefined : session?.get(providerKey(deps.step.sessionKey))
    await session?.end()
    // This device is forgotten too (every device with everywhere=1, above).
    await deps.rememberMe?.forgetThisDevice(request, reply)
    if (othersKept !== undefined) {
      // The answer skips onSend, where the cookies set above would go out: it expires them itself.
      return sendOthersNotSignedOut(othersKept, request, reply, outageSignOut[kOutageSignOut])
    }
    if (signedOut.hasSubscribers) signedOut.publish({ ...eventBase(request, paths.index), memberId: member?.id })
    reply.header('cache-control', 'no-store')
    if (via !== undefined) {
      // Signed out here first, always; then, where the provider offers it and the host asked, there too.
      const provider = deps.oidc!.options.providers.find((p) => p.id === via)
      const there = await providerSignOut(deps.oidc!.configs, provider, `${siteOrigin(request, baseUrl)}${paths.index}`)
      if (there !== undefined) return reply.redirect(there, 303)
    }
    // "Sign in as someone else" (the 403 page) posts the address it refused: the login page, which
    // brings the next member back to it. Any other sign-out ends on the section index.
    const backUrl = returnAddress(request, fields(request.body)[returnParam])
    if (backUrl !== undefined) return reply.redirectOnce(loginRedirectUrl(siteOrigin(request, baseUrl), paths.login, backUrl, returnParam), 303)
    return reply.redirectOnce(paths.index, 303)
  })

  if (deps.oidc !== undefined) {
    oidcRoutes(fastify, {
      oidc: deps.oidc.options,
      configs: deps.oidc.configs,
      step: deps.step,
      paths,
      route: deps.routes.login,
      baseUrl: baseUrl!,
      returnParam,
      limits,
      newSessions: deps.newSessions,
      openapi: deps.openapi,
      answers: deps.answers,
      loginPage: (reply, status, data) => loginPage(reply, status, data, undefined)
    })
  }

  // passwordSignIn: false: no password form, so no route takes one.
  if (authenticate === undefined) return
  // The CSRF check comes first: a cross-site POST without the form's token spends no one's budget.
  fastify.post(deps.routes.login, { schema: routeSchema(deps.openapi, signInDoc), preHandler: deps.verifyCsrf }, async function signIn (request, reply) {
    const body = fields(request.body)
    // The form posts BackURL (returnParam) in its body; a hand-made link may carry it in the query instead.
    const backUrl = body[returnParam] ?? fields(request.query)[returnParam]
    // Checked once: the absolute URL to return to, and the value as given for the form if it comes back.
    const returnTo = safeBackUrl(backUrl, siteOrigin(request, baseUrl))
    const formBackUrl = returnTo === undefined ? undefined : backUrl as string
    const email = typeof body.email === 'string' ? body.email.trim() : ''
    const password = typeof body.password === 'string' ? body.password : ''

    const session = deps.session.of(request)
    // Fail closed: a 303 "signed in" that no cookie backs would be a lie, and a login loop.
    if (!sessionCookieWritten(request, session, fastify.log, baseUrl)) {
      const insecure = new FST_SR_INSECURE_SIGN_IN()
      // A 500 like the section's others: a line of its own (the fix was said once, in the warn line).
      logServerError(request, insecure.code)
      failed(request, 'insecure-connection', email)
      return refuse(reply, insecure, { backUrl: formBackUrl, email: email.slice(0, MAX_EMAIL_LENGTH) })
    }

    if (email === '' || password === '' || email.length > MAX_EMAIL_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
      failed(request, 'missing-credentials', email)
      return refuse(reply, refusalError('FST_SR_MISSING_CREDENTIALS'), { backUrl: formBackUrl, email: email.slice(0, MAX_EMAIL_LENGTH) })
    }

    // The limits decide before the password is checked; parallel sign-ins to one username wait their turn.
    const turn = await limits?.begin(email, request.ip, request.cookies[DEVICE_COOKIE])
    if (turn?.refused !== undefined) {
      failed(request, turn.refused.reason === 'address' ? 'rate-limited' : 'locked-out', email)
      return limited(reply, turn.refused, formBackUrl, email)
    }

    let member: Member | null | undefined
    try {
      // A browser that signed in as this username before waits in a line of its own, not its address's.
      member = await deps.passwordChecks.run(request.ip, () => authenticate({ email, password }, request), turn?.device)
    } catch (err) {
      turn?.end()
      // A full line refuses thousands in a spray: answered here, with the email kept, rather than through
      // Fastify's error path and the section's error handler, which would look the member up again.
      if ((err as FastifyError).code === SIGN_IN_BUSY) {
        failed(request, 'busy', email)
        return busy(reply, err as BusyError, formBackUrl, email)
      }
      throw err
    }
    if (member === null || member === undefined) {
      const lockedNow = await turn?.fail()
      failed(request, 'wrong-credentials', email)
      if (lockedNow !== undefined) {
        if (lockedOut.hasSubscribers) {
          lockedOut.publish({
            ...eventBase(request, paths.index),
            identifierHash: identifierHash(email, deps.auditKey),
            until: lockedNow.until
          })
        }
        return limited(reply, lockedNow, formBackUrl, email)
      }
      return refuse(reply, refusalError('FST_SR_INVALID_CREDENTIALS'), { backUrl: formBackUrl, email })
    }
    if (!isMember(member)) {
      turn?.end()
      throw invalidMember(request, 'authenticate', member)
    }
    // A session per sign-in, each for hours: a member's are bounded per minute (new-sessions.ts).
    const ticket = await deps.newSessions?.take(member.id)
    if (ticket?.until !== undefined) {
      turn?.end()
      failed(request, 'too-many-sessions', email)
      return limited(reply, { reason: 'sessions', until: ticket.until }, formBackUrl, email)
    }
    if (ticket !== undefined) settleWhenAnswered(reply, ticket)
    const device = await turn?.succeed()
    // This browser signed in as this username: its own failures, not its address's, decide from now on.
    if (device !== undefined) {
      reply.setCookie(DEVICE_COOKIE, device, {
        path: paths.login,
        httpOnly: true,
        sameSite: 'strict',
        secure: isHttpsBase(baseUrl) ? true : 'auto',
        maxAge: limits!.deviceMaxAge
      })
    }

    // A new session id at sign-in (session fixation), what of the host's data comes along (keepSessionData),
    // the member stored, the event: the step every way in shares. The bound on new sessions was counted above.
    return signInAndReturn(reply, member, backUrl, { method: 'password', remember: wantsRemember(body[REMEMBER_FIELD]) }, deps.step, 'authenticate', undefined)
  })

  /** A sign-in refused because every password check and place in line is taken: 503 with Retry-After. */
  function busy (reply: FastifyReply, error: BusyError, backUrl: string | undefined, email: string) {
    reply.header('retry-after', String(error.retryAfter))
    return refuse(reply, error, { backUrl, email })
  }

  /** A sign-in refused by a limit: until when, and which (a lock names the time, the address limit too). */
  function limited (reply: FastifyReply, refusal: Refusal | { reason: 'sessions', until: Date }, backUrl: string | undefined, email: string) {
    const { reason, until } = refusal
    reply.header('retry-after', String(Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000))))
    if (reason === 'address') return refuse(reply, refusalError('FST_SR_LOGIN_RATE_LIMITED', until), { backUrl, email })
    if (reason === 'sessions') return refuse(reply, refusalError('FST_SR_SESSION_RATE_LIMITED', until), { backUrl, email })
    return refuse(reply, refusalError('FST_SR_LOCKED_OUT', until), { backUrl, email, lockedUntil: until })
  }
}
