import t, { type Test } from 'tap'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import schoolsResources, { eventChannels, MemoryAttemptStore, type SignedOutEverywhereEvent } from '../../lib/index.js'
import { resolveOptions } from '../../lib/options.js'
import { RedisAttemptStore } from '../../lib/stores/redis/index.js'
import { GENERATION_CACHE_MS } from '../../lib/session/sign-out-everywhere.js'
import { FakeRedis } from '../helpers/fake-redis.js'
import { AsyncStore } from '../helpers/async-store.js'
import { BASE_URL, buildTestApp, CountingCatalog, formToken, postSignOutForm, signIn, TEACHER_MEMBER, teacherOnly, withCookies, type BuildOptions } from '../helpers/app.js'
import { REDIS_URL, connectedClient, deleteKeys, uniquePrefix } from '../helpers/redis.js'

// Sign out everywhere: a generation count per member, copied into the session at sign-in and compared on
// every read of the member; the host API, the logout form's button, the event.

const MATHS = '/schools/resources/resources/maths/'
const HOUR = 60 * 60 * 1000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function listen (t: Test): SignedOutEverywhereEvent[] {
  const seen: SignedOutEverywhereEvent[] = []
  const listener = (message: unknown) => { seen.push(message as SignedOutEverywhereEvent) }
  subscribe(eventChannels.signedOutEverywhere, listener)
  t.teardown(() => unsubscribe(eventChannels.signedOutEverywhere, listener))
  return seen
}

async function app (t: Test, opts: BuildOptions = {}) {
  const built = await buildTestApp(opts)
  t.teardown(() => built.app.close())
  return built
}

const status = async (server: Awaited<ReturnType<typeof app>>['app'], cookie: string) => (await server.inject({ url: MATHS, headers: { cookie } })).statusCode

