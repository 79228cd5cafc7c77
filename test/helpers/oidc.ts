// Two real OpenID providers for tests, both on loopback ports: oidc-provider (panva's certified provider,
// for the journeys) and a small one of our own built with jose, for the answers a conforming provider
// never gives (a wrong issuer or audience, an expired token, a wrong nonce, a bad signature).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider, { type KoaContextWithOIDC } from 'oidc-provider'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { BASE_URL } from './app.js'

export const CLIENT_ID = 'resources-section'
export const CLIENT_SECRET = 'a-client-secret-for-the-tests'

/** The redirect URI the section registers for provider `id` (BASE_URL, the default login path). */
export function callbackUrl (id: string, base = BASE_URL, login = '/Security/login'): string {
  return `${base}${login}/oidc/${id}/callback`
}

async function listen (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server, origin: string }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

function close (server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

export interface Idp {
  issuer: string
  provider: Provider
  close (): Promise<void>
}

/** An account at the provider: its claims (`email`, `email_verified`, `hd`, `tid`, `name`). */
export type Accounts = Record<string, Record<string, unknown>>

/** oidc-provider on a loopback port, with one client for the section (and one for a host's @fastify/oauth2). */
export async function startIdp (accounts: Accounts, redirectUris: string[] = [callbackUrl('school')], postLogout: string[] = [`${BASE_URL}/schools/resources/`]): Promise<Idp> {
  // The issuer is the server's address, known once it listens: the handler finds the provider here.
  const made: { provider?: Provider } = {}
  const { server, origin } = await listen((req, res) => { made.provider!.callback()(req, res) })
  const provider = made.provider = new Provider(origin, {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: redirectUris,
      post_logout_redirect_uris: postLogout,
      grant_types: ['authorization_code'],
      response_types: ['code']
    }],
    async findAccount (_ctx, sub) {
      const claims = accounts[sub]
      return claims === undefined ? undefined : { accountId: sub, claims: async () => ({ sub, ...claims }) }
    },
    claims: { openid: ['sub', 'hd', 'tid'], email: ['email', 'email_verified'], profile: ['name'] },
    // The claims in the ID token itself, as Google and Entra send them.
    conformIdTokenClaims: false,
    cookies: { keys: ['a-cookie-key-for-the-test-provider'] },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    // A first-party client: no consent screen.
    async loadExistingGrant (ctx: KoaContextWithOIDC) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId })
      grant.addOIDCScope('openid email profile')
      grant.addOIDCClaims(['email', 'email_verified', 'name', 'hd', 'tid'])
      await grant.save()
      return grant
    }
  })
  return { issuer: origin, provider, close: () => close(server) }
}

/** A browser's cookies for one site, enough for oidc-provider's interaction cookies. */
class Jar {
  readonly #cookies = new Map<string, string>()
  take (res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at)
      const value = pair.slice(at + 1)
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.#cookies.delete(name)
      else this.#cookies.set(name, value)
    }
  }

  get header (): string {
    return [...this.#cookies].map(([n, v]) => `${n}=${v}`).join('; ')
  }
}

/**
 * What a person does at the provider, from the authorization URL the section sent them to: sign in as
 * `login` (or cancel), until the provider sends the browser back. Resolves to that address.
 */
export async function atProvider (authorizationUrl: string, login: string | 'cancel'): Promise<URL> {
  const jar = new Jar()
  let next = new URL(authorizationUrl)
  const origin = next.origin
  for (let step = 0; step < 10; step++) {
    const res = await fetch(next, { redirect: 'manual', headers: { cookie: jar.header } })
    jar.take(res)
    if (res.status === 200 && /\/interaction\//.test(next.pathname)) {
      await res.text()
      const submit = login === 'cancel'
        ? await fetch(`${next.href}/abort`, { redirect: 'manual', headers: { cookie: jar.header } })
        : await fetch(next, { method: 'POST', redirect: 'manual', headers: { cookie: jar.header, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ prompt: 'login', login, password: 'any' }) })
      jar.take(submit)
      next = new URL(submit.headers.get('location')!, origin)
    } else {
      const location = res.headers.get('location')
      if (location === null) throw new Error(`the provider answered ${res.status} at ${next.pathname}: ${await res.text()}`)
      next = new URL(location, origin)
    }
    if (next.origin !== origin) return next
  }
  throw new Error('the provider did not send the browser back')
}

