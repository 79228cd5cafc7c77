// Issue 36: the answers a conforming provider never gives, from a small provider of our own (jose): each
// is refused by openid-client's checks (never by hand), answered with the login page, and stores nothing.
import t, { type Test } from 'tap'
import { MemoryAttemptStore, signInLimitKeys, type Member } from '../../lib/index.js'
import { buildTestApp, BASE_URL, capturedLogs, SECRET, type PluginOptions, type TestApp } from '../helpers/app.js'
import { providerUnavailable } from '../../lib/sign-in/oidc-client.js'
import { CLIENT_ID, cookiesOf, startTestProvider, type TestProvider, type TokenPlan } from '../helpers/oidc.js'

const ADA: Member = { id: 'm-ada', name: 'Ada Lovelace', email: 'ada@school.example' }

let tp: TestProvider
t.before(async () => { tp = await startTestProvider({ endSession: false }) })
t.teardown(() => tp.close())

async function build (t: Test, plugin: PluginOptions = {}): Promise<TestApp> {
  const built = await buildTestApp({
    fastify: { logger: { level: 'warn', stream: { write () {} } } },
    cookie: { secret: SECRET },
    plugin: {
      oidc: { providers: [{ id: 'own', label: 'Own', issuer: tp.issuer, clientId: CLIENT_ID, clientSecret: 'x-secret', endSession: true }], resolveMember: async () => ADA },
      ...plugin
    } as PluginOptions
  })
  t.teardown(() => built.app.close())
  return built
}

/** A sign-in whose token endpoint answers as `plan` says. */
async function callback (app: TestApp['app'], plan: TokenPlan | ((nonce: string) => TokenPlan)) {
  const start = await app.inject('/Security/login/oidc/own')
  const location = start.headers.location as string
  const { code, state } = tp.codeFor(location)
  tp.plan = typeof plan === 'function' ? plan(new URL(location).searchParams.get('nonce')!) : plan
  return app.inject({ url: `/Security/login/oidc/own/callback?code=${code}&state=${encodeURIComponent(state)}`, headers: { cookie: cookiesOf(start) } })
}

