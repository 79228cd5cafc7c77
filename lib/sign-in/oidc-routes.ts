// Sign in with the school's account (docs/oidc.md): `GET {loginPath}/oidc/{id}` starts an authorization
// code flow with PKCE, state and nonce; `GET {loginPath}/oidc/{id}/callback` (the redirect URI) ends in
// the same step as the password form. What the round trip needs lives in a short, signed, HttpOnly cookie,
// never in the session: an abandoned sign-in leaves nothing in the store.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorCodes } from '../errors.js'
import { eventBase, signInFailed } from '../events.js'
import { isHttpsBase, siteOrigin } from '../redirect/site-origin.js'
import type { SignInStepDeps } from '../session/sign-in-step.js'
import { REMEMBER_FIELD, wantsRemember } from '../session/remember-me.js'
import { isJsonClient } from '../pages/negotiation.js'
import { inEnglish, type AnswerLanguage, type Said } from '../pages/answer-language.js'
import type { SectionPaths } from '../pages/page-renderer.js'
import { page, redirect, routeSchema, type OpenApi, type RouteDoc } from '../pages/openapi.js'
import { safeBackUrl } from './back-url.js'
import type { OidcClaims, OidcProvider, ResolvedOidc } from './oidc-options.js'
import { PROVIDER_TIMEOUT_SECONDS, providerUnavailable, type ProviderConfigs } from './oidc-client.js'
import type { SignInLimits } from './limits.js'
import type { NewSessions } from './new-sessions.js'
import { refusalError, refusalSaid, type LoginPageData } from './refusals.js'
import { signInAndReturn } from './sign-in-member.js'

const { FST_SR_OIDC_REFUSED, FST_SR_OIDC_UNAVAILABLE } = errorCodes
// A member past lockout.maxNewSessionsPerMinute (sign-in-member.ts): the login page, as the password form shows it.
const SESSION_RATE_LIMITED: keyof typeof errorCodes = 'FST_SR_SESSION_RATE_LIMITED'
// Codes compared as strings: @fastify/error names every error class 'FastifyError', so `.name` is no code.
const UNAVAILABLE: keyof typeof errorCodes = 'FST_SR_OIDC_UNAVAILABLE'
const REFUSED: keyof typeof errorCodes = 'FST_SR_OIDC_REFUSED'

/** How long a started sign-in may take at the provider: the state cookie's life. */
export const STATE_MAX_AGE_SECONDS = 10 * 60
/** A state that marks a restart, so that a second miss says what happened instead of looping. */
const RETRY_MARK = '.r'

// What the login page (or the JSON `message`) says of each refusal, in the page's language.
const MESSAGES = {
  school: { key: 'login.error.oidcSchoolAccount' },
  noMember: { key: 'login.error.oidcNoMember' },
  failed: (label: string) => ({ key: 'login.error.oidcFailed', values: { provider: label } }),
  cancelled: (label: string) => ({ key: 'login.error.oidcCancelled', values: { provider: label } }),
  cookieLost: { key: 'login.error.oidcCookieLost' }
} satisfies Record<string, Said | ((label: string) => Said)>

/** What the round trip keeps in the state cookie. */
interface HeldState {
  /** state, nonce, PKCE verifier */
  s: string
  n: string
  v: string
  /** The checked return address, as given. */
  b?: string
  /** When it was made, in epoch milliseconds. */
  t: number
  /** 1: "Keep me signed in on this device" was ticked (the start's `remember` query field). */
  r?: 1
}

export interface OidcRouteDeps {
  oidc: ResolvedOidc
  configs: ProviderConfigs
  step: SignInStepDeps
  paths: SectionPaths
  /** The login path as the routes are registered (Fastify puts the register prefix in front). */
  route: string
  baseUrl: string
  returnParam: string
  limits: SignInLimits | undefined
  /** The bound on a member's new sessions per minute, with the lockout on (the same as the password form's). */
  newSessions: NewSessions | undefined
  openapi: OpenApi
  /** The login page with `data` and `status` (the section's, with the CSRF token of its password form). */
  loginPage: (reply: FastifyReply, status: number, data: LoginPageData) => unknown
  /** The language of a JSON refusal's `message` (the login page's is the page's). */
  answers: AnswerLanguage
}

