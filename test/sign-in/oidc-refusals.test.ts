// Issue 36: the answers a conforming provider never gives, from a small provider of our own (jose): each
// is refused by openid-client's checks (never by hand), answered with the login page, and stores nothing.
import t, { type Test } from 'tap'
import type { Member } from '../../lib/index.js'
import { buildTestApp, BASE_URL, SECRET, type PluginOptions, type TestApp } from '../helpers/app.js'
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
