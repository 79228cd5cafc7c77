import t, { type Test } from 'tap'
import { join } from 'node:path'
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifyHelmet from '@fastify/helmet'
import autoload from '@fastify/autoload'
import schoolsResources, { InMemoryCatalog, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { authenticate, PEOPLE } from '../helpers/members.js'
import { BASE_URL, capturedLogs, postLogin, SECRET, sessionCookie } from '../helpers/app.js'

// How a host wires the section, and what its guard answers on the host's own members-only routes:
// the section inside an encapsulated plugin (issue 18, item 2), schema validation after the guard,
// the guard's approval tied to the route, and the section's security headers on its 403 (item 9).

const catalog = new InMemoryCatalog({ categories: [{ slug: 'maths', title: 'Mathematics', description: 'Number.', resources: [] }] })
const options: FastifySchoolsResourcesOptions = { catalog, authenticate, baseUrl: BASE_URL }
const ENCAPSULATED = 'FST_SR_SECTION_ENCAPSULATED'
const LOGIN = `${BASE_URL}/Security/login?BackURL=`

/** A host as the README wires it, its logs kept; `wire` registers the section and the routes. */
async function host (t: Test, wire: (app: FastifyInstance) => Promise<void> | void) {
  const logs = capturedLogs()
  const app = Fastify({ logger: logs.logger })
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  await wire(app)
  await app.ready()
  t.teardown(() => app.close())
  return { app, logs }
}

async function cookieOf (app: FastifyInstance, email: string): Promise<string> {
  const res = await postLogin(app, { email, password: PEOPLE[email].password })
  t.equal(res.statusCode, 303, `${email} signed in`)
  return sessionCookie(res)!
}

const staffNotices = async () => 'staff notices'

const sibling = (app: FastifyInstance) => app.register(async (sibling) => {
  sibling.get('/noticeboard', { config: { membersOnly: { groups: ['staff'] } } }, staffNotices)
}, { prefix: '/staff' })

t.test('the section inside an encapsulated plugin fails start-up, naming the plugin and both fixes', async (t) => {
  for (const withSibling of [true, false]) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(fastifyCookie)
    await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
    app.register(async function site (instance) { await instance.register(schoolsResources, options) }, { prefix: '/primary' })
    if (withSibling) sibling(app)
    const what = withSibling ? 'with a sibling membersOnly route' : 'with no membersOnly route anywhere'
    const error = await app.ready().then(() => undefined, (error: unknown) => error as Error & { code: string })
    t.equal(error?.code, ENCAPSULATED, what)
    t.match(error?.message, /inside the encapsulated plugin "site".*config\.membersOnly route anywhere else in the app would be served to everyone/, `${what}: names the plugin`)
    t.match(error?.message, /Wrap that plugin in fastify-plugin.*membersOnlyOutsideSection: 'warn'.*preHandler: fastify\.membersOnly\(\)/, `${what}: both fixes`)
  }
})

t.test('membersOnlyOutsideSection: \'warn\' keeps the start-up line; any other value is refused', async (t) => {
  const site: FastifyPluginAsync = async function site (instance) { await instance.register(schoolsResources, { ...options, membersOnlyOutsideSection: 'warn' }) }
  const { app, logs } = await host(t, async (app) => {
    // The same plugin mounts two sections: two registrations, one mistake.
    await app.register(site, { prefix: '/primary' })
    await app.register(site, { prefix: '/secondary' })
    await sibling(app)
  })
  for (let i = 0; i < 3; i++) {
    // Fastify gives the section no way to reach a sibling context: the route is served; the log says so.
    t.equal((await app.inject('/staff/noticeboard')).body, 'staff notices', 'the sibling route is not guarded')
    t.equal((await app.inject('/primary/schools/resources/resources/maths/')).statusCode, 302, 'the section\'s own pages are')
  }
  const lines = logs.withCode(ENCAPSULATED)
  t.equal(lines.length, 1, 'one line for two registrations and six requests')
  t.match(lines[0], { level: 40, plugin: 'site', pluginName: 'site -> fastify-schools-resources' })
  t.match(lines[0].msg, /inside the encapsulated plugin "site".*config\.membersOnly route anywhere else in the app would be served to everyone/)
  t.match(lines[0].msg, /Wrap that plugin in fastify-plugin.*preHandler: fastify\.membersOnly\(\), which fails start-up/)

  for (const value of ['fail', 'error', true, false, null]) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(fastifyCookie)
    await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
    app.register(schoolsResources, { ...options, membersOnlyOutsideSection: value as 'warn' })
    await t.rejects(async () => { await app.ready() }, { code: 'FST_SR_INVALID_OPTION', message: /"membersOnlyOutsideSection": 'warn' starts/ }, String(value))
  }
  // In the app's own context the setting changes nothing: no line.
  const root = await host(t, async (app) => { await app.register(schoolsResources, { ...options, membersOnlyOutsideSection: 'warn' }) })
  t.same(root.logs.withCode(ENCAPSULATED), [])
})

