import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest, type LightMyRequestResponse } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import csrfProtection from '@fastify/csrf-protection'
import schoolsResources, { anonymousShortCircuit, InMemoryCatalog, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { AsyncStore } from '../helpers/async-store.js'
import { authenticate, PEOPLE } from '../helpers/members.js'
import { BASE_URL, conflictWarnings, postLogin, postSignOutForm, SECRET, sessionCookie } from '../helpers/app.js'

// Members-only pages of the host: `config: { membersOnly }` on a host route, or `preHandler: app.membersOnly()`,
// on real host apps (cookie, session with an asynchronous store, the section) with members in groups.

const CATALOG = new InMemoryCatalog({ categories: [{ slug: 'maths', title: 'Mathematics', description: 'Number.', resources: [] }] })

interface Setup {
  /** Routes and hooks added before the section is registered. */
  before?: (app: FastifyInstance) => void
  /** Routes and hooks added after it. */
  after?: (app: FastifyInstance) => void
  plugin?: Partial<FastifySchoolsResourcesOptions>
  shortCircuit?: boolean
  /** Register @fastify/csrf-protection on the host, as a host with its own forms does. */
  hostCsrf?: boolean
}

interface HostApp {
  app: FastifyInstance
  store: AsyncStore
  /** Sessions @fastify/session built (each one an id, a signature and a hash). */
  sessionsBuilt: () => number
}

async function build (t: Test, setup: Setup = {}): Promise<HostApp> {
  const app = Fastify()
  const store = new AsyncStore()
  let built = 0
  await app.register(fastifyCookie)
  if (setup.shortCircuit === true) await app.register(anonymousShortCircuit)
  await app.register(fastifySession, {
    secret: SECRET,
    store,
    saveUninitialized: false,
    cookie: { secure: false },
    idGenerator: () => `session-${++built}-${'x'.repeat(24)}`
  })
  if (setup.hostCsrf === true) await app.register(csrfProtection, { sessionPlugin: '@fastify/cookie' })
  setup.before?.(app)
  await app.register(schoolsResources, { catalog: CATALOG, authenticate, baseUrl: BASE_URL, ...setup.plugin } as FastifySchoolsResourcesOptions)
  setup.after?.(app)
  await app.ready()
  t.teardown(() => app.close())
  return { app, store, sessionsBuilt: () => built }
}

/** The page a host serves to whoever gets through: it names the member from the session. */
async function page (request: FastifyRequest) {
  return `page ${request.url} for ${request.session.get('member')?.name}`
}

async function signInAs (app: FastifyInstance, email: string, backUrl?: string) {
  const res = await postLogin(app, { email, password: PEOPLE[email].password, ...(backUrl === undefined ? {} : { BackURL: backUrl }) })
  if (res.statusCode !== 303) throw new Error(`sign-in failed: ${res.statusCode}`)
  return { res, cookie: sessionCookie(res)! }
}

// PHP's urlencode of the path, as the legacy site wrote BackURL.
const loginFor = (path: string, login = '/Security/login') => `${BASE_URL}${login}?BackURL=${encodeURIComponent(path).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+')}`
const refusedIndex = (path: string, index = '/schools/resources/', login = '/Security/login') => `Already directed to ${loginFor(path, login)}; now trying to direct to ${index}`

/** Every way a host can mark a route members-only, with the paths each answers at. */
function everyWay (app: FastifyInstance) {
  app.get('/staff-room', { config: { membersOnly: { groups: ['staff'], title: 'Staff room' } } }, page)
  app.get('/members', { config: { membersOnly: true } }, page)
  app.get('/decorated', { preHandler: app.membersOnly({ groups: ['staff'] }) }, page)
  app.register(async function child (child) {
    child.get('/child', { config: { membersOnly: { groups: ['staff'] } } }, page)
  })
  app.register(async function prefixed (scoped) {
    scoped.get('/', { config: { membersOnly: { groups: ['staff'] } } }, page)
    scoped.get('/minutes', { preHandler: scoped.membersOnly({ groups: ['staff'], title: 'Minutes' }) }, page)
  }, { prefix: '/governors' })
}

/** Routes in the host's context and in a child context, registered before the section exists. */
function earlier (app: FastifyInstance) {
  app.get('/early', { config: { membersOnly: { groups: ['staff'], title: 'Early' } } }, page)
  app.register(async function earlyChild (child) {
    child.get('/early-child', { config: { membersOnly: { groups: ['staff'] } } }, page)
  })
}

const GUARDED = ['/staff-room', '/members', '/decorated', '/child', '/governors', '/governors/', '/governors/minutes', '/early', '/early-child']
const FOR_STAFF = GUARDED.filter((path) => path !== '/members')

t.test('a visitor gets the spec\'s login redirect with the route\'s own BackURL, and no session', async (t) => {
  const { app, store, sessionsBuilt } = await build(t, { before: earlier, after: everyWay })
  for (const path of [...GUARDED, '/staff-room?term=spring+2&note=(draft)~', '/members?a=%2F&b=%C3%A9']) {
    for (const method of ['GET', 'HEAD'] as const) {
      let res: LightMyRequestResponse | undefined
      const warnings = await conflictWarnings(async () => { res = await app.inject({ method, url: path }) })
      t.equal(res!.statusCode, 302, `${method} ${path}`)
      t.equal(res!.headers.location, loginFor(path), `${method} ${path}: Location`)
      t.equal(res!.headers['cache-control'], 'no-store')
      t.equal(res!.headers['set-cookie'], undefined, 'no cookie for a visitor')
      t.equal(res!.body, '')
      t.same(warnings.map((w) => [w.name, w.message]), [['UserWarning', refusedIndex(path)]], 'the refused index redirect, as on category pages')
    }
  }
  t.equal(store.sets, 0, 'nothing stored')
  t.equal(store.sessions.size, 0)
  t.ok(sessionsBuilt() > 0, 'without the short-circuit @fastify/session built sessions it threw away')
})

t.test('members outside the groups get the 403 page or JSON; members inside get the page', async (t) => {
  const { app } = await build(t, { before: earlier, after: everyWay })
  const parent = await signInAs(app, 'parent@example.org')
  const teacher = await signInAs(app, 'teacher@example.org')
  const student = await signInAs(app, 'student@example.org')
  const titles: Record<string, string> = { '/staff-room': 'Staff room', '/governors/minutes': 'Minutes', '/early': 'Early' }
  for (const path of FOR_STAFF) {
    const title = titles[path] ?? 'this page'
    for (const who of [parent, student]) {
      const res = await app.inject({ url: path, headers: { cookie: who.cookie } })
      t.equal(res.statusCode, 403, path)
      t.match(res.headers['content-type'], /^text\/html/)
      t.equal(res.headers['cache-control'], 'private, no-store')
      t.match(res.body, `<h1>You don&#39;t have access to ${title}</h1>`)
      t.notMatch(res.body, /page \//, 'the handler did not run')
    }
    const json = await app.inject({ url: path, headers: { cookie: parent.cookie, accept: 'application/json' } })
    t.equal(json.statusCode, 403)
    t.same(json.json(), { statusCode: 403, code: 'FST_SR_FORBIDDEN', error: 'Forbidden', message: `You don't have access to ${title}.` })
    const ok = await app.inject({ url: path, headers: { cookie: teacher.cookie } })
    t.equal(ok.statusCode, 200, `staff: ${path}`)
    t.equal(ok.body, `page ${path} for Ada Teacher`)
  }
  for (const who of [parent, teacher, student]) {
    const res = await app.inject({ url: '/members', headers: { cookie: who.cookie } })
    t.equal(res.statusCode, 200, 'no groups: every member')
  }
  // The 403 names the member; the section's CSRF tokens stay in the section, so no sign-out form that would fail here.
  const refused = await app.inject({ url: '/staff-room', headers: { cookie: parent.cookie } })
  t.match(refused.body, 'You are signed in as <strong>Pat Parent</strong>')
  t.notMatch(refused.body, /<form/)
  t.match(refused.body, '<a href="/schools/resources/">Go to all resources</a>')
})

t.test('after signing in from the redirect, the member lands back on the host route', async (t) => {
  const { app } = await build(t, { after: everyWay })
  const path = '/governors/minutes?year=2025'
  const redirect = await app.inject(path)
  t.equal(redirect.headers.location, loginFor(path))
  const login = await app.inject(redirect.headers.location!.slice(BASE_URL.length))
  t.equal(login.statusCode, 200)
  t.match(login.body, 'name="BackURL" value="/governors/minutes?year=2025"')
  const { res, cookie } = await signInAs(app, 'teacher@example.org', '/governors/minutes?year=2025')
  t.equal(res.headers.location, `${BASE_URL}${path}`)
  const back = await app.inject({ url: path, headers: { cookie } })
  t.equal(back.statusCode, 200)
  t.equal(back.body, `page ${path} for Ada Teacher`)
})

t.test('hooks run in order: the host\'s, then the guard, then the route\'s own preHandler and the page', async (t) => {
  const seen: string[] = []
  const record = (name: string) => async () => { seen.push(name) }
  const { app } = await build(t, {
    before (app) {
      app.addHook('onRequest', record('host onRequest (before the section)'))
      app.addHook('preHandler', record('host preHandler (before the section)'))
    },
    after (app) {
      app.addHook('onRequest', record('host onRequest'))
      app.addHook('preValidation', record('host preValidation'))
      app.addHook('preHandler', record('host preHandler'))
      for (const [url, guard] of [['/config', { config: { membersOnly: { groups: ['staff'] } } }], ['/decorated', { preHandler: app.membersOnly({ groups: ['staff'] }) }]] as const) {
        app.get(url, {
          ...guard,
          onRequest: record('route onRequest'),
          // After the decorator's hook when it is one; the route config puts the guard first itself.
          preHandler: [...('preHandler' in guard ? [guard.preHandler] : []), async function loadMemberData (request) {
            seen.push(`route preHandler: loads data of ${request.session.get('member')?.name}`)
          }]
        }, async () => {
          seen.push('handler')
          return 'page'
        })
      }
    }
  })
  const parent = await signInAs(app, 'parent@example.org')
  const teacher = await signInAs(app, 'teacher@example.org')
  const hosts = ['host onRequest (before the section)', 'host onRequest', 'route onRequest', 'host preValidation', 'host preHandler (before the section)', 'host preHandler']
  for (const url of ['/config', '/decorated']) {
    for (const [who, cookie, status, rest] of [
      ['visitor', undefined, 302, []],
      ['outsider', parent.cookie, 403, []],
      ['insider', teacher.cookie, 200, ['route preHandler: loads data of Ada Teacher', 'handler']]
    ] as const) {
      seen.length = 0
      const res = await app.inject({ url, headers: cookie === undefined ? {} : { cookie } })
      t.equal(res.statusCode, status, `${url}: ${who}`)
      t.same(seen, [...hosts, ...rest], `${url}: ${who}: every host hook, and the route's own preHandler only for a member let in`)
    }
  }
})

t.test('a route registered before the section is guarded by an instance hook, in the section\'s place among the host\'s hooks', async (t) => {
  const seen: string[] = []
  const { app } = await build(t, {
    before (app) {
      app.addHook('preHandler', async () => { seen.push('host preHandler (before the section)') })
      app.get('/early', { config: { membersOnly: { groups: ['staff'] } }, preHandler: async () => { seen.push('route preHandler') } }, async () => 'early page')
    },
    after (app) {
      app.addHook('preHandler', async () => { seen.push('host preHandler (after the section)') })
    }
  })
  t.equal((await app.inject('/early')).statusCode, 302)
  t.same(seen, ['host preHandler (before the section)'], 'the guard answers in its place: hooks added after the section come after it')
  const teacher = await signInAs(app, 'teacher@example.org')
  seen.length = 0
  const res = await app.inject({ url: '/early', headers: { cookie: teacher.cookie } })
  t.equal(res.body, 'early page')
  t.same(seen, ['host preHandler (before the section)', 'host preHandler (after the section)', 'route preHandler'])
})

t.test('the anonymous short-circuit answers marked host routes before any session is built, with the same bytes', async (t) => {
  const fast = await build(t, { shortCircuit: true, before: earlier, after: everyWay })
  const slow = await build(t, { before: earlier, after: everyWay })
  const strip = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'date'))
  for (const path of GUARDED) {
    let a: LightMyRequestResponse | undefined
    const warnings = await conflictWarnings(async () => { a = await fast.app.inject(`${path}?x=1`) })
    const b = await slow.app.inject(`${path}?x=1`)
    t.equal(a!.statusCode, 302, path)
    t.same(strip(a!.headers), strip(b.headers), `${path}: the same headers`)
    t.equal(a!.body, b.body)
    t.equal(warnings.length, 1)
  }
  // Routes the section saw being registered carry the mark; the two registered before it take the normal path.
  t.equal(fast.sessionsBuilt(), 2, 'sessions built for /early and /early-child only')
  t.equal(fast.store.sets, 0)
  // Members still reach the page through every hook.
  const teacher = await signInAs(fast.app, 'teacher@example.org')
  t.equal((await fast.app.inject({ url: '/staff-room', headers: { cookie: teacher.cookie } })).body, 'page /staff-room for Ada Teacher')
})

