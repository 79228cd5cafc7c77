import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { anonymousShortCircuit, type AnonymousShortCircuitOptions, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { AsyncStore } from '../helpers/async-store.js'
import { BASE_URL, CountingCatalog, SECRET, conflictWarnings, formToken, sessionCookie, signIn, teacherOnly, withCookies } from '../helpers/app.js'

const LOGIN = `${BASE_URL}/Security/login?BackURL=`
const MATHS = '/schools/resources/resources/maths/'
const WARNING = `Already directed to ${LOGIN}%2Fschools%2Fresources%2Fresources%2Fmaths%2F; now trying to direct to /schools/resources/`

interface ShortCircuitApp {
  app: FastifyInstance
  store: AsyncStore
  catalog: CountingCatalog
  logs: Array<Record<string, unknown>>
  /** Sessions @fastify/session built: each one costs an id, a signature and a hash. */
  sessionsBuilt: () => number
}

interface Setup {
  shortCircuit?: AnonymousShortCircuitOptions
  session?: Record<string, unknown>
  plugin?: Partial<FastifySchoolsResourcesOptions>
  /** Register the short-circuit before @fastify/cookie instead of between cookie and session. */
  beforeCookie?: boolean
}

async function buildShortCircuitApp (setup: Setup = {}): Promise<ShortCircuitApp> {
  const logs: Array<Record<string, unknown>> = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  const store = new AsyncStore()
  const catalog = new CountingCatalog()
  let built = 0
  let n = 0
  if (setup.beforeCookie === true) await app.register(anonymousShortCircuit, setup.shortCircuit ?? {})
  await app.register(fastifyCookie)
  if (setup.beforeCookie !== true) await app.register(anonymousShortCircuit, setup.shortCircuit ?? {})
  await app.register(fastifySession, {
    secret: SECRET,
    store,
    saveUninitialized: false,
    cookie: { secure: false },
    idGenerator: () => { built++; return `session-${n++}-${'x'.repeat(24)}` },
    ...setup.session
  })
  await app.register(schoolsResources, { catalog, authenticate: teacherOnly, baseUrl: BASE_URL, ...setup.plugin } as FastifySchoolsResourcesOptions)
  await app.ready()
  t.teardown(() => app.close())
  return { app, store, catalog, logs, sessionsBuilt: () => built }
}

t.test('an anonymous category request is answered before any session is built, exactly as the guard answers it', async (t) => {
  const { app, store, catalog, logs, sessionsBuilt } = await buildShortCircuitApp()
  let res: Awaited<ReturnType<FastifyInstance['inject']>> | undefined
  const warnings = await conflictWarnings(async () => { res = await app.inject(MATHS) })
  t.equal(res!.statusCode, 302)
  t.equal(res!.headers.location, `${LOGIN}%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  t.equal(res!.headers['cache-control'], 'no-store')
  t.equal(res!.headers['set-cookie'], undefined)
  t.equal(res!.body, '')
  t.equal(warnings.length, 1, 'one warning')
  t.equal(warnings[0].name, 'UserWarning')
  t.equal(warnings[0].message, WARNING)
  const warnLines = logs.filter((l) => l.level === 40)
  t.equal(warnLines.length, 1, 'one warn log line')
  t.equal(warnLines[0].msg, WARNING)
  t.equal(warnLines[0].code, 'FST_SR_REDIRECT_CONFLICT')
  t.equal(sessionsBuilt(), 0, 'the session plugin did no work')
  t.equal(store.sets, 0)
  t.equal(catalog.lookups, 0)
})

t.test('the short-circuit and the guard give byte-identical answers', async (t) => {
  const { app: fast } = await buildShortCircuitApp()
  const { app: slow, sessionsBuilt } = await buildShortCircuitApp()
  for (const url of [MATHS, '/schools/resources/resources/a/b?x=1&y=%20z', '/schools/resources/resources/maths']) {
    const a = await fast.inject(url)
    // A cookie that is not a session cookie keeps the short-circuit; a bogus session cookie takes the guard.
    const b = await fast.inject({ url, headers: { cookie: 'theme=dark' } })
    const c = await slow.inject({ url, headers: { cookie: 'sessionId=forged' } })
    for (const res of [b, c]) {
      t.equal(res.statusCode, a.statusCode, url)
      t.same(res.headers.location, a.headers.location)
      t.same(res.headers['cache-control'], a.headers['cache-control'])
      t.equal(res.body, a.body)
    }
  }
  t.equal(sessionsBuilt(), 3, 'the forged cookie went through the session plugin')
})

t.test('HEAD takes the short-circuit too; other routes and methods do not', async (t) => {
  const { app, sessionsBuilt } = await buildShortCircuitApp()
  const head = await app.inject({ method: 'HEAD', url: MATHS })
  t.equal(head.statusCode, 302)
  t.equal(head.headers.location, `${LOGIN}%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  t.equal(sessionsBuilt(), 0)
  const index = await app.inject('/schools/resources/')
  t.equal(index.statusCode, 200)
  t.equal(sessionsBuilt(), 1, 'the index goes through the session plugin')
  const post = await app.inject({ method: 'POST', url: MATHS })
  t.equal(post.statusCode, 404)
  const missing = await app.inject('/nowhere')
  t.equal(missing.statusCode, 404)
})

t.test('a request with a session cookie takes the normal path: signed in gets the page, expired or forged gets the redirect', async (t) => {
  const { app, store, sessionsBuilt } = await buildShortCircuitApp()
  const cookie = await signIn(app)
  const before = sessionsBuilt()
  const page = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h1>Mathematics<\/h1>/)
  t.ok(sessionsBuilt() >= before, 'the session was read')
  store.sessions.clear()
  const gone = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(gone.statusCode, 302)
  t.equal(gone.headers.location, `${LOGIN}%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  // @fastify/session clears the cookie of a session that is gone; nothing new is stored.
  const cleared = gone.cookies.find((c) => c.name === 'sessionId')
  t.equal(cleared?.value, '', 'the stale cookie is cleared')
  t.ok(cleared?.expires !== undefined && cleared.expires.getTime() <= Date.now())
  t.equal(store.sessions.size, 0)
  const empty = await app.inject({ url: MATHS, headers: { cookie: 'sessionId=' } })
  t.equal(empty.statusCode, 302, 'an empty session cookie is no session')
})

t.test('cookieName follows the session plugin\'s cookie name', async (t) => {
  const { app, sessionsBuilt } = await buildShortCircuitApp({ shortCircuit: { cookieName: 'sid' }, session: { cookieName: 'sid' } })
  const res = await app.inject({ url: MATHS, headers: { cookie: 'sessionId=old-name' } })
  t.equal(res.statusCode, 302)
  t.equal(sessionsBuilt(), 0, 'a cookie under another name is not a session cookie')
  const form = await app.inject('/Security/login')
  const login = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: withCookies(undefined, form) },
    payload: { email: 'teacher@example.org', password: 'correct horse battery staple', _csrf: formToken(form.body) }
  })
  const cookie = sessionCookie(login, 'sid')!
  t.ok(cookie)
  const page = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(page.statusCode, 200)
})

t.test('a custom prefix and the request origin (no baseUrl) are honoured', async (t) => {
  const { app, sessionsBuilt } = await buildShortCircuitApp({ plugin: { prefix: '/library', baseUrl: undefined } })
  const warnings = await conflictWarnings(async () => {
    const res = await app.inject({ url: '/library/resources/maps/', headers: { host: 'school.test:8080' } })
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, 'http://school.test:8080/Security/login?BackURL=%2Flibrary%2Fresources%2Fmaps%2F')
  })
  t.equal(warnings.length, 1)
  t.equal(warnings[0].message, 'Already directed to http://school.test:8080/Security/login?BackURL=%2Flibrary%2Fresources%2Fmaps%2F; now trying to direct to /library/')
  t.equal(sessionsBuilt(), 0)
})

t.test('registered before @fastify/cookie, any Cookie header takes the normal path', async (t) => {
  const { app, sessionsBuilt } = await buildShortCircuitApp({ beforeCookie: true })
  t.equal((await app.inject(MATHS)).statusCode, 302)
  t.equal(sessionsBuilt(), 0)
  const res = await app.inject({ url: MATHS, headers: { cookie: 'theme=dark' } })
  t.equal(res.statusCode, 302)
  t.equal(sessionsBuilt(), 1)
})

t.test('misconfigurations fail at start-up', async (t) => {
  const bare = Fastify()
  await bare.register(fastifyCookie)
  bare.register(anonymousShortCircuit)
  await t.rejects(async () => { await bare.ready() }, { code: 'FST_SR_NO_SECTION' })

  for (const cookieName of ['', 42]) {
    const app = Fastify()
    app.register(anonymousShortCircuit, { cookieName } as unknown as AnonymousShortCircuitOptions)
    await t.rejects(async () => { await app.ready() }, { code: 'FST_SR_INVALID_OPTION', message: /"cookieName"/ })
  }

  // Behind the session plugin it could change nothing: that is a wiring mistake, said at once.
  const late = Fastify()
  await late.register(fastifyCookie)
  await late.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  late.register(anonymousShortCircuit)
  await t.rejects(async () => { await late.ready() }, { code: 'FST_SR_PLUGIN_ORDER' })

  // A section whose host decides who is signed in (getMember) may have members without a session
  // cookie, so it is not short-circuited, and a short-circuit with only such a section says so.
  const withGetMember = Fastify()
  await withGetMember.register(fastifyCookie)
  await withGetMember.register(anonymousShortCircuit)
  await withGetMember.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  withGetMember.register(schoolsResources, { catalog: new CountingCatalog(), signIn: false, getMember: () => null })
  await t.rejects(async () => { await withGetMember.ready() }, { code: 'FST_SR_NO_SECTION' })
})

t.test('without the short-circuit the section works as before', async (t) => {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  await app.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL })
  t.teardown(() => app.close())
  const res = await app.inject(MATHS)
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, `${LOGIN}%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
})

t.test('its anonymous answers skip the hooks registered after it, and only those; onSend and onResponse still run', async (t) => {
  const ran: string[] = []
  const app = Fastify()
  app.addHook('onRequest', async () => { ran.push('onRequest before') })
  await app.register(fastifyCookie)
  await app.register(anonymousShortCircuit)
  app.addHook('onRequest', async () => { ran.push('onRequest after') })
  app.addHook('preHandler', async () => { ran.push('preHandler after') })
  app.addHook('onSend', async () => { ran.push('onSend') })
  app.addHook('onResponse', async () => { ran.push('onResponse') })
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  await app.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL })
  t.teardown(() => app.close())

  const anonymous = await app.inject(MATHS)
  t.equal(anonymous.statusCode, 302)
  t.same(ran, ['onRequest before', 'onSend', 'onResponse'])

  ran.length = 0
  const withCookie = await app.inject({ url: MATHS, headers: { cookie: 'sessionId=unknown' } })
  t.equal(withCookie.statusCode, 302, 'the guard answers a cookie it cannot read')
  t.same(ran, ['onRequest before', 'onRequest after', 'preHandler after', 'onSend', 'onResponse'], 'with a cookie every host hook runs before the guard answers')

  ran.length = 0
  const cookie = await signIn(app)
  ran.length = 0
  const page = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(page.statusCode, 200)
  t.same(ran, ['onRequest before', 'onRequest after', 'preHandler after', 'onSend', 'onResponse'], 'a member page runs every hook')
})