t.test('signOutEverywhere: the option, its store and its refusals', async (t) => {
  const base = { catalog: new CountingCatalog(), authenticate: teacherOnly }
  const lockoutStore = new MemoryAttemptStore()
  const resolved = resolveOptions({ ...base, lockout: { store: lockoutStore } }).signOutEverywhere
  t.equal(resolved !== false && resolved.store, lockoutStore, 'counts in lockout.store by default')
  const own = new MemoryAttemptStore()
  const withOwn = resolveOptions({ ...base, signOutEverywhere: { store: own } }).signOutEverywhere
  t.equal(withOwn !== false && withOwn.store, own)
  const noLockout = resolveOptions({ ...base, lockout: false }).signOutEverywhere
  t.ok(noLockout !== false && noLockout.store instanceof MemoryAttemptStore, 'in this process without the lockout')
  t.equal(resolveOptions({ ...base, signOutEverywhere: false }).signOutEverywhere, false)
  t.equal(resolveOptions({ catalog: base.catalog, signIn: false, getMember: () => null }).signOutEverywhere, false, 'with getMember, left out is off')
  t.throws(() => resolveOptions({ catalog: base.catalog, signIn: false, getMember: () => null, signOutEverywhere: {} } as never), { code: 'FST_SR_INVALID_OPTION', message: /"signOutEverywhere": is for the section's own session/ })
  t.throws(() => resolveOptions({ ...base, signOutEverywhere: { store: {} as never } }), { message: /"signOutEverywhere\.store": must implement increment, hold, get, reset/ })
  t.throws(() => resolveOptions({ ...base, signOutEverywhere: { cacheMs: 1 } as never }), { message: /"signOutEverywhere\.cacheMs": is not a setting/ })
  t.throws(() => resolveOptions({ ...base, signOutEverywhere: 'yes' as never }), { message: /"signOutEverywhere": must be an object, or false/ })
  t.throws(() => resolveOptions({ ...base, keepSessionData: ['member.generation'] }), { message: /must not list "member.generation"/ })
  t.throws(() => resolveOptions({ ...base, returnParam: 'everywhere' }), { code: 'FST_SR_INVALID_OPTION', message: /"returnParam".*everywhere/ })
})

t.test('the host API signs every session of one member out, says who asked, and a new sign-in works', async (t) => {
  const store = new MemoryAttemptStore()
  const { app: server } = await app(t, { plugin: { signOutEverywhere: { store } } })
  const seen = listen(t)
  const laptop = await signIn(server)
  const staffRoom = await signIn(server)
  t.same([await status(server, laptop), await status(server, staffRoom)], [200, 200], 'two devices signed in')
  await server.schoolsResources.signOutEverywhere(TEACHER_MEMBER.id, { by: 'admin-7' })
  t.same([await status(server, laptop), await status(server, staffRoom)], [302, 302], 'both signed out at their next request')
  t.equal(seen.length, 1)
  t.match(seen[0], { app: server, memberId: 't-1', requestedBy: 'admin-7', section: undefined, requestId: undefined, clientAddress: undefined })
  const again = await signIn(server)
  t.equal(await status(server, again), 200, 'signing in again starts a session of the new generation')
  const held = await store.get('generation:t-1')
  t.equal(held?.count, 1)
  t.ok(held!.expiresAt > Date.now() + 11 * HOUR && held!.expiresAt <= Date.now() + 12 * HOUR, 'held for the absolute timeout, 12 h')
  await server.schoolsResources.signOutEverywhere(42)
  t.equal(seen[1].requestedBy, undefined, 'no by: undefined')
  t.equal((await store.get('generation:42'))?.count, 1, 'a number id, counted as String(id)')
  t.equal(await status(server, again), 200, 'another member\'s sign-out leaves this one')

  for (const bad of [null, undefined, '', Number.NaN, Number.POSITIVE_INFINITY, {}, ['t-1']]) {
    await t.rejects(server.schoolsResources.signOutEverywhere(bad as never), { code: 'FST_SR_INVALID_MEMBER_ID', name: 'FastifyError' }, String(bad))
  }
  await t.rejects(server.schoolsResources.signOutEverywhere(null as never), /needs a member id .*; got null/)
  const err = await server.schoolsResources.signOutEverywhere('' as never).catch((e: unknown) => e)
  t.ok(err instanceof TypeError, 'a TypeError')
})

t.test('without an absolute timeout, a count is held 400 days', async (t) => {
  const store = new MemoryAttemptStore()
  const { app: server } = await app(t, { plugin: { timeouts: { absoluteMs: false }, signOutEverywhere: { store } } })
  await server.schoolsResources.signOutEverywhere('t-1')
  t.ok((await store.get('generation:t-1'))!.expiresAt > Date.now() + 399 * 24 * HOUR)
})

t.test('the logout form\'s "Sign out on all devices" button', async (t) => {
  const { app: server } = await app(t)
  const seen = listen(t)
  const classroom = await signIn(server)
  const laptop = await signIn(server)
  const page = await server.inject({ url: MATHS, headers: { cookie: laptop } })
  t.match(page.body, '<button type="submit" name="everywhere" value="1">Sign out on all devices</button>', 'member pages have the button')
  const plain = await postSignOutForm(server, laptop, page)
  t.equal(plain.statusCode, 303)
  t.equal(await status(server, classroom), 200, 'a plain sign-out leaves the other device signed in')

  const laptop2 = await signIn(server)
  const page2 = await server.inject({ url: MATHS, headers: { cookie: laptop2 } })
  const res = await postSignOutForm(server, laptop2, page2, { everywhere: '1' })
  t.equal(res.statusCode, 303, 'signed out, as by the plain button')
  t.equal(res.headers.location, '/schools/resources/')
  t.same([await status(server, laptop2), await status(server, classroom)], [302, 302], 'this device and the other')
  t.equal(seen.length, 1)
  t.match(seen[0], { memberId: 't-1', requestedBy: 't-1', section: '/schools/resources/' }, 'the member asked')
  t.type(seen[0].requestId, 'string')

  const visitorPage = await server.inject('/Security/login')
  const visitor = await server.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: withCookies('', visitorPage) }, payload: { _csrf: formToken(visitorPage.body), everywhere: '1' } })
  t.equal(visitor.statusCode, 303, 'a visitor\'s everywhere is a plain sign-out')
  t.equal(seen.length, 1, 'and signs nobody out')

  const { app: off } = await app(t, { plugin: { signOutEverywhere: false } })
  const offCookie = await signIn(off)
  const offPage = await off.inject({ url: MATHS, headers: { cookie: offCookie } })
  t.notMatch(offPage.body, 'Sign out on all devices', 'off: no button')
  t.equal(off.hasDecorator('schoolsResources'), false, 'and no host API')
})

