// Entry: wires the features together. Each feature lives in its own folder (docs/architecture.md).
import fp from 'fastify-plugin'
import formbody from '@fastify/formbody'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { AnonymousRedirect } from './types.js'
import { resolveOptions, type FastifySchoolsResourcesOptions } from './options.js'
import redirectOnce from './redirect/redirect-once.js'
import { warnTrustProxy } from './redirect/site-origin.js'
import { memberLookup } from './session/member.js'
import { chooseSessionAdapter } from './session/session-adapter.js'
import { registerCsrf } from './session/csrf.js'
import { memberById, MemberFinder } from './session/find-member.js'
import { withTimeouts } from './session/timeouts.js'
import { RememberMe, withRememberMe } from './session/remember-me.js'
import { forgetDevicesOf, rememberedSignIn, warnRememberStoreNotShared } from './session/remembered-sign-in.js'
import { decorateSignOutEverywhere, Generations, withGenerations } from './session/sign-out-everywhere.js'
import { mountPoint, PageRenderer, resolveViews, sectionPaths } from './pages/page-renderer.js'
import { stylesheetPolicy, stylesheetRoute } from './pages/stylesheet.js'
import { registerSecurityHeaders, securityHeaders } from './pages/security-headers.js'
import { storeErrorHandler } from './pages/unavailable.js'
import { sectionErrorHandler } from './pages/server-error.js'
import { AnswerLanguage, hasAnswerLanguage, setAnswerLanguage } from './pages/answer-language.js'
import { sectionRoutes } from './section/section-routes.js'
import { checkedCatalog } from './section/catalog.js'
import { guardHostRoutes } from './access/members-only.js'
import type { MembersOnlyDeps } from './access/members-only-kit.js'
import { fileRoutes } from './files/file-routes.js'
import { servesSignIn, signInRoutes } from './sign-in/sign-in-routes.js'
import { SignInLimits, warnWithoutDeviceSecret, warnWithoutReservations } from './sign-in/limits.js'
import { PasswordChecks } from './sign-in/password-checks.js'
import { NewSessions } from './sign-in/new-sessions.js'
import { decorateSignInMember } from './sign-in/sign-in-member.js'
import type { SignInStepDeps } from './session/sign-in-step.js'
import { oidcConfigs } from './sign-in/oidc-client.js'
import { MemoryTokenStore } from './stores/token-store.js'
import { passwordResetRoutes, resetPaths } from './password-reset/routes.js'
import { RESET_OWNER_PREFIX, ResetTokens } from './password-reset/tokens.js'

const FORM = 'application/x-www-form-urlencoded'

// Per app (its root instance): the in-process remember tokens every section of it shares by default, so
// that a device remembered at the shared sign-in is known to each section's guard.
const defaultTokenStores = new WeakMap<object, MemoryTokenStore>()
function defaultTokenStore (fastify: FastifyInstance): MemoryTokenStore {
  let store = defaultTokenStores.get(fastify.server)
  if (store === undefined) defaultTokenStores.set(fastify.server, store = new MemoryTokenStore())
  return store
}
const DAYS_400 = 400 * 24 * 60 * 60 * 1000