t.test('with getMember the host decides who is signed in on its members-only routes too', async (t) => {
  let lookups = 0
  const { app } = await build(t, {
    plugin: {
      signIn: false,
      authenticate: undefined,
      getMember (request) {
        lookups++
        return request.headers['x-user'] === 'staff' ? { id: 's', name: 'Staff', groups: ['staff'] } : request.headers['x-user'] === 'parent' ? { id: 'p', name: 'Parent' } : null
      }
    },
    after: everyWay
  })
  t.equal((await app.inject('/staff-room')).headers.location, loginFor('/staff-room'))
  t.equal((await app.inject({ url: '/staff-room', headers: { 'x-user': 'parent' } })).statusCode, 403)
  t.equal((await app.inject({ url: '/staff-room', headers: { 'x-user': 'staff' } })).statusCode, 200)
  t.equal(lookups, 3, 'one lookup per request')
})

t.test('a bad membersOnly fails start-up with FST_SR_INVALID_OPTION, naming the route', async (t) => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['groups: []', { groups: [] }, /"membersOnly\.groups": must be a non-empty list of group names, on the route GET \/bad/],
    ['groups: a string', { groups: 'staff' }, /"membersOnly\.groups"/],
    ['an empty group name', { groups: ['staff', ''] }, /"membersOnly\.groups"/],
    ['a group that is not a string', { groups: [7] }, /"membersOnly\.groups"/],
    ['an unknown key', { group: ['staff'] }, /"membersOnly\.group": is not a setting of membersOnly \(known: groups, title\)/],
    ['an empty title', { title: ' ' }, /"membersOnly\.title": must be a non-empty string/],
    ['a title that is not a string', { title: 7 }, /"membersOnly\.title"/],
    ['a string', 'staff', /"membersOnly": must be true, false or \{ groups\?, title\? \}/],
    ['null', null, /"membersOnly": must be true/],
    ['a list', ['staff'], /"membersOnly": must be true/]
  ]
  for (const [name, membersOnly, message] of cases) {
    const failed = build(t, { after: (app) => { app.register(async (child) => { child.get('/bad', { config: { membersOnly: membersOnly as boolean } }, page) }) } })
    await t.rejects(failed, { code: 'FST_SR_INVALID_OPTION', message }, name)
  }
  const decorator: Array<[string, unknown, RegExp]> = [
    ['groups: []', { groups: [] }, /"membersOnly\.groups": must be a non-empty list of group names, in fastify\.membersOnly\(\)/],
    ['an unknown key', { roles: ['staff'] }, /"membersOnly\.roles"/],
    ['false', false, /"membersOnly": must be \{ groups\?, title\? \} or nothing/],
    ['null', null, /"membersOnly": must be \{ groups\?, title\? \} or nothing/]
  ]
  for (const [name, options, message] of decorator) {
    const failed = build(t, { after: (app) => { app.register(async (child) => { child.get('/bad', { preHandler: child.membersOnly(options as object) }, page) }) } })
    await t.rejects(failed, { code: 'FST_SR_INVALID_OPTION', message }, `decorator: ${name}`)
  }
  const both = build(t, { after: (app) => { app.register(async (child) => { child.get('/both', { config: { membersOnly: true }, preHandler: child.membersOnly() }, page) }) } })
  await t.rejects(both, { code: 'FST_SR_INVALID_OPTION', message: /is given twice: use the route config or fastify\.membersOnly\(\), not both, on the route GET \/both/ })
})