t.test('another instance sees a sign-out everywhere within its 5 s cache; a store outage rejects with 503', async (t) => {
  const sessions = new AsyncStore()
  const counts = new MemoryAttemptStore()
  const shared = { session: { store: sessions }, plugin: { signOutEverywhere: { store: counts } } }
  const { app: a } = await app(t, shared)
  const { app: b } = await app(t, shared)
  const cookie = await signIn(a)
  t.equal(await status(b, cookie), 200, 'instance b knows the session')
  await a.schoolsResources.signOutEverywhere('t-1')
  const before = Date.now()
  const onB = await status(b, cookie)
  if (Date.now() - before < GENERATION_CACHE_MS - 500) t.equal(onB, 200, 'b still has the old count in its cache')
  await sleep(GENERATION_CACHE_MS + 100)
  t.equal(await status(b, cookie), 302, 'after 5 s, b signs the session out too')

  const fake = new FakeRedis()
  const { app: c } = await app(t, { plugin: { signOutEverywhere: { store: new RedisAttemptStore(fake) } } })
  const cCookie = await signIn(c)
  const jsonCookie = await signIn(c)
  const jsonPage = await c.inject({ url: MATHS, headers: { cookie: jsonCookie } })
  fake.failWith = new Error('connect ECONNREFUSED 127.0.0.1:6379')
  await t.rejects(c.schoolsResources.signOutEverywhere('t-1'), { code: 'FST_SR_STORE_UNAVAILABLE' })
  const page = await c.inject({ url: MATHS, headers: { cookie: cCookie } })
  t.equal(page.statusCode, 200, 'the count read a moment ago is still cached')
  const res = await postSignOutForm(c, cCookie, page, { everywhere: '1' })
  t.equal(res.statusCode, 503, 'the button in an outage: the 503 page')
  t.equal(res.headers['retry-after'], '5')
  t.match(res.body, /<h1>Signed out on this browser only<\/h1>/)
  t.match(res.body, /your other devices were not signed out/)
  const expired = [res.headers['set-cookie']].flat().map(String)
  t.match(expired, [/^sessionId=;.*Expires=Thu, 01 Jan 1970/, /^sr_remember=;.*Expires=Thu, 01 Jan 1970.*HttpOnly/], 'this browser\'s cookies expired: the session\'s and the remembered device\'s')
  const json = await c.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: withCookies(jsonCookie, jsonPage), accept: 'application/json' }, payload: { _csrf: formToken(jsonPage.body), everywhere: '1' } })
  t.equal(json.statusCode, 503)
  t.match(json.json(), { code: 'FST_SR_STORE_UNAVAILABLE', signedOut: true, signedOutEverywhere: false, message: /other devices were not signed out/ })
  fake.failWith = undefined
  t.equal(await status(c, cCookie), 302, 'this browser\'s session ended in the store too')
  const again = await signIn(c)
  const pageAgain = await c.inject({ url: MATHS, headers: { cookie: again } })
  t.equal((await postSignOutForm(c, again, pageAgain, { everywhere: '1' })).statusCode, 303, 'with the store back, the button works')
  await t.rejects(signIn(c).then(() => { fake.failWith = new Error('ECONNREFUSED') }).then(() => signIn(c)), /sign-in failed: 503/, 'a sign-in in an outage: 503, nothing half done')
})