/** The address of a provider's button: its start route, with the return address when there is one. */
export function providerHref (paths: SectionPaths, id: string, returnParam: string, backUrl: string | undefined): string {
  const start = `${paths.login}/oidc/${id}`
  return backUrl === undefined ? start : `${start}?${returnParam}=${encodeURIComponent(backUrl)}`
}

function cookieName (id: string): string {
  return `sr_oidc_${id}`
}

function encodeState (held: HeldState): string {
  return Buffer.from(JSON.stringify(held)).toString('base64url')
}

/** The state cookie's content when it is ours (signed) and young enough; anything else is no state. */
function heldState (request: FastifyRequest, name: string): HeldState | undefined {
  const raw = request.cookies[name]
  if (raw === undefined) return undefined
  const unsigned = request.unsignCookie(raw)
  if (!unsigned.valid || unsigned.value === null) return undefined
  try {
    const held = JSON.parse(Buffer.from(unsigned.value, 'base64url').toString('utf8')) as HeldState
    const fresh = typeof held.t === 'number' && Date.now() - held.t < STATE_MAX_AGE_SECONDS * 1000
    return fresh && typeof held.s === 'string' && typeof held.n === 'string' && typeof held.v === 'string' ? held : undefined
  } catch {
    return undefined
  }
}

function claimRefusal (provider: OidcProvider, claims: OidcClaims): string | undefined {
  if (provider.allowedDomains !== undefined) {
    // Google sends `hd` only for a Workspace account: a personal account with a school address has none.
    if (typeof claims.hd !== 'string' || !provider.allowedDomains.includes(claims.hd.toLowerCase())) return 'oidc-domain'
  }
  if (provider.allowedEmailDomains !== undefined) {
    if (claims.email_verified !== true) return 'oidc-email-unverified'
    const domain = typeof claims.email === 'string' ? claims.email.slice(claims.email.lastIndexOf('@') + 1).toLowerCase() : ''
    if (!provider.allowedEmailDomains.includes(domain)) return 'oidc-email-domain'
  }
  if (provider.allowedTenants !== undefined) {
    if (typeof claims.tid !== 'string' || !provider.allowedTenants.includes(claims.tid.toLowerCase())) return 'oidc-tenant'
  }
  return undefined
}