t.test('a bad membersOnly on a route registered before the section fails closed on its requests; false leaves a route open', async (t) => {
  let ran = 0
  const { app } = await build(t, {
    before (app) {
      app.get('/bad', { config: { membersOnly: { groups: [] } } }, async () => { ran++ })
      app.get('/open', { config: { membersOnly: false } }, async () => 'open')
    },
    after (app) {
      app.get('/open-too', { config: { membersOnly: false } }, async () => 'open too')
    }
  })
  const teacher = await signInAs(app, 'teacher@example.org')
  for (const headers of [{}, { cookie: teacher.cookie }, { cookie: teacher.cookie }]) {
    const res = await app.inject({ url: '/bad', headers })
    t.equal(res.statusCode, 500)
    t.equal(res.json().code, 'FST_SR_INVALID_OPTION')
    t.match(res.json().message, /"membersOnly\.groups": must be a non-empty list of group names, on the route GET \/bad/)
  }
  t.equal(ran, 0, 'never served')
  for (const [url, body] of [['/open', 'open'], ['/open', 'open'], ['/open-too', 'open too']]) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200)
    t.equal(res.body, body)
  }
})

/** getMember functions, one per section, that count their calls: `x-user: staff` is a member of staff. */
function countingMembers<K extends string> (...keys: K[]) {
  const calls = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>
  const member = (key: K) => (request: FastifyRequest) => {
    calls[key]++
    return request.headers['x-user'] === 'staff' ? { id: 's', name: 'Staff', groups: ['staff'] } : null
  }
  return { calls, member }
}