/** The `name=value` pairs of the cookies an inject response set, for the next request's Cookie header. */
export function cookiesOf (res: LightMyRequestResponse, previous = ''): string {
  const jar = new Map(previous === '' ? [] : previous.split('; ').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] as [string, string]))
  for (const c of res.cookies) {
    if (c.value === '' || (c.expires !== undefined && c.expires.getTime() < Date.now())) jar.delete(c.name)
    else jar.set(c.name, c.value)
  }
  return [...jar].map(([n, v]) => `${n}=${v}`).join('; ')
}

/** A browser's whole sign-in at `provider` through the section in `app`: the start, the provider, the callback. */
export async function oidcJourney (app: FastifyInstance, opts: { provider?: string, login: string | 'cancel', back?: string, cookie?: string }): Promise<{ start: LightMyRequestResponse, callback: LightMyRequestResponse, cookie: string }> {
  const id = opts.provider ?? 'school'
  const start = await app.inject({ url: `/Security/login/oidc/${id}${opts.back === undefined ? '' : `?BackURL=${encodeURIComponent(opts.back)}`}`, headers: opts.cookie === undefined ? {} : { cookie: opts.cookie } })
  if (start.statusCode !== 302) throw new Error(`the start answered ${start.statusCode}: ${start.body}`)
  const cookie = cookiesOf(start, opts.cookie)
  const back = await atProvider(start.headers.location as string, opts.login)
  const callback = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie } })
  return { start, callback, cookie: cookiesOf(callback, cookie) }
}

/** What the test provider's next ID token is: claims to change, or a key it is not signed with. */
export interface TokenPlan {
  claims?: Record<string, unknown>
  /** Sign with a key the JWKS does not hold. */
  wrongKey?: boolean
  /** The token endpoint answers this status with an error body instead. */
  status?: number
  /** The token endpoint never answers. */
  hang?: boolean
}

export interface TestProvider {
  issuer: string
  /** The plan for the next token request (reset after it). */
  plan: TokenPlan
  /** Discovery answers 500 while set. */
  discoveryFails: boolean
  /** How many discovery requests it answered. */
  discoveries: number
  /** The code to come back with for an authorization URL (the test plays the provider's part): its nonce goes into the ID token. */
  codeFor (authorizationUrl: string): { code: string, state: string }
  close (): Promise<void>
}

/**
 * A provider of our own: discovery, a JWKS and a token endpoint that signs an ID token with jose, as the
 * test's plan says. Its authorization endpoint is never reached: the test reads state and nonce from the
 * authorization URL and comes back with a code of its choosing.
 */
export async function startTestProvider (opts: { endSession?: boolean } = {}): Promise<TestProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const other = await generateKeyPair('RS256')
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  const nonces = new Map<string, string>()
  let issuer = ''
  const state: TestProvider = {
    issuer: '',
    plan: {},
    discoveryFails: false,
    discoveries: 0,
    codeFor (authorizationUrl) {
      const url = new URL(authorizationUrl)
      const code = `code-${nonces.size + 1}`
      nonces.set(code, url.searchParams.get('nonce')!)
      return { code, state: url.searchParams.get('state')! }
    },
    close: async () => {}
  }
  const { server, origin } = await listen((req, res) => {
    const url = new URL(req.url!, issuer)
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (url.pathname === '/.well-known/openid-configuration') {
      state.discoveries++
      if (state.discoveryFails) return json(500, { error: 'server_error' })
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        ...(opts.endSession === true ? { end_session_endpoint: `${issuer}/logout` } : {})
      })
    }
    if (url.pathname === '/jwks') return json(200, { keys: [jwk] })
    if (url.pathname === '/token') {
      let body = ''
      req.on('data', (chunk) => { body += chunk })
      req.on('end', async () => {
        const plan = state.plan
        state.plan = {}
        if (plan.hang === true) return
        if (plan.status !== undefined) return json(plan.status, { error: plan.status >= 500 ? 'server_error' : 'invalid_grant' })
        const code = new URLSearchParams(body).get('code') ?? ''
        const now = Math.floor(Date.now() / 1000)
        const claims = { iss: issuer, aud: CLIENT_ID, sub: 'sub-1', iat: now, exp: now + 300, nonce: nonces.get(code), email: 'ada@school.example', email_verified: true, ...plan.claims }
        const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(plan.wrongKey === true ? other.privateKey : privateKey)
        json(200, { access_token: 'an-access-token', token_type: 'Bearer', expires_in: 300, id_token: idToken })
      })
      return
    }
    json(404, { error: 'not_found' })
  })
  issuer = origin
  state.issuer = origin
  state.close = () => close(server)
  return state
}