const schoolsResources: FastifyPluginAsync<FastifySchoolsResourcesOptions> = async function (fastify, options) {
  const opts = resolveOptions(options)
  // A host locale's missing message is said in the app's log, once per locale and key.
  opts.translations.useLog(fastify.log)
  // This is a fastify-plugin plugin, so Fastify does not read its `prefix` option as a register prefix:
  // it is the section's own path. The register prefix of the context it is registered in (a wrapping
  // `register(fn, { prefix })`, an autoload folder) moves its routes, so every link goes under it too.
  const mount = mountPoint(fastify.prefix)
  const paths = sectionPaths(opts, mount)
  // A session plugin only where the section keeps a session: with signIn off and getMember, none.
  // (fastify-plugin's `dependencies` cannot say "sometimes", so the check is here.)
  const session = opts.signIn || opts.getMember === undefined
    ? chooseSessionAdapter(fastify, opts, opts.signIn ? 'signIn is on' : 'without getMember the member is read from the session')
    : undefined
  // With findMember, the session keeps the member's id and each request loads the member (session/find-member.ts).
  // findMember comes without getMember (options.ts), so there is a session.
  const finder = opts.findMember === undefined ? undefined : new MemberFinder(opts.findMember.find, opts.findMember.cache)
  // "Keep me signed in on this device" (session/remember-me.ts). Off with getMember (options.ts), so there is a session.
  const rememberMe = opts.rememberMe === false ? undefined : new RememberMe({ maxAgeMs: opts.rememberMe.maxAgeMs, store: opts.rememberMe.store ?? defaultTokenStore(fastify) })
  const found = finder === undefined
    ? memberLookup(opts.getMember, session, opts.sessionKey)
    : memberById(session!, opts.sessionKey, finder, rememberMe === undefined ? undefined : forgetDevicesOf(rememberMe))
  // Sign out everywhere: each member's generation count, held longer than any session it could end may
  // live (the absolute timeout, else 400 days, the longest a browser keeps a cookie). Off with getMember.
  const generations = opts.signOutEverywhere === false
    ? undefined
    : new Generations(opts.signOutEverywhere.store, opts.timeouts === false || opts.timeouts.absoluteMs === false ? DAYS_400 : opts.timeouts.absoluteMs)
  const lookup = generations === undefined ? found : withGenerations(found, session!, opts.sessionKey, generations)
  // The timeouts wrap every read of the member, so every guard (the host's routes too) enforces them.
  // Off with getMember (options.ts), so there is a session.
  const timed = opts.timeouts === false ? lookup : withTimeouts(lookup, session!, opts.sessionKey, opts.timeouts)
  const stylesheet = opts.stylesheet.servePath === undefined ? opts.stylesheet : { ...opts.stylesheet, href: `${mount}${opts.stylesheet.href}` }
  // The language of what the routes say outside their views (refusals, JSON messages, the 500 and 503 pages).
  const answers = new AnswerLanguage(opts.translations, opts.locales)
  const pages = new PageRenderer(resolveViews(opts.views), { ...opts, stylesheet, session, signOutEverywhere: generations !== undefined }, paths)
  // What a sign-out everywhere ends besides sessions: remembered devices and reset links, each under its own owners.
  const memberTokens = [
    ...(rememberMe === undefined ? [] : [{ store: rememberMe.store, ownerPrefix: '' }]),
    ...(opts.passwordReset === undefined ? [] : [{ store: opts.passwordReset.store, ownerPrefix: RESET_OWNER_PREFIX }])
  ]
  const everywhere = generations === undefined ? undefined : decorateSignOutEverywhere(fastify, generations, paths.index, memberTokens)
  // What a visitor of any members-only route gets: this section's login redirect, then its refused index redirect.
  const anonymous: AnonymousRedirect = { baseUrl: opts.baseUrl, loginPath: paths.login, indexPath: paths.index, returnParam: opts.returnParam }
  const sessionDecides = opts.getMember === undefined
  // The session's side of every sign-in (the password form, OpenID, a host's own callback) wherever the
  // section keeps a session; reply.signInMember only where it also reads its members from there.
  const step: SignInStepDeps | undefined = session === undefined
    ? undefined
    : { session, sessionKey: opts.sessionKey, keepSessionData: opts.keepSessionData, finder, section: paths.index, baseUrl: opts.baseUrl, timeouts: opts.timeouts, generations, rememberMe }
  // A remembered device without a session is signed in where the member is read with the reply at hand
  // (the guards, the index, the login page), behind every check the session's member passes.
  const memberOf = rememberMe === undefined ? timed : withRememberMe(timed, rememberMe, rememberedSignIn(step!, everywhere))
  // Every way in (the password form, OpenID, reply.signInMember) counts a member's new sessions in the
  // lockout's store, and refuses past lockout.maxNewSessionsPerMinute (sign-in/new-sessions.ts).
  const newSessions = opts.lockout === false ? undefined : new NewSessions(opts.lockout.store, opts.lockout.maxNewSessionsPerMinute)
  // What every members-only route shares, the section's (category pages, files) and the host's (access/members-only-kit.ts).
  const membersOnly: MembersOnlyDeps = { memberOf, pages, answers, anonymous, sessionDecides, restrictedCategories: opts.restrictedCategories }
  // The default policy, plus the origin of a host stylesheet on another site; the host's helmet options still win.
  const headers = securityHeaders(opts.helmet === false ? false : { contentSecurityPolicy: stylesheetPolicy(opts.stylesheet), ...opts.helmet })
  warnTrustProxy(fastify)
  await fastify.register(redirectOnce, { baseUrl: opts.baseUrl, conflictLog: opts.conflictLog })
  if (step !== undefined && sessionDecides) decorateSignInMember(fastify, step, newSessions)

  // Errors on our routes get the section's own answers: store failures (Redis down or slow) a clear 503,
  // other server errors its 500 page with nothing of the error in it (pages/server-error.ts). In a context
  // of its own around the section, so the section's own error handler (forms) passes them on to it. The
  // security headers are set there too, so that the error handler can set them again.
  const errors = sectionErrorHandler(headers)
  // The 500 and 503 pages find the language through request.server: the section's own routes in its
  // context; the host's members-only routes, in this one, unless an earlier section already put its own there.
  if (!hasAnswerLanguage(fastify)) setAnswerLanguage(fastify, answers)
  await fastify.register(async function schoolsResourcesErrors (outer: FastifyInstance) {
    setAnswerLanguage(outer, answers)
    registerSecurityHeaders(outer, headers)
    outer.setErrorHandler(errors)
    await outer.register(schoolsResourcesSection)
  })

  // The host's members-only routes (config.membersOnly, fastify.membersOnly()) in this context and below.
  guardHostRoutes(fastify, { ...membersOnly, securityHeaders: headers, answerError: errors }, opts.membersOnlyOutsideSection)

  // Routes live in their own context so the form parser and CSRF stay ours and do not leak into the host.
  async function schoolsResourcesSection (section: FastifyInstance) {
    if (!section.hasContentTypeParser(FORM)) await section.register(formbody)
    if (opts.stylesheet.servePath !== undefined) stylesheetRoute(section, opts.stylesheet.servePath, opts.openapi)
    const routes = {
      ...membersOnly,
      // Every record of a host's catalog is checked here, where it enters (InMemoryCatalog's already were).
      catalog: checkedCatalog(opts.catalog, section.log, paths.index),
      paths,
      prefix: opts.prefix,
      pageSize: opts.pageSize,
      openapi: opts.openapi
    }
    sectionRoutes(section, routes)
    await fileRoutes(section, { ...routes, root: opts.filesRoot })
    if (!opts.signIn) return
    // The logout forms' tokens, in every section; the routes in the first section with this login path.
    const csrf = await registerCsrf(section, opts.baseUrl)
    step!.renewCsrfCookie = csrf.dropCookie
    const settings = {
      authenticate: opts.authenticate,
      oidc: options.oidc,
      sessionKey: opts.sessionKey,
      logout: paths.logout,
      findMember: opts.findMember?.find,
      returnParam: opts.returnParam,
      timeouts: opts.timeouts,
      rememberMe: rememberMe === undefined ? false as const : rememberMe,
      passwordReset: opts.passwordReset?.given
    }
    if (!servesSignIn(section.server, paths, settings)) return
    const oidc = opts.oidc === undefined ? undefined : { options: opts.oidc, configs: await oidcConfigs(section) }
    if (opts.lockout !== false) warnWithoutDeviceSecret(section.log, opts.lockout)
    if (opts.lockout !== false && rememberMe !== undefined) warnRememberStoreNotShared(section.log, opts.lockout.store, rememberMe.store)
    warnWithoutReservations(section.log, [opts.lockout, opts.loginRateLimit].flatMap((limit) => limit === false ? [] : [limit.store]))
    const passwordChecks = new PasswordChecks(opts.passwordChecks)
    // Before the server waits for its requests to end: the sign-ins still in line are answered now.
    section.addHook('preClose', function passwordLineClose (done) {
      passwordChecks.close()
      done()
    })
    signInRoutes(section, {
      authenticate: opts.authenticate,
      oidc,
      memberOf,
      session: session!,
      pages,
      answers,
      paths,
      routes: { login: opts.loginPath, logout: opts.logoutPath },
      baseUrl: opts.baseUrl,
      returnParam: opts.returnParam,
      step: step!,
      newSessions,
      limits: opts.lockout === false && opts.loginRateLimit === false
        ? undefined
        : new SignInLimits(opts.lockout === false ? undefined : opts.lockout, opts.loginRateLimit === false ? undefined : opts.loginRateLimit),
      verifyCsrf: csrf.verify,
      passwordChecks,
      openapi: opts.openapi,
      auditKey: opts.auditKey,
      timeouts: opts.timeouts,
      signOutEverywhere: everywhere,
      rememberMe,
      lostPasswordUrl: opts.passwordReset === undefined ? undefined : resetPaths(paths.login).lostPassword
    })
    if (opts.passwordReset === undefined) return
    // passwordReset needs signOutEverywhere and baseUrl (options.ts): both are there.
    const tokens = new ResetTokens(opts.passwordReset.store, opts.passwordReset.expiresInMs)
    step!.endResetLinks = (memberId) => tokens.endAll(memberId)
    passwordResetRoutes(section, {
      reset: opts.passwordReset,
      tokens,
      session: session!,
      memberOf,
      pages,
      paths,
      loginRoute: opts.loginPath,
      baseUrl: opts.baseUrl!,
      step: step!,
      newSessions,
      verifyCsrf: csrf.verify,
      openapi: opts.openapi,
      auditKey: opts.auditKey,
      signOutEverywhere: everywhere!,
      lockoutStore: opts.lockout === false ? undefined : opts.lockout.store
    })
  }
}