/** A host with cookie and session only: the test registers the sections. */
async function sessionHost (t: Test): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  return app
}

t.test('several sections: the first registered guards the host routes, once, with its own settings', async (t) => {
  const { calls, member } = countingMembers('first', 'second')
  const app = await sessionHost(t)
  await app.register(schoolsResources, { catalog: CATALOG, signIn: false, baseUrl: BASE_URL, getMember: member('first') })
  await app.register(schoolsResources, { catalog: CATALOG, signIn: false, baseUrl: BASE_URL, prefix: '/staff/resources', loginPath: '/staff/login', getMember: member('second') })
  everyWay(app)
  await app.ready()
  for (const path of ['/staff-room', '/decorated', '/child', '/governors/minutes']) {
    let res: LightMyRequestResponse | undefined
    const warnings = await conflictWarnings(async () => { res = await app.inject(path) })
    t.equal(res!.headers.location, loginFor(path), `${path}: the first section's login page`)
    t.same(warnings.map((w) => w.message), [refusedIndex(path)], 'and its index')
    t.equal((await app.inject({ url: path, headers: { 'x-user': 'staff' } })).statusCode, 200)
  }
  t.same(calls, { first: 8, second: 0 }, 'one guard per request, the first section\'s')
})

t.test('a section in a child context guards its own context; one registered later outside does not guard it again', async (t) => {
  const { calls, member } = countingMembers('inner', 'outer')
  const app = await sessionHost(t)
  await app.register(async function school (school) {
    school.get('/early', { config: { membersOnly: { groups: ['staff'] } } }, page)
    await school.register(schoolsResources, { catalog: CATALOG, signIn: false, baseUrl: BASE_URL, getMember: member('inner'), loginPath: '/school/login', membersOnlyOutsideSection: 'warn' })
    school.get('/late', { config: { membersOnly: { groups: ['staff'] } } }, page)
  }, { prefix: '/school' })
  await app.register(schoolsResources, { catalog: CATALOG, signIn: false, baseUrl: BASE_URL, prefix: '/site/resources', getMember: member('outer') })
  app.get('/root', { config: { membersOnly: true } }, page)
  await app.ready()
  for (const path of ['/school/early', '/school/late']) {
    t.equal((await app.inject(path)).headers.location, loginFor(path, '/school/school/login'), path)
    t.equal((await app.inject({ url: path, headers: { 'x-user': 'staff' } })).statusCode, 200)
  }
  t.same(calls, { inner: 4, outer: 0 }, 'the inner section alone, once per request')
  t.equal((await app.inject('/root')).headers.location, loginFor('/root'), 'the root is the outer section\'s')
  t.same(calls, { inner: 4, outer: 1 })
})