t.test('the decorator form in the sibling context fails start-up instead', async (t) => {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  // Even where the host opted to start with the warning.
  app.register(async (instance) => { await instance.register(schoolsResources, { ...options, membersOnlyOutsideSection: 'warn' }) })
  app.register(async (sibling) => {
    sibling.get('/noticeboard', { preHandler: sibling.membersOnly({ groups: ['staff'] }) }, staffNotices)
  })
  await t.rejects(async () => { await app.ready() }, /membersOnly is not a function/)
})

t.test('@fastify/autoload: a route file without fastify-plugin fails start-up (or warns); the docs\' recipe guards and stays quiet', async (t) => {
  const failing = Fastify()
  t.teardown(() => failing.close())
  await failing.register(fastifyCookie)
  await failing.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  failing.register(autoload, { dir: join(__dirname, '../fixtures/autoload'), options: { section: schoolsResources, sectionOptions: options } })
  await t.rejects(async () => { await failing.ready() }, { code: ENCAPSULATED, message: /inside the encapsulated plugin ".*fixtures\/autoload\/site\/resources\.cjs"/ }, 'names the route file')

  const fromRouteFile = await host(t, async (app) => {
    await app.register(autoload, { dir: join(__dirname, '../fixtures/autoload'), options: { section: schoolsResources, sectionOptions: { ...options, membersOnlyOutsideSection: 'warn' } } })
    app.get('/staff/noticeboard', { config: { membersOnly: { groups: ['staff'] } } }, staffNotices)
  })
  t.equal((await fromRouteFile.app.inject('/staff/noticeboard')).statusCode, 200, 'outside the route file: not guarded')
  const lines = fromRouteFile.logs.withCode(ENCAPSULATED)
  t.equal(lines.length, 1)
  t.match(lines[0].msg, /inside the encapsulated plugin ".*fixtures\/autoload\/site\/resources\.cjs"/, 'names the route file')

  const recipe = await host(t, async (app) => {
    const shared = { options: { section: schoolsResources, sectionOptions: options } }
    await app.register(autoload, { dir: join(__dirname, '../fixtures/autoload-recipe/plugins'), ...shared })
    await app.register(autoload, { dir: join(__dirname, '../fixtures/autoload-recipe/routes'), ...shared })
  })
  const visitor = await recipe.app.inject('/staff/noticeboard')
  t.equal(visitor.statusCode, 302)
  t.equal(visitor.headers.location, `${LOGIN}%2Fstaff%2Fnoticeboard`)
  t.equal((await recipe.app.inject({ url: '/staff/noticeboard', headers: { cookie: await cookieOf(recipe.app, 'parent@example.org') } })).statusCode, 403)
  t.equal((await recipe.app.inject({ url: '/staff/noticeboard', headers: { cookie: await cookieOf(recipe.app, 'teacher@example.org') } })).body, 'staff notices')
  t.same(recipe.logs.withCode(ENCAPSULATED), [], 'no warning')
})

t.test('schema validation waits for the guard: visitors get the login redirect, members Fastify\'s 400', async (t) => {
  let loaded = 0
  const load = async (request: FastifyRequest) => { loaded++; request.log.debug('loaded') }
  const schema = { params: { type: 'object', properties: { id: { type: 'string', pattern: '^\\d+$' } } } }
  const body = { body: { type: 'object', required: ['text'], properties: { text: { type: 'string', maxLength: 10 } } } }
  const { app } = await host(t, async (app) => {
    await app.register(schoolsResources, options)
    app.get('/pupils/:id', { schema, preHandler: load, config: { membersOnly: { groups: ['staff'] } } }, async (request) => `pupil ${(request.params as { id: string }).id}`)
    app.post('/notes', { schema: body, config: { membersOnly: true } }, async () => 'noted')
    app.get('/decorated/:id', { schema, preHandler: [app.membersOnly(), load] }, async () => 'decorated')
    // The host reads validation errors itself: left as it is.
    app.get('/own/:id', { schema, attachValidation: true, config: { membersOnly: true } }, async (request) => request.validationError?.message ?? 'valid')
  })

  for (const url of ['/pupils/abc', '/pupils/7', '/decorated/abc', '/own/abc']) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url })
      t.equal(res.statusCode, 302, `visitor ${method} ${url}`)
      t.equal(res.headers.location, `${LOGIN}${encodeURIComponent(url)}`)
    }
  }
  const note = await app.inject({ method: 'POST', url: '/notes', payload: { text: 'far too long for the schema' } })
  t.equal(note.statusCode, 302, 'a visitor\'s bad body too')

  const parent = await cookieOf(app, 'parent@example.org')
  t.equal((await app.inject({ url: '/pupils/abc', headers: { cookie: parent } })).statusCode, 403, 'an outsider gets the 403, not the 400')

  const teacher = await cookieOf(app, 'teacher@example.org')
  const bad = await app.inject({ url: '/pupils/abc', headers: { cookie: teacher } })
  t.equal(bad.statusCode, 400, 'a member let in gets Fastify\'s 400')
  t.match(bad.json(), { code: 'FST_ERR_VALIDATION', message: 'params/id must match pattern "^\\d+$"' })
  t.equal((await app.inject({ url: '/decorated/abc', headers: { cookie: teacher } })).statusCode, 400)
  t.equal(loaded, 0, 'the route\'s own preHandlers never ran on a request that failed validation')
  t.equal((await app.inject({ method: 'HEAD', url: '/pupils/abc', headers: { cookie: teacher } })).statusCode, 400, 'HEAD too')
  t.equal((await app.inject({ url: '/pupils/7', headers: { cookie: teacher } })).body, 'pupil 7')
  t.equal((await app.inject({ method: 'POST', url: '/notes', headers: { cookie: teacher }, payload: { text: 'ok' } })).body, 'noted')
  t.equal((await app.inject({ method: 'POST', url: '/notes', headers: { cookie: teacher }, payload: { text: 'far too long for the schema' } })).statusCode, 400)
  t.equal((await app.inject({ url: '/own/abc', headers: { cookie: teacher } })).body, 'params/id must match pattern "^\\d+$"', 'the host\'s own attachValidation')
  t.equal(loaded, 1)
})