t.test('a session from before the upgrade takes the current generation; findMember sessions are compared too', async (t) => {
  const { app: server, store } = await app(t, { plugin: { findMember: async (id) => id === 't-1' ? TEACHER_MEMBER : null } })
  const cookie = await signIn(server)
  for (const [id, json] of store.sessions) {
    const session = JSON.parse(json)
    t.equal(session['member.generation'], 0, 'sign-in copies the count (0 before any sign-out everywhere)')
    delete session['member.generation']
    store.sessions.set(id, JSON.stringify(session))
  }
  t.equal(await status(server, cookie), 200, 'nobody signed out by the upgrade')
  t.equal(JSON.parse([...store.sessions.values()][0])['member.generation'], 0, 'the generation set at the first request')
  await server.schoolsResources.signOutEverywhere('t-1')
  t.equal(await status(server, cookie), 302, 'with findMember, signed out too')
})

if (REDIS_URL !== undefined) {
  t.test('with RedisAttemptStore (real Redis): two instances, one count', async (t) => {
    const client = await connectedClient(t, REDIS_URL!)
    const prefix = uniquePrefix('everywhere')
    t.teardown(() => deleteKeys(client, prefix))
    const sessions = new AsyncStore()
    const shared = { session: { store: sessions }, plugin: { signOutEverywhere: { store: new RedisAttemptStore(client, { prefix }) } } }
    const { app: a } = await app(t, shared)
    const { app: b } = await app(t, shared)
    const cookie = await signIn(a)
    const other = await signIn(b)
    await b.schoolsResources.signOutEverywhere('t-1', { by: 'admin' })
    t.same([await status(b, cookie), await status(b, other)], [302, 302], 'both sessions ended')
    t.equal(Number(await client.sendCommand(['GET', `${prefix}generation:t-1`])), 1, 'one count in Redis')
  })
}

t.test('two sections in one app: one host API, each store counted once', async (t) => {
  const store = new MemoryAttemptStore()
  const other = new MemoryAttemptStore()
  const { app: server } = await app(t, {
    plugin: { signOutEverywhere: { store } },
    before: async (host) => {
      await host.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL, prefix: '/staff/resources', loginPath: '/staff/login', logoutPath: '/staff/logout', signOutEverywhere: { store } })
      await host.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL, prefix: '/governors/resources', loginPath: '/governors/login', logoutPath: '/governors/logout', signOutEverywhere: { store: other } })
    }
  })
  await server.schoolsResources.signOutEverywhere('t-1')
  t.equal((await store.get('generation:t-1'))?.count, 1, 'a store two sections share: one count')
  t.equal((await other.get('generation:t-1'))?.count, 1, 'the third section\'s own store too')
})

t.test('the button when the counts fail: a store outage without remembered devices, and a store that throws', async (t) => {
  const fake = new FakeRedis()
  const { app: server } = await app(t, { plugin: { rememberMe: false, signOutEverywhere: { store: new RedisAttemptStore(fake) } } })
  const cookie = await signIn(server)
  const page = await server.inject({ url: MATHS, headers: { cookie } })
  fake.failWith = new Error('connect ECONNREFUSED 127.0.0.1:6379')
  const res = await postSignOutForm(server, cookie, page, { everywhere: '1' })
  t.equal(res.statusCode, 503)
  t.match([res.headers['set-cookie']].flat().map(String), [/^sessionId=;.*Expires=Thu, 01 Jan 1970/], 'only the session cookie: there is no remember cookie to expire')

  // A host's store that fails in its own way is a bug, not an outage: the 500 page, never a 503 that says "try again".
  const broken = new MemoryAttemptStore()
  const { app: other } = await app(t, { plugin: { signOutEverywhere: { store: broken } } })
  const otherCookie = await signIn(other)
  const otherPage = await other.inject({ url: MATHS, headers: { cookie: otherCookie } })
  broken.increment = async () => { throw new TypeError('the host store is broken') }
  const failed = await postSignOutForm(other, otherCookie, otherPage, { everywhere: '1' })
  t.equal(failed.statusCode, 500)
  t.notMatch(failed.body, /the host store is broken/, 'no raw error reaches the client')
  t.equal(await status(other, otherCookie), 200, 'nothing half done: still signed in here')
})
