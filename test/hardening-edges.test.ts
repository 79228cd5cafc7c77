import t from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import csrfProtection from '@fastify/csrf-protection'
import plugin from '../lib/index.js'
import { loginRateLimit } from '../lib/login-rate-limit.js'
import { buildTestApp, CountingCatalog, formToken, SECRET, teacherOnly } from './helpers/app.js'

// Edges of the sign-in hardening (options, security headers, CSRF without a usable session, JSON login
// form, a host's own CSRF) that no other test reached.

t.test('hardening options are checked and name the option', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ lockout: { maxAttempts: 'ten' } }, /"lockout.maxAttempts": must be a positive whole number/],
    [{ lockout: [] }, /"lockout": must be an object, or false to turn it off/],
    [{ loginRateLimit: 'yes' }, /"loginRateLimit": must be an object/],
    [{ loginRateLimit: { timeWindow: 0 } }, /"loginRateLimit.timeWindow": must be a positive whole number/],
    [{ helmet: 'on' }, /"helmet": must be an object/]
  ]
  for (const [plugin, message] of cases) {
    await t.rejects(buildTestApp({ plugin: plugin as never }), { code: 'FST_SR_INVALID_OPTION', message }, JSON.stringify(plugin))
  }
  const { app } = await buildTestApp({ plugin: { loginRateLimit: { timeWindow: 60_000, max: 1 } } })
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  t.equal(form.statusCode, 200, 'a numeric timeWindow is accepted')
})

t.test('helmet: false leaves the security headers to the host', async (t) => {
  const { app } = await buildTestApp({ plugin: { helmet: false } })
  t.teardown(() => app.close())
  const res = await app.inject('/schools/resources/')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-security-policy'], undefined)
  const on = await buildTestApp()
  t.teardown(() => on.app.close())
  t.match((await on.app.inject('/schools/resources/')).headers['content-security-policy'], "default-src 'none'")
})

t.test('the login form as JSON: whether signed in, and a CSRF token', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/Security/login', headers: { accept: 'application/json' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.headers.vary, 'Accept')
  const body = res.json()
  t.equal(body.signedIn, false)
  t.type(body.csrfToken, 'string')
})

t.test('outside the session cookie path the login form has no token, and signing in is refused', async (t) => {
  const { app } = await buildTestApp({ session: { cookie: { secure: false, path: '/members' } } })
  t.teardown(() => app.close())
  const res = await app.inject('/Security/login')
  t.equal(res.statusCode, 200)
  t.notMatch(res.body, 'name="_csrf"', 'no token without a session to keep its secret')
  t.equal((await app.inject({ method: 'POST', url: '/Security/login', payload: { email: 'a@b.c', password: 'x' } })).statusCode, 403)
})

t.test("a host's own cookie-based CSRF: signing out without a session cookie clears no cookie", async (t) => {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false }, saveUninitialized: false })
  await app.register(csrfProtection)
  await app.register(plugin, { catalog: new CountingCatalog(), authenticate: teacherOnly })
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  const csrfCookie = form.cookies.find((c) => c.name === '_csrf')
  t.ok(csrfCookie, "the host's CSRF secret is in a cookie of its own")
  const out = await app.inject({
    method: 'POST',
    url: '/Security/logout',
    headers: { cookie: `_csrf=${csrfCookie!.value}` },
    payload: { _csrf: formToken(form.body) }
  })
  t.equal(out.statusCode, 303)
  t.notOk(out.cookies.some((c) => c.name === 'sessionId'), 'no session cookie to clear')
})

t.test('an error from authenticate is not taken for a store failure: it reaches the host as it was', async (t) => {
  const { app } = await buildTestApp({ plugin: { authenticate: async () => { throw new Error('directory down') } } })
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: form.cookies.map((c) => `${c.name}=${c.value}`).join('; ') },
    payload: { _csrf: formToken(form.body), email: 'a@example.org', password: 'x' }
  })
  t.equal(res.statusCode, 500)
  t.equal(res.json().message, 'directory down')
  t.equal(res.headers['retry-after'], undefined)
})

t.test('a session cookie without a path (cleared by a host hook) is cleared at / on sign-out', async (t) => {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  app.addHook('preHandler', async (request) => {
    if (request.url === '/Security/logout') (request.session.cookie as { path: string | null }).path = null
  })
  await app.register(plugin, { catalog: new CountingCatalog(), authenticate: teacherOnly })
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  const cookie = form.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie }, payload: { _csrf: formToken(form.body) } })
  t.equal(out.statusCode, 303)
  const cleared = out.cookies.find((c) => c.name === 'sessionId')
  t.equal(cleared?.path, '/')
  t.equal(cleared?.value, '')
})

t.test('without baseUrl, a Host header that is not a host name is refused with 400', async (t) => {
  const { app } = await buildTestApp({ plugin: { baseUrl: undefined } })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/schools/resources/resources/maths/', headers: { host: 'evil.example/path' } })
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'FST_SR_BAD_HOST')
  t.equal(res.headers.location, undefined)
})

t.test('sign-out clears a session cookie set for a domain on that domain', async (t) => {
  const { app } = await buildTestApp({ session: { cookie: { secure: false, domain: 'www.example.org' } } })
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  const cookie = form.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie }, payload: { _csrf: formToken(form.body) } })
  t.equal(out.statusCode, 303)
  const cleared = out.cookies.find((c) => c.name === 'sessionId')
  t.equal(cleared?.domain, 'www.example.org')
  t.equal(cleared?.value, '')
})

t.test('loginRateLimit() on its own defaults to 50 attempts per 15 minutes', async (t) => {
  const app = Fastify()
  const hook = await loginRateLimit(app, {})
  app.post('/x', { preHandler: hook }, async () => 'ok')
  t.teardown(() => app.close())
  const statuses: number[] = []
  for (let i = 0; i < 51; i++) statuses.push((await app.inject({ method: 'POST', url: '/x' })).statusCode)
  t.equal(statuses.filter((s) => s === 200).length, 50)
  t.equal(statuses[50], 429)
  const last = await app.inject({ method: 'POST', url: '/x' })
  t.equal(last.headers['x-ratelimit-limit'], '50')
  t.match(last.json().message, /Try again in 15 minutes/)
})
