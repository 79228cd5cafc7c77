import fp from 'fastify-plugin'
import formbody from '@fastify/formbody'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import redirectOnce from './redirect-once.js'
import { resolveOptions, type FastifySchoolsResourcesOptions } from './options.js'
import { memberLookup } from './member.js'
import { PageRenderer, resolveViews, sectionPaths } from './pages.js'
import { memberPageServer, sectionRoutes, type MemberPageDeps } from './section-routes.js'
import { signInRoutes } from './sign-in-routes.js'
import { stylesheetPolicy, stylesheetRoute } from './assets.js'
import { registerCsrf } from './csrf.js'
import { registerSecurityHeaders } from './security-headers.js'
import { loginRateLimit } from './login-rate-limit.js'
import { Lockout } from './lockout.js'
import { anonymousFastPath, registerWithFastPath } from './anonymous-fast-path.js'
import { storeErrorHandler } from './store-errors.js'

const FORM = 'application/x-www-form-urlencoded'

/** Wires the pieces together; each lives in its own module. */
const schoolsResources: FastifyPluginAsync<FastifySchoolsResourcesOptions> = async function (fastify, options) {
  const opts = resolveOptions(options)
  await fastify.register(redirectOnce, { baseUrl: opts.baseUrl, conflictLog: opts.conflictLog })
  // Set only when resourcesSession can read members' sessions: the section then adds its page server.
  const memberFastPath = registerWithFastPath(fastify, opts)

  // Store failures (Redis down or slow) on our routes become a clear 503, in a context of its own around
  // the section, so the section's own error handler (forms) passes them on to it.
  await fastify.register(async function schoolsResourcesStoreErrors (outer: FastifyInstance) {
    outer.setErrorHandler(storeErrorHandler)
    await outer.register(schoolsResourcesSection)
  })

  // Routes live in their own context so the form parser, CSRF, rate limit and security headers stay
  // ours and do not leak into the host.
  async function schoolsResourcesSection (section: FastifyInstance) {
    if (!section.hasContentTypeParser(FORM)) await section.register(formbody)
    // The default policy, plus the origin of a host stylesheet on another site; the host's helmet options still win.
    const securityHeaders = await registerSecurityHeaders(section, opts.helmet === false ? false : { contentSecurityPolicy: stylesheetPolicy(opts.stylesheet), ...opts.helmet })
    const memberOf = memberLookup(opts)
    const paths = sectionPaths(opts)
    const pages = new PageRenderer(resolveViews(opts.views), opts, paths)
    if (opts.stylesheet.servePath !== undefined) stylesheetRoute(section, opts.stylesheet.servePath)
    sectionRoutes(section, { catalog: opts.catalog, memberOf, pages, paths, prefix: opts.prefix, baseUrl: opts.baseUrl, loginPath: opts.loginPath })
    let csrf: MemberPageDeps['csrf'] = 'none'
    if (opts.authenticate !== undefined && opts.signIn) {
      const { verify: verifyCsrf, own } = await registerCsrf(section)
      csrf = own ? 'plugin' : 'host'
      signInRoutes(section, {
        authenticate: opts.authenticate,
        memberOf,
        pages,
        paths,
        baseUrl: opts.baseUrl,
        sessionKey: opts.sessionKey,
        lockout: opts.lockout === false ? undefined : new Lockout(opts.lockout),
        verifyCsrf,
        rateLimit: opts.loginRateLimit === false ? undefined : await loginRateLimit(section, opts.loginRateLimit)
      })
    }
    if (memberFastPath !== undefined) memberFastPath.serveMember = memberPageServer({ catalog: opts.catalog, pages, securityHeaders, csrf })
  }
}

export const fastifySchoolsResources = fp(schoolsResources, {
  fastify: '5.x',
  name: 'fastify-schools-resources',
  dependencies: ['@fastify/cookie', '@fastify/session']
})
export default fastifySchoolsResources

export { redirectOnce }
export { anonymousFastPath }
export { resourcesSession } from './resources-session.js'
export type { ResourcesSessionOptions } from './resources-session.js'
export { CachedSigner } from './cached-signer.js'
export type { CachedSignerOptions } from './cached-signer.js'
export type { AnonymousFastPathOptions } from './anonymous-fast-path.js'
export type { RedirectOnceOptions } from './redirect-once.js'
export type { ConflictLogOption } from './conflict-log.js'
export { REDIRECT_STATUS_CODES } from './redirect-once.js'
export type { FastifySchoolsResourcesOptions, Credentials } from './options.js'
export { InMemoryCatalog, isSlug } from './catalog.js'
export type { Catalog, CatalogData, Category, CategoryWithResources, Resource, ResourceFormat } from './catalog.js'
export type { Member } from './member.js'
export { defaultViews } from './views.js'
export type { Views, Page, PageContext, LoginViewData, CategoryViewData } from './views.js'
export type { ResourceFilter } from './filters.js'
export { defaultStylesheet } from './assets.js'
export { html, unsafeRaw, SafeHtml } from './html.js'
export { phpUrlencode, loginRedirectUrl, safeBackUrl, MAX_BACK_URL_LENGTH } from './back-url.js'
export { MemoryAttemptStore } from './attempt-store.js'
export type { AttemptStore, AttemptCount } from './attempt-store.js'
export type { LockoutOptions } from './lockout.js'
export type { LoginRateLimitOptions } from './login-rate-limit.js'
export { RedisSessionStore } from './redis-session-store.js'
export type { RedisSessionStoreOptions } from './redis-session-store.js'
export { RedisAttemptStore } from './redis-attempt-store.js'
export { redisRateLimitStore } from './redis-rate-limit-store.js'
export type { RedisCommandClient, RedisStoreOptions } from './redis-client.js'
export { FST_SR_STORE_UNAVAILABLE, isStoreUnavailable, sendStoreUnavailable, storeErrorHandler, STORE_RETRY_AFTER_SECONDS } from './store-errors.js'
export { CONTENT_SECURITY_POLICY } from './security-headers.js'
export {
  FST_SR_INVALID_OPTION,
  FST_SR_INVALID_REDIRECT_CODE,
  FST_SR_INVALID_REDIRECT_URL,
  FST_SR_INVALID_MEMBER,
  FST_SR_BAD_HOST,
  REDIRECT_CONFLICT_WARNING
} from './errors.js'
