// Which session plugin the section uses (lib/session/session-adapter.ts): the only one registered, else the
// one the options name; every wrong choice fails start-up with the fix. The journeys are in wirings.test.ts.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifySecureSession from '@fastify/secure-session'
import fastifyCsrf from '@fastify/csrf-protection'
import schoolsResources, { anonymousShortCircuit, InMemoryCatalog, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'
import { authenticate, PEOPLE } from '../helpers/members.js'
import { BASE_URL, capturedLogs, conflictWarnings, formToken, SECRET, withCookies } from '../helpers/app.js'

const MATHS = '/schools/resources/resources/maths/'
const PARENT = 'parent@example.org'
const catalog = new InMemoryCatalog(demoCatalog)

interface Plugins {
  session?: Record<string, unknown>
  /** @fastify/secure-session's options (a key is added). */
  secure?: Record<string, unknown>
  shortCircuit?: boolean
}

async function host (t: Test, plugins: Plugins, options: Partial<FastifySchoolsResourcesOptions> = {}): Promise<FastifyInstance> {
  const logs = capturedLogs()
  const app = Fastify({ logger: logs.logger })
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  if (plugins.shortCircuit === true) await app.register(anonymousShortCircuit)
  if (plugins.session !== undefined) await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false }, ...plugins.session })
  if (plugins.secure !== undefined) await app.register(fastifySecureSession, { key: randomBytes(32), cookie: { path: '/' }, ...plugins.secure })
  app.register(schoolsResources, { catalog, files: demoFiles, authenticate, baseUrl: BASE_URL, ...options } as FastifySchoolsResourcesOptions)
  return app
}

/** Signs the parent in through the login form; resolves to the sign-in's answer and the Cookie header after it. */
async function signInParent (app: FastifyInstance): Promise<{ res: LightMyRequestResponse, cookie: string }> {
  const form = await app.inject('/Security/login')
  const csrf = withCookies('', form, true)
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: csrf },
    payload: { _csrf: formToken(form.body), email: PARENT, password: PEOPLE[PARENT].password }
  })
  return { res, cookie: withCookies(csrf, res, true) }
}

t.test('both plugins registered: the section asks which, and uses the one named', async (t) => {
  const both = { session: {}, secure: { sessionName: 'cookieSession' } }
  await t.rejects(async () => { await (await host(t, both)).ready() }, {
    code: 'FST_SR_INVALID_OPTION',
    message: 'fastify-schools-resources: invalid option "sessionPlugin": must say which session plugin the section uses: both @fastify/session and @fastify/secure-session are registered'
  })
  await t.rejects(async () => { await (await host(t, both, { sessionPlugin: '@fastify/secure-session' })).ready() }, { code: 'FST_SR_INVALID_OPTION', message: /"sessionName": must be the sessionName you gave @fastify\/secure-session/ })

  const stored = await host(t, both, { sessionPlugin: '@fastify/session' })
  await stored.ready()
  const viaStore = await signInParent(stored)
  t.equal(viaStore.res.statusCode, 303)
  t.match(viaStore.cookie, /(^|; )sessionId=/, '@fastify/session keeps the member')
  t.equal((await stored.inject({ url: MATHS, headers: { cookie: viaStore.cookie } })).statusCode, 200)

  const encrypted = await host(t, both, { sessionName: 'cookieSession' })
  await encrypted.ready()
  const viaCookie = await signInParent(encrypted)
  t.equal(viaCookie.res.statusCode, 303)
  t.match(viaCookie.cookie, /(^|; )cookieSession=/, 'secure-session keeps the member, its cookie named after the session')
  t.notMatch(viaCookie.cookie, /(^|; )sessionId=/, '@fastify/session stores nothing')
  t.equal((await encrypted.inject({ url: MATHS, headers: { cookie: viaCookie.cookie } })).statusCode, 200)
})