export function oidcRoutes (fastify: FastifyInstance, deps: OidcRouteDeps): void {
  const { oidc, configs, paths, returnParam, baseUrl } = deps
  const client = configs.client
  const byId = new Map(oidc.providers.map((p) => [p.id, p]))
  const cookiePath = `${paths.login}/oidc/`
  const secure = isHttpsBase(baseUrl) ? true : 'auto'
  const redirectUri = (id: string) => `${baseUrl}${paths.login}/oidc/${id}/callback`

  function failed (request: FastifyRequest, reason: string, provider: string): void {
    if (signInFailed.hasSubscribers) signInFailed.publish({ ...eventBase(request, paths.index), reason, identifierHash: undefined, provider })
  }

  /** The login page with the refusal's message, or for a JSON client the error with its code; 403 unless `status`. */
  function refuse (reply: FastifyReply, error: FastifyError, backUrl: string | undefined, said: Said = refusalSaid(error)) {
    const status = Number(error.statusCode)
    reply.header('cache-control', 'no-store')
    if (error.code === UNAVAILABLE) reply.header('retry-after', String(PROVIDER_TIMEOUT_SECONDS))
    if (isJsonClient(reply.request)) return deps.answers.sendJsonError(reply, status, error.code, said)
    return deps.loginPage(reply, status, { backUrl, error: said })
  }

  /** A refusal that counts under the per-address limit (a state that does not match, a refused account). */
  async function refuseCounted (request: FastifyRequest, reply: FastifyReply, reason: string, provider: OidcProvider, said: Said, backUrl: string | undefined) {
    await deps.limits?.countAddressFailure(request.ip)
    failed(request, reason, provider.id)
    return refuseWith(reply, said, backUrl)
  }

  /** FST_SR_OIDC_REFUSED saying `said`; the error's own message (English, for a log) is the English one. */
  function refuseWith (reply: FastifyReply, said: Said, backUrl: string | undefined) {
    return refuse(reply, new FST_SR_OIDC_REFUSED(inEnglish(said)), backUrl, said)
  }

  const unavailable = (provider: OidcProvider, backUrl?: string) => (reply: FastifyReply) =>
    refuse(reply, new FST_SR_OIDC_UNAVAILABLE(provider.label), backUrl, { key: 'error.FST_SR_OIDC_UNAVAILABLE', values: { provider: provider.label } })

  const startDoc: RouteDoc = {
    summary: 'Sign in with an OpenID provider',
    description: `Starts the provider's sign-in (authorization code with PKCE): a short signed state cookie, and a redirect to the provider. Query: an optional ${returnParam}, a path on this site to return to.`,
    answers: {
      302: redirect('Found: to the provider\'s sign-in page'),
      404: page('Not Found: no provider with this id'),
      503: page('Service Unavailable: the provider cannot be reached (FST_SR_OIDC_UNAVAILABLE), with Retry-After')
    }
  }
  const callbackDoc: RouteDoc = {
    summary: 'The OpenID provider\'s redirect back (the redirect URI)',
    description: 'Checks the state, exchanges the code, validates the ID token and the school\'s rules, and signs the member in. Without a state cookie of ours, it starts again once.',
    answers: {
      302: redirect('Found: the state cookie was missing or stale (or the provider started the sign-in): the sign-in starts again'),
      303: redirect('See Other: signed in (a new session id); to the return address, or the section index'),
      403: page('Forbidden: the sign-in was refused or cancelled (FST_SR_OIDC_REFUSED): the login page with the reason'),
      404: page('Not Found: no provider with this id'),
      429: deps.limits === undefined
        ? undefined
        : page(`Too Many Requests: this address failed too often (FST_SR_LOGIN_RATE_LIMITED)${deps.newSessions === undefined ? '' : ', or the member signed in too often this minute (FST_SR_SESSION_RATE_LIMITED)'}, with Retry-After`),
      503: page('Service Unavailable: the provider cannot be reached (FST_SR_OIDC_UNAVAILABLE), or the store is down; with Retry-After')
    }
  }

  fastify.get(`${deps.route}/oidc/:id`, { schema: routeSchema(deps.openapi, startDoc) }, async function oidcStart (request, reply) {
    const provider = byId.get((request.params as { id: string }).id)
    if (provider === undefined) return reply.callNotFound()
    const query = request.query as Record<string, unknown>
    const retry = query.retry === '1'
    // A restart has no return address: it ends on the section index.
    const given = retry ? undefined : query[returnParam]
    const backUrl = safeBackUrl(given, siteOrigin(request, baseUrl)) === undefined ? undefined : given as string
    let config
    try {
      config = await configs.of(provider)
    } catch {
      return unavailable(provider, backUrl)(reply)
    }
    const held: HeldState = { s: client.randomState() + (retry ? RETRY_MARK : ''), n: client.randomNonce(), v: client.randomPKCECodeVerifier(), t: Date.now() }
    if (backUrl !== undefined) held.b = backUrl
    if (deps.step.rememberMe !== undefined && !retry && wantsRemember(query[REMEMBER_FIELD])) held.r = 1
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri(provider.id),
      scope: provider.scopes.join(' '),
      state: held.s,
      nonce: held.n,
      code_challenge: await client.calculatePKCECodeChallenge(held.v),
      code_challenge_method: 'S256'
    })
    reply.setCookie(cookieName(provider.id), encodeState(held), { path: cookiePath, httpOnly: true, sameSite: 'lax', secure, signed: true, maxAge: STATE_MAX_AGE_SECONDS })
    reply.header('cache-control', 'no-store')
    return reply.redirect(url.href, 302)
  })

  fastify.get(`${deps.route}/oidc/:id/callback`, { schema: routeSchema(deps.openapi, callbackDoc) }, async function oidcCallback (request, reply) {
    const provider = byId.get((request.params as { id: string }).id)
    if (provider === undefined) return reply.callNotFound()
    const query = request.query as Record<string, unknown>
    const name = cookieName(provider.id)
    const held = heldState(request, name)
    // Used once, whatever happens next.
    if (request.cookies[name] !== undefined) reply.clearCookie(name, { path: cookiePath, httpOnly: true, sameSite: 'lax', secure, signed: true })
    reply.header('cache-control', 'no-store')
    const state = typeof query.state === 'string' ? query.state : undefined
    if (held === undefined) {
      // No state of ours: a dropped or stale cookie, or a sign-in the provider started (Clever does). Once
      // again from the start; a second miss says what happened.
      if (state?.endsWith(RETRY_MARK) === true) {
        failed(request, 'oidc-cookie-lost', provider.id)
        return refuseWith(reply, MESSAGES.cookieLost, undefined)
      }
      return reply.redirect(`${paths.login}/oidc/${provider.id}?retry=1`, 302)
    }
    const backUrl = held.b
    const limited = await deps.limits?.addressRefusal(request.ip)
    if (limited !== undefined) {
      reply.header('retry-after', String(Math.max(1, Math.ceil((limited.until.getTime() - Date.now()) / 1000))))
      failed(request, 'rate-limited', provider.id)
      return refuse(reply, refusalError('FST_SR_LOGIN_RATE_LIMITED', limited.until), backUrl)
    }
    if (state !== held.s) return refuseCounted(request, reply, 'oidc-state', provider, MESSAGES.failed(provider.label), backUrl)
    if (query.error !== undefined) {
      failed(request, 'oidc-cancelled', provider.id)
      return refuseWith(reply, MESSAGES.cancelled(provider.label), backUrl)
    }
    let claims: OidcClaims
    try {
      const config = await configs.of(provider)
      const current = new URL(redirectUri(provider.id))
      current.search = new URLSearchParams(query as Record<string, string>).toString()
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: held.v,
        expectedState: held.s,
        expectedNonce: held.n,
        idTokenExpected: true
      })
      claims = tokens.claims() as OidcClaims
    } catch (err) {
      if ((err as FastifyError).code === UNAVAILABLE || providerUnavailable(err)) return unavailable(provider, backUrl)(reply)
      request.log.info({ code: REFUSED, provider: provider.id, reason: (err as Error).message }, 'fastify-schools-resources: OpenID sign-in refused: the provider\'s answer did not pass the checks')
      return refuseCounted(request, reply, 'oidc-token', provider, MESSAGES.failed(provider.label), backUrl)
    }
    const refused = claimRefusal(provider, claims)
    if (refused !== undefined) return refuseCounted(request, reply, refused, provider, MESSAGES.school, backUrl)
    const member: unknown = await oidc.resolveMember(claims, { provider: provider.id, request })
    if (member === null || member === undefined) return refuseCounted(request, reply, 'oidc-no-member', provider, MESSAGES.noMember, backUrl)
    try {
      // Not a member: FST_SR_INVALID_MEMBER naming resolveMember (the step checks it).
      return await signInAndReturn(reply, member, backUrl, { method: 'oidc', provider: provider.id, remember: held.r === 1 }, deps.step, 'resolveMember', deps.newSessions)
    } catch (err) {
      // Past the member's bound on new sessions: the login page saying until when (Retry-After is set).
      if ((err as FastifyError).code === SESSION_RATE_LIMITED) return refuse(reply, err as FastifyError, backUrl)
      throw err
    }
  })
}

/** Where the browser goes after the section's own sign-out for a member who signed in with `provider`: its end_session_endpoint, or nowhere. */
export async function providerSignOut (configs: ProviderConfigs, provider: OidcProvider | undefined, postLogout: string): Promise<string | undefined> {
  if (provider?.endSession !== true) return undefined
  try {
    const config = await configs.of(provider)
    if (config.serverMetadata().end_session_endpoint === undefined) return undefined
    // No id_token_hint: no ID token is kept. The provider asks the member, or signs out at once.
    return configs.client.buildEndSessionUrl(config, { client_id: provider.clientId, post_logout_redirect_uri: postLogout }).href
  } catch {
    // The provider is down: the sign-out here is done; theirs waits.
    return undefined
  }
}