t.test('a good token from our own provider signs in (the baseline the refusals differ from)', async (t) => {
  const { app, store } = await build(t)
  const res = await callback(app, {})
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${BASE_URL}/schools/resources/`)
  t.equal(store.sessions.size, 1)
})

t.test('wrong issuer, wrong audience, expired, wrong nonce, bad signature: refused, nothing stored', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  const cases: Array<[string, TokenPlan]> = [
    ['wrong issuer', { claims: { iss: 'https://evil.example' } }],
    ['wrong audience', { claims: { aud: 'another-client' } }],
    ['expired', { claims: { iat: now - 3600, exp: now - 600 } }],
    ['wrong nonce', { claims: { nonce: 'not-the-nonce' } }],
    ['bad signature', { wrongKey: true }],
    ['token endpoint refuses the code', { status: 400 }]
  ]
  for (const [name, plan] of cases) {
    const { app, store } = await build(t)
    const res = await callback(app, plan)
    t.equal(res.statusCode, 403, name)
    t.match(res.body, 'Sign-in with Own could not be completed', name)
    t.equal(store.sessions.size, 0, `${name}: no session stored`)
  }
})

t.test('the token endpoint down or slow: 503 with Retry-After: 5, never a hang', async (t) => {
  const { app, store } = await build(t)
  const failing = await callback(app, { status: 502 })
  t.equal(failing.statusCode, 503)
  t.equal(failing.headers['retry-after'], '5')
  const slow = await callback(app, { hang: true })
  t.equal(slow.statusCode, 503, 'openid-client\'s timeout, 5 s')
  t.equal(store.sessions.size, 0)
})

t.test('discovery fails: 503, and it is not asked again for 30 s', async (t) => {
  const { app } = await build(t)
  tp.discoveryFails = true
  t.teardown(() => { tp.discoveryFails = false })
  const before = tp.discoveries
  t.equal((await app.inject('/Security/login/oidc/own')).statusCode, 503)
  tp.discoveryFails = false
  t.equal((await app.inject('/Security/login/oidc/own')).statusCode, 503, 'within 30 s: not asked')
  t.equal(tp.discoveries, before + 1)
  const realNow = Date.now
  Date.now = () => realNow() + 31_000
  t.teardown(() => { Date.now = realNow })
  const later = await app.inject('/Security/login/oidc/own')
  Date.now = realNow
  t.equal(later.statusCode, 302, 'asked again after 30 s')
  t.equal(tp.discoveries, before + 2)
})

t.test('a callback while discovery waits out its 30 s: 503 (the provider is down), not a refused token', async (t) => {
  // Two instances with one cookie secret: the sign-in starts on one, comes back to the other, whose
  // discovery has just failed (so it is not asked again for 30 s).
  const one = await build(t)
  const other = await build(t, { loginRateLimit: { max: 1 } })
  const back = async () => {
    const start = await one.app.inject('/Security/login/oidc/own')
    const { code, state } = tp.codeFor(start.headers.location as string)
    return other.app.inject({ url: `/Security/login/oidc/own/callback?code=${code}&state=${encodeURIComponent(state)}`, headers: { cookie: cookiesOf(start) } })
  }
  t.equal((await one.app.inject('/Security/login/oidc/own')).statusCode, 302, 'the first instance has discovered the provider')
  tp.discoveryFails = true
  t.teardown(() => { tp.discoveryFails = false })
  const failing = await back()
  t.equal(failing.statusCode, 503, 'discovery fails now')
  tp.discoveryFails = false
  for (let i = 0; i < 2; i++) {
    const waiting = await back()
    t.equal(waiting.statusCode, 503, 'within the 30 s: FST_SR_OIDC_UNAVAILABLE')
    t.equal(waiting.headers['retry-after'], '5')
    t.match(waiting.body, 'Sign-in with Own is briefly unavailable')
  }
  // Not counted as failures of this address (max 1): once discovery is asked again, the sign-in goes through.
  const realNow = Date.now
  Date.now = () => realNow() + 31_000
  t.teardown(() => { Date.now = realNow })
  const later = await back()
  Date.now = realNow
  t.equal(later.statusCode, 303)
  t.equal(other.store.sessions.size, 1)
})

t.test('a token that fails the checks says so in the log, with the refusal\'s code', async (t) => {
  const logs = capturedLogs()
  const { app } = await buildTestApp({
    fastify: { logger: { ...logs.logger as object, level: 'info' } },
    cookie: { secret: SECRET },
    plugin: { oidc: { providers: [{ id: 'own', label: 'Own', issuer: tp.issuer, clientId: CLIENT_ID, clientSecret: 'x-secret' }], resolveMember: async () => ADA } } as PluginOptions
  })
  t.teardown(() => app.close())
  t.equal((await callback(app, { wrongKey: true })).statusCode, 403)
  const [line] = logs.withCode('FST_SR_OIDC_REFUSED')
  t.match(line, { provider: 'own', msg: /OpenID sign-in refused/ })
  t.type(line.reason, 'string')
})

t.test('loginRateLimit: false: refused callbacks count nowhere, and none is refused for its address', async (t) => {
  const wrongNonce = { claims: { nonce: 'not-the-nonce' } }
  const address = signInLimitKeys('', '127.0.0.1').address
  // The control: with the limit on (max 2), two refusals and the address is refused.
  const limitedStore = new MemoryAttemptStore()
  const limited = await build(t, { lockout: { store: limitedStore }, loginRateLimit: { max: 2 } })
  for (let i = 0; i < 2; i++) t.equal((await callback(limited.app, wrongNonce)).statusCode, 403)
  t.equal((await limitedStore.get(address))?.count, 2, 'counted under the address')
  t.equal((await callback(limited.app, {})).statusCode, 429)

  const store = new MemoryAttemptStore()
  const { app, store: sessions } = await build(t, { lockout: { store }, loginRateLimit: false })
  for (let i = 0; i < 3; i++) t.equal((await callback(app, wrongNonce)).statusCode, 403)
  t.equal(await store.get(address), undefined, 'nothing counted under the address')
  t.equal((await callback(app, {})).statusCode, 303, 'the good sign-in goes through')
  t.equal(sessions.sessions.size, 1)
})

t.test('endSession on a provider without end_session_endpoint: local sign-out, said once in the log', async (t) => {
  const lines: Array<{ code?: string, msg: string }> = []
  const built = await buildTestApp({
    fastify: { logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } },
    cookie: { secret: SECRET },
    plugin: { oidc: { providers: [{ id: 'own', label: 'Own', issuer: tp.issuer, clientId: CLIENT_ID, clientSecret: 'x-secret', endSession: true }], resolveMember: async () => ADA } } as PluginOptions
  })
  t.teardown(() => built.app.close())
  const res = await callback(built.app, {})
  const cookie = cookiesOf(res)
  const page = await built.app.inject({ url: '/schools/resources/', headers: { cookie } })
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]
  const out = await built.app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: cookiesOf(page, cookie) }, payload: { _csrf: token } })
  t.equal(out.headers.location, '/schools/resources/')
  t.equal(lines.filter((l) => l.code === 'FST_SR_OIDC_END_SESSION').length, 1)
})

t.test('a public client (no clientSecret) on an http site without limits signs in with PKCE alone', async (t) => {
  const { app, store } = await build(t, {
    baseUrl: 'http://www.example.org',
    lockout: false,
    loginRateLimit: false,
    oidc: { providers: [{ id: 'own', label: 'Own', issuer: tp.issuer, clientId: CLIENT_ID }], resolveMember: async () => ADA }
  } as PluginOptions)
  const res = await callback(app, {})
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, 'http://www.example.org/schools/resources/')
  t.equal(store.sessions.size, 1)
})

t.test('allowedEmailDomains: a verified token without an address is refused', async (t) => {
  const { app, store } = await build(t, { oidc: { providers: [{ id: 'own', label: 'Own', issuer: tp.issuer, clientId: CLIENT_ID, clientSecret: 'x', allowedEmailDomains: ['school.example'] }], resolveMember: async () => ADA } } as PluginOptions)
  const res = await callback(app, { claims: { email: null, email_verified: true } })
  t.equal(res.statusCode, 403)
  t.match(res.body, 'Use your school account')
  t.equal(store.sessions.size, 0)
  t.equal((await callback(app, {})).statusCode, 303, 'with the school\'s address')
})

t.test('an https issuer that cannot be reached: 503', async (t) => {
  const { app } = await build(t, { oidc: { providers: [{ id: 'own', label: 'Own', issuer: 'https://127.0.0.1:1', clientId: CLIENT_ID }], resolveMember: async () => ADA } } as PluginOptions)
  const res = await app.inject('/Security/login/oidc/own')
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '5')
})

t.test('a state cookie signed with our secret but not ours in shape is no state: the restart', async (t) => {
  const { app } = await build(t)
  const start = await app.inject('/Security/login/oidc/own')
  const { code, state } = tp.codeFor(start.headers.location as string)
  for (const value of ['not base64 json', Buffer.from(JSON.stringify({ t: Date.now() })).toString('base64url')]) {
    const res = await app.inject({ url: `/Security/login/oidc/own/callback?code=${code}&state=${encodeURIComponent(state)}`, headers: { cookie: `sr_oidc_own=${encodeURIComponent(app.signCookie(value))}` } })
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, '/Security/login/oidc/own?retry=1')
  }
})

t.test('sign-out while the provider cannot be reached: local, and the answer does not wait for it', async (t) => {
  const provider = { id: 'own', label: 'Own', issuer: tp.issuer, clientId: CLIENT_ID, clientSecret: 'x-secret', endSession: true }
  const first = await build(t)
  const signedIn = await callback(first.app, {})
  // Another instance, sharing the store, that has not reached the provider yet, while it is down.
  const other = await buildTestApp({ cookie: { secret: SECRET }, session: { store: first.store }, plugin: { oidc: { providers: [provider], resolveMember: async () => ADA } } as PluginOptions })
  t.teardown(() => other.app.close())
  tp.discoveryFails = true
  t.teardown(() => { tp.discoveryFails = false })
  const cookie = cookiesOf(signedIn)
  const page = await other.app.inject({ url: '/schools/resources/', headers: { cookie } })
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]
  const out = await other.app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: cookiesOf(page, cookie) }, payload: { _csrf: token } })
  t.equal(out.statusCode, 303)
  t.equal(out.headers.location, '/schools/resources/')
  t.equal(first.store.sessions.size, 0)
})

t.test('which errors mean the provider is down', async (t) => {
  t.ok(providerUnavailable(Object.assign(new Error('x'), { cause: new TypeError('fetch failed') })))
  t.ok(providerUnavailable(new DOMException('timed out', 'TimeoutError')))
  t.ok(providerUnavailable({ status: 503 }))
  t.notOk(providerUnavailable(new TypeError('not a fetch')))
  t.notOk(providerUnavailable({ status: 400 }))
  t.notOk(providerUnavailable('a string'))
  t.notOk(providerUnavailable(null))
})