t.test('a wrong choice fails start-up and says why', async (t) => {
  const cases: Array<[Plugins, Partial<FastifySchoolsResourcesOptions>, RegExp]> = [
    [{ session: {} }, { sessionPlugin: 'secure-session' as never }, /"sessionPlugin": must be '@fastify\/session' or '@fastify\/secure-session'/],
    [{ session: {} }, { sessionPlugin: '@fastify/secure-session' }, /"sessionPlugin": names @fastify\/secure-session, which is not registered before the section/],
    [{ session: {} }, { sessionName: 'session' }, /"sessionPlugin": names @fastify\/secure-session/],
    [{ session: {} }, { sessionPlugin: '@fastify/session', sessionName: 'session' }, /"sessionName": is @fastify\/secure-session's option; @fastify\/session always uses request\.session/],
    [{ secure: {} }, { sessionName: 'other' }, /"sessionName": request\.other is not decorated: give the sessionName you gave @fastify\/secure-session/],
    [{ secure: {} }, { sessionName: 'not a name' }, /"sessionName": must be the name of a request property/]
  ]
  for (const [plugins, options, message] of cases) {
    await t.rejects(async () => { await (await host(t, plugins, options)).ready() }, { code: 'FST_SR_INVALID_OPTION', message }, JSON.stringify(options))
  }
})

t.test('secure-session under a sessionName of its own, and a cookieName of its own', async (t) => {
  const app = await host(t, { secure: { sessionName: 'member', cookieName: '__Host-sess', cookie: { path: '/', secure: false } } }, { sessionName: 'member', cookieName: '__Host-sess' })
  await app.ready()
  const { res, cookie } = await signInParent(app)
  t.equal(res.statusCode, 303)
  t.match(cookie, /(^|; )__Host-sess=/)
  const page = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(page.statusCode, 200)
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: withCookies(cookie, page, true) }, payload: { _csrf: formToken(page.body) } })
  t.equal(out.statusCode, 303)
  t.match(out.cookies.find((c) => c.name === '__Host-sess'), { value: '', maxAge: 0 }, 'sign-out clears that cookie')
})

t.test('anonymousShortCircuit knows secure-session\'s cookie: members pass, visitors are answered early', async (t) => {
  const app = await host(t, { shortCircuit: true, secure: {} })
  await app.ready()
  const { cookie } = await signInParent(app)
  t.match(cookie, /(^|; )session=/)
  t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, 'a signed-in member is not sent to the login page')
  let res: LightMyRequestResponse | undefined
  const warnings = await conflictWarnings(async () => { res = await app.inject(MATHS) })
  t.equal(res!.statusCode, 302)
  t.equal(res!.headers.location, `${BASE_URL}/Security/login?BackURL=${encodeURIComponent(MATHS)}`)
  t.equal(warnings.length, 1, 'with the refused redirect\'s warning')
})

t.test('a login route outside @fastify/session\'s cookie path refuses the sign-in rather than pretend', async (t) => {
  const logs = capturedLogs()
  const app = Fastify({ logger: logs.logger })
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false, path: '/schools' } })
  // The host's own CSRF plugin, which the section then uses: its token is good on any route.
  await app.register(fastifyCsrf, { sessionPlugin: '@fastify/cookie' })
  app.get('/token', async (_request, reply) => reply.generateCsrf())
  app.register(schoolsResources, { catalog, files: demoFiles, authenticate, baseUrl: BASE_URL })
  await app.ready()
  const token = await app.inject('/token')
  const cookie = withCookies('', token, true)
  for (let i = 0; i < 2; i++) {
    const res = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie }, payload: { _csrf: token.body, email: PARENT, password: PEOPLE[PARENT].password } })
    t.equal(res.statusCode, 500, 'refused')
    t.notOk(res.headers.location, 'no "signed in" redirect')
  }
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie }, payload: { _csrf: token.body } })
  t.equal(out.statusCode, 303, 'a sign-out there has no session to end, and ends on the index')
  const said = logs.withCode('FST_SR_SECURE_COOKIE_OVER_HTTP')
  t.equal(said.length, 1, 'said once')
  t.match(said[0].msg, /the sign-in route has no session \(it is outside the session cookie's path\)/)
})