export const fastifySchoolsResources = fp(schoolsResources, {
  fastify: '5.x',
  // No `dependencies`: @fastify/cookie and a session plugin are needed only when the section keeps a
  // session, which fastify-plugin cannot say; chooseSessionAdapter checks it at registration.
  name: 'fastify-schools-resources'
})
export default fastifySchoolsResources

// The public API: what a host needs to register, configure and extend the section (docs in README.md).
export { redirectOnce }
export { anonymousShortCircuit } from './access/anonymous-short-circuit.js'
export { InMemoryCatalog } from './section/catalog.js'
export { defaultViews } from './pages/views.js'
export { html, unsafeRaw, SafeHtml } from './pages/html.js'
export { CONTENT_SECURITY_POLICY } from './pages/security-headers.js'
export { safeBackUrl } from './sign-in/back-url.js'
export { signInLimitKeys } from './sign-in/limits.js'
export { MemoryAttemptStore } from './stores/attempt-store.js'
export { MemoryTokenStore } from './stores/token-store.js'
export { storeErrorHandler }
export { errorCodes } from './errors.js'
export { REDIRECT_CONFLICT_WARNING } from './warnings.js'
export { eventChannels, subscribeEvent } from './events.js'

export type { FastifySchoolsResourcesOptions } from './options.js'
export type { SchoolsResourcesApi, SignOutEverywhereCall } from './types.js'
export type { SignOutEverywhereOptions } from './session/sign-out-everywhere.js'
export type { RememberMeOptions } from './session/remember-me.js'
export type { PasswordResetOptions, ResetEmail } from './password-reset/options.js'
export type { Member, MembersOnlyOptions, SignInMemberOptions, Credentials, Catalog, CatalogData, Category, CategoryWithResources, Resource, ResourceFormat, CategoriesPage, CategoriesPageQuery, ResourcesPage, ResourcesPageQuery } from './types.js'
export type { Views, DefaultViews, Page, PageContext, LoginViewData, LostPasswordViewData, ChangePasswordViewData, CategoryViewData, IndexViewData, IndexCategory, ForbiddenViewData } from './pages/views.js'
export type { ResourceFilter } from './pages/filters.js'
export type { UrlResource, FileResource } from './types.js'
export type { AttemptStore, AttemptCount } from './stores/attempt-store.js'
export type { TokenStore, TokenRecord } from './stores/token-store.js'
export type { LockoutOptions, LoginRateLimitOptions } from './sign-in/limits.js'
export type { PasswordChecksOptions } from './sign-in/password-checks.js'
export type { RedirectOnceOptions } from './redirect/redirect-once.js'
export type { RedirectStatusCode } from './types.js'
export type { ConflictLogOption } from './redirect/conflict-log.js'
export type { AnonymousShortCircuitOptions } from './access/anonymous-short-circuit.js'
export type {
  SectionEvent, SignInFailureReason, SignInSucceededEvent, SignInFailedEvent, LockedOutEvent, SignedOutEvent, SignedOutEverywhereEvent, AccessRefusedEvent,
  FileDownloadedEvent, StoreUnavailableEvent, RedirectRefusedEvent, PasswordResetEvent, PasswordResetRefusal, SectionEvents, SectionEventName, SectionEventListener
} from './events.js'
export type { FindMember, FoundMember } from './session/find-member.js'
export type { OidcOptions, OidcProviderOptions, OidcClaims, ResolveMember } from './sign-in/oidc-options.js'