t.test('the host\'s own 404 and routes stay the host\'s', async (t) => {
  const seen: string[] = []
  const { app } = await build(t, {
    after (app) {
      app.addHook('onRequest', async (request) => { seen.push(request.url) })
      app.setNotFoundHandler(async (_request, reply) => reply.code(404).send('the host\'s own 404'))
      app.get('/open', async () => 'open page')
      everyWay(app)
    }
  })
  const teacher = await signInAs(app, 'teacher@example.org')
  for (const headers of [{}, { cookie: teacher.cookie }]) {
    const missing = await app.inject({ url: '/staff-room/nothing-here', headers })
    t.equal(missing.statusCode, 404)
    t.equal(missing.body, 'the host\'s own 404')
    const open = await app.inject({ url: '/open', headers })
    t.equal(open.statusCode, 200)
    t.equal(open.body, 'open page')
    t.equal(open.headers['cache-control'], undefined, 'nothing of the section on an open route')
  }
  t.same(seen.filter((url) => url !== '/Security/login'), ['/staff-room/nothing-here', '/open', '/staff-room/nothing-here', '/open'])
})

t.test('a host with @fastify/csrf-protection gets the "sign in as someone else" form on its 403, and it comes back', async (t) => {
  const { app } = await build(t, { hostCsrf: true, after: everyWay })
  const parent = await signInAs(app, 'parent@example.org')
  const refused = await app.inject({ url: '/staff-room', headers: { cookie: parent.cookie } })
  t.equal(refused.statusCode, 403)
  t.match(refused.body, '<button type="submit">Sign in as someone else</button>')
  const out = await postSignOutForm(app, parent.cookie, refused, { BackURL: '/staff-room' })
  t.equal(out.statusCode, 303)
  t.equal(out.headers.location, loginFor('/staff-room'))
  const teacher = await signInAs(app, 'teacher@example.org', '/staff-room')
  t.equal(teacher.res.headers.location, `${BASE_URL}/staff-room`)
  t.equal((await app.inject({ url: '/staff-room', headers: { cookie: teacher.cookie } })).body, 'page /staff-room for Ada Teacher')
})