t.test('the section is found by its route config under a register prefix', async (t) => {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(anonymousShortCircuit)
  let built = 0
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false }, idGenerator: () => `s${built++}-${'x'.repeat(30)}` })
  await app.register(async function site (site) {
    await site.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL, membersOnlyOutsideSection: 'warn' })
  }, { prefix: '/site' })
  t.teardown(() => app.close())
  const res = await app.inject('/site/schools/resources/resources/maths/')
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, `${BASE_URL}/site/Security/login?BackURL=%2Fsite%2Fschools%2Fresources%2Fresources%2Fmaths%2F`,
    'the login page under the prefix, and BackURL carries the path asked for')
  t.equal(built, 0, 'answered before the session plugin built a session')
})

t.test('a request target over the limit gets the 414 here too, before any session or redirect', async (t) => {
  const { app, sessionsBuilt, logs } = await buildShortCircuitApp()
  const warnings = await conflictWarnings(async () => {
    const res = await app.inject(`${MATHS}?q=${'x'.repeat(2000)}`)
    t.equal(res.statusCode, 414)
    t.equal(res.json().code, 'FST_SR_URI_TOO_LONG')
  })
  t.same(warnings, [])
  t.equal(sessionsBuilt(), 0)
  t.same(logs.filter((l) => l.code === 'FST_SR_REDIRECT_CONFLICT'), [])
})