t.test('the handler wants the approval of the route\'s own guards, not of a guard put in their place', async (t) => {
  const { app } = await host(t, async (app) => {
    await app.register(schoolsResources, options)
    const everyMember = app.membersOnly()
    const staffOnly = app.membersOnly({ groups: ['staff'] })
    // A later onRoute hook of the host that sets its own list: the route's guard swapped for another.
    app.addHook('onRoute', (route) => {
      if (route.url === '/staff-room') route.preHandler = [everyMember]
      if (route.url === '/two-guards') route.preHandler = [staffOnly]
    })
    app.get('/staff-room', { config: { membersOnly: { groups: ['staff'] } } }, async () => 'staff room')
    app.get('/two-guards', { preHandler: [staffOnly, app.membersOnly({ groups: ['staff'], title: 'Second' })] }, async () => 'two guards')
    app.get('/both', { preHandler: [app.membersOnly({ groups: ['staff'] }), app.membersOnly({ title: 'Members' })] }, async () => 'both')
  })
  const parent = await cookieOf(app, 'parent@example.org')
  const teacher = await cookieOf(app, 'teacher@example.org')
  // The staff room's guard was swapped for one that lets every member in; the second of two guards was dropped.
  for (const [cookie, url] of [[parent, '/staff-room'], [teacher, '/staff-room'], [teacher, '/two-guards']]) {
    const res = await app.inject({ url, headers: { cookie, accept: 'application/json' } })
    t.equal(res.statusCode, 500, `${url}: refused, not served`)
    t.equal(res.json().code, 'FST_SR_UNGUARDED_ROUTE')
  }
  t.equal((await app.inject({ url: '/two-guards', headers: { cookie: parent } })).statusCode, 403, 'the guard that stayed still answers outsiders')
  t.equal((await app.inject({ url: '/both', headers: { cookie: await cookieOf(app, 'teacher@example.org') } })).body, 'both', 'two guards that both approved')
})

t.test('the 403 the section answers on a host route carries the section\'s security headers', async (t) => {
  const route = (app: FastifyInstance) => app.get('/staff-room', { config: { membersOnly: { groups: ['staff'], title: 'Staff room' } } }, staffNotices)
  const ours = await host(t, async (app) => { await app.register(schoolsResources, options); route(app) })
  const parent = await cookieOf(ours.app, 'parent@example.org')
  const sectionPage = await ours.app.inject({ url: '/schools/resources/', headers: { cookie: parent } })
  const csp = sectionPage.headers['content-security-policy']
  t.match(csp, /default-src 'none'/, 'the section\'s own policy')
  for (const accept of ['text/html', 'application/json']) {
    const res = await ours.app.inject({ url: '/staff-room', headers: { cookie: parent, accept } })
    t.equal(res.statusCode, 403, accept)
    for (const name of ['content-security-policy', 'x-frame-options', 'x-content-type-options', 'referrer-policy', 'cross-origin-opener-policy']) {
      t.equal(res.headers[name], sectionPage.headers[name], `${accept}: ${name} as on the section's pages`)
    }
  }

  const withHelmet = await host(t, async (app) => {
    await app.register(fastifyHelmet, { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"] } } })
    await app.register(schoolsResources, options)
    route(app)
    app.get('/open', async () => 'open')
  })
  const hosted = await withHelmet.app.inject({ url: '/staff-room', headers: { cookie: await cookieOf(withHelmet.app, 'parent@example.org') } })
  t.equal(hosted.statusCode, 403)
  t.equal(hosted.headers['content-security-policy'], (await withHelmet.app.inject('/open')).headers['content-security-policy'], 'the host\'s @fastify/helmet decides')
  t.match(hosted.headers['content-security-policy'], /^default-src 'self'/)

  const off = await host(t, async (app) => { await app.register(schoolsResources, { ...options, helmet: false }); route(app) })
  const bare = await off.app.inject({ url: '/staff-room', headers: { cookie: await cookieOf(off.app, 'parent@example.org') } })
  t.equal(bare.statusCode, 403)
  t.equal(bare.headers['content-security-policy'], undefined, 'helmet: false')
})