t.test('only the login redirect has a length limit: members of a host page with a long query still get it', async (t) => {
  const { app } = await build(t, { after: everyWay })
  const long = `/staff-room?q=${'x'.repeat(1100)}`
  const visitor = await app.inject(long)
  t.equal(visitor.statusCode, 414)
  t.equal(visitor.json().code, 'FST_SR_URI_TOO_LONG')
  const teacher = await signInAs(app, 'teacher@example.org')
  const member = await app.inject({ url: long, headers: { cookie: teacher.cookie } })
  t.equal(member.statusCode, 200)
})

t.test('visitors and members in and out of the groups, truly in parallel, each get their own answer', async (t) => {
  const { app } = await build(t, { after: everyWay })
  const parent = await signInAs(app, 'parent@example.org')
  const teacher = await signInAs(app, 'teacher@example.org')
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const asks = Array.from({ length: 90 }, (_, i) => ({ who: (['visitor', 'parent', 'teacher'] as const)[i % 3], path: ['/staff-room', '/decorated', '/members'][Math.floor(i / 3) % 3] }))
  const answers = await Promise.all(asks.map(async ({ who, path }) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}?n=${who}`, {
      redirect: 'manual',
      headers: who === 'visitor' ? {} : { cookie: who === 'parent' ? parent.cookie : teacher.cookie }
    })
    return { status: res.status, location: res.headers.get('location'), body: await res.text() }
  }))
  answers.forEach((answer, i) => {
    const { who, path } = asks[i]
    const url = `${path}?n=${who}`
    if (who === 'visitor') t.same([answer.status, answer.location], [302, loginFor(url)], `${url}`)
    else if (who === 'teacher' || path === '/members') t.same([answer.status, answer.body], [200, `page ${url} for ${who === 'teacher' ? 'Ada Teacher' : 'Pat Parent'}`], url)
    else t.same([answer.status, /signed in as <strong>Pat Parent<\/strong>/.test(answer.body)], [403, true], url)
  })
})

t.test('an onRoute hook added after the section that replaces preHandler cannot open the route: its handler refuses', async (t) => {
  let served = 0
  const { app } = await build(t, {
    after (host) {
      // A host's own "auth by route config" hook that sets the list rather than adding to it.
      host.addHook('onRoute', (route) => { if (route.url.endsWith('notices')) route.preHandler = [] })
      host.get('/notices', { config: { membersOnly: { groups: ['staff'] } } }, async () => { served++; return 'staff notices' })
      host.get('/decorated-notices', { preHandler: host.membersOnly() }, async () => { served++; return 'member notices' })
    }
  })
  const teacher = await signInAs(app, 'teacher@example.org')
  for (const url of ['/notices', '/decorated-notices']) {
    for (const headers of [{}, { cookie: teacher.cookie }]) {
      const res = await app.inject({ url, headers })
      t.equal(res.statusCode, 500, url)
      t.equal(res.json().code, 'FST_SR_UNGUARDED_ROUTE')
      t.notMatch(res.body, /(staff|member) notices/)
    }
  }
  t.equal(served, 0, 'the handler never ran')
})

t.test('a 403 in JSON for a route without a title asks the host\'s locale function once', async (t) => {
  let calls = 0
  const locale = async () => { calls++; return 'fr' }
  const { app } = await build(t, { before: earlier, plugin: { locale } })
  const parent = await signInAs(app, 'parent@example.org')
  calls = 0
  const json = await app.inject({ url: '/early-child', headers: { cookie: parent.cookie, accept: 'application/json' } })
  t.equal(json.statusCode, 403)
  t.same(json.json(), { statusCode: 403, code: 'FST_SR_FORBIDDEN', error: 'Forbidden', message: 'Vous n’avez pas accès à cette page.' })
  t.equal(json.headers['content-language'], 'fr')
  t.equal(calls, 1, 'one answer, one language')
})
