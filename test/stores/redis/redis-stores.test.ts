import t from 'tap'
import Fastify from 'fastify'
import { errorCodes, storeErrorHandler } from '../../../lib/index.js'
import { RedisAttemptStore, RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { isStoreUnavailable } from '../../../lib/errors.js'
import { STORE_RETRY_AFTER_SECONDS } from '../../../lib/pages/unavailable.js'
import { FakeRedis } from '../../helpers/fake-redis.js'
import { ClientClosedError, ClientOfflineError, ConnectionTimeoutError, ErrorReply, SocketClosedUnexpectedlyError } from 'redis'
import { buildTestApp, CSRF_COOKIE, signIn, postLogin, TEACHER } from '../../helpers/app.js'

const { FST_SR_STORE_UNAVAILABLE } = errorCodes

// The Redis stores over a stand-in client: their own logic, errors and timeouts. The same stores run
// against a real Redis in test/redis/ (when REDIS_URL is set).

function cb<T = unknown> (): { done: (err: unknown, value?: T) => void, result: Promise<T> } {
  let done!: (err: unknown, value?: T) => void
  const result = new Promise<T>((resolve, reject) => { done = (err, value) => err == null ? resolve(value as T) : reject(err) })
  return { done, result }
}

t.test('constructors refuse a missing client and bad options', async (t) => {
  for (const make of [
    (c: any) => new RedisAttemptStore(c),
    (c: any) => new RedisSessionStore(c)
  ]) {
    t.throws(() => make(null), { code: 'FST_SR_INVALID_OPTION', message: /needs a Redis client with sendCommand/ })
    t.throws(() => make({}), /needs a Redis client with sendCommand/)
  }
  const fake = new FakeRedis()
  t.throws(() => new RedisAttemptStore(fake, { timeoutMs: 0 }), { code: 'FST_SR_INVALID_OPTION', message: /"timeoutMs": must be a positive whole number/ })
  t.throws(() => new RedisAttemptStore(fake, { timeoutMs: 1.5 }), /timeoutMs/)
  t.throws(() => new RedisAttemptStore(fake, { prefix: 1 as never }), /"prefix": must be a string/)
  t.throws(() => new RedisSessionStore(fake, { ttlMs: -1 }), { code: 'FST_SR_INVALID_OPTION', message: /"ttlMs": must be a positive whole number/ })
})

t.test('RedisAttemptStore counts, holds, reads and resets under its prefix', async (t) => {
  const fake = new FakeRedis()
  const store = new RedisAttemptStore(fake, { prefix: 'p:' })
  t.equal(await store.get('a'), undefined)
  const before = Date.now()
  const first = await store.increment('a', 1000)
  t.equal(first.count, 1)
  t.ok(first.expiresAt >= before + 1000 && first.expiresAt <= Date.now() + 1000, 'expires one window after the first failure')
  t.equal((await store.increment('a', 1000)).count, 2)
  t.same([...fake.data.keys()], ['p:a'], 'keys carry the prefix')
  await store.hold('a', 60_000)
  const held = await store.get('a')
  t.equal(held?.count, 2)
  t.ok(held!.expiresAt > Date.now() + 50_000, 'held for the lockout duration')
  await store.hold('missing', 60_000)
  t.equal(await store.get('missing'), undefined, 'holding a missing key creates nothing')
  await store.reset('a')
  t.equal(await store.get('a'), undefined)
  t.equal(new RedisAttemptStore(fake).constructor.name, 'RedisAttemptStore')
  await new RedisAttemptStore(fake).increment('b', 1000)
  t.ok(fake.data.has('schools-resources:attempts:b'), 'default prefix')
})

t.test('RedisSessionStore: JSON values whose TTL is the cookie lifetime', async (t) => {
  const fake = new FakeRedis()
  const store = new RedisSessionStore(fake, { prefix: 's:', ttlMs: 5000 })
  const expires = new Date(Date.now() + 60_000)
  const set1 = cb()
  store.set('id1', { member: { id: 'm', name: 'M' }, cookie: { expires, originalMaxAge: 60_000 } }, set1.done)
  await set1.result
  const [, key, json, px, ttl] = fake.commands.at(-1)!
  t.same([key, px], ['s:id1', 'PX'])
  t.ok(Number(ttl) > 59_000 && Number(ttl) <= 60_000, `TTL ${ttl} ms follows the cookie's maxAge`)
  t.same(JSON.parse(json).member, { id: 'm', name: 'M' })
  const got = cb<any>()
  store.get('id1', got.done)
  t.same((await got.result).member, { id: 'm', name: 'M' })

  t.equal(store.ttlOf({ cookie: {} }), 5000, 'no expiry: ttlMs')
  t.equal(store.ttlOf({ cookie: { expires: null } }), 5000)
  t.equal(store.ttlOf({ cookie: { expires: 'not a date' } }), 5000)
  t.equal(store.ttlOf(null), 5000)
  t.equal(new RedisSessionStore(fake).ttlOf({}), 24 * 60 * 60 * 1000, 'default ttlMs: one day')

  // A cookie that has already expired is deleted, not stored.
  const gone = cb()
  store.set('id1', { cookie: { expires: new Date(Date.now() - 1) } }, gone.done)
  await gone.result
  t.same(fake.commands.at(-1), ['DEL', 's:id1'])
  const missing = cb<unknown>()
  store.get('id1', missing.done)
  t.equal(await missing.result, null)

  fake.data.set('s:bad', { value: '{not json', expiresAt: undefined })
  const bad = cb<unknown>()
  store.get('bad', bad.done)
  t.equal(await bad.result, null, 'an unreadable entry counts as no session')

  const destroyed = cb()
  store.set('id2', { cookie: {} }, () => store.destroy('id2', destroyed.done))
  await destroyed.result
  t.notOk(fake.data.has('s:id2'))
})

t.test('every failure becomes FST_SR_STORE_UNAVAILABLE with its cause; no answer in time too', async (t) => {
  const fake = new FakeRedis()
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
  fake.failWith = refused
  const store = new RedisSessionStore(fake, { timeoutMs: 50 })
  const got = cb()
  store.get('x', got.done)
  const err: any = await got.result.catch((e: unknown) => e)
  t.ok(err instanceof FST_SR_STORE_UNAVAILABLE)
  t.equal(err.statusCode, 503)
  t.equal(err.cause, refused)
  t.match(err.message, 'GET failed: Error: connect ECONNREFUSED')
  for (const op of [(done: any) => store.set('x', { cookie: {} }, done), (done: any) => store.destroy('x', done)]) {
    const c = cb()
    op(c.done)
    await t.rejects(c.result, { code: 'FST_SR_STORE_UNAVAILABLE' })
  }
  fake.failWith = 'a string'
  const stringly = cb()
  new RedisSessionStore(fake, { timeoutMs: 50 }).get('k', stringly.done)
  await t.rejects(stringly.result, { code: 'FST_SR_STORE_UNAVAILABLE', message: /GET failed: a string$/ })

  fake.failWith = undefined
  fake.hang = true
  const started = Date.now()
  const attempts = new RedisAttemptStore(fake, { timeoutMs: 50 })
  await t.rejects(attempts.increment('k', 1000), { code: 'FST_SR_STORE_UNAVAILABLE', message: /no answer from Redis within 50 ms \(EVAL\)/ })
  t.ok(Date.now() - started < 1000, 'bounded by timeoutMs')
  await t.rejects(attempts.get('k'), { code: 'FST_SR_STORE_UNAVAILABLE' })
})

t.test('isStoreUnavailable knows our error, Redis client errors and network errors, nothing else', async (t) => {
  t.ok(isStoreUnavailable(new FST_SR_STORE_UNAVAILABLE('x')))
  t.ok(isStoreUnavailable(Object.assign(new Error('x'), { name: 'ClientClosedError' })))
  // node-redis's own classes, as connect-redis passes them on: their `name` is plain 'Error'.
  for (const error of [new ClientClosedError(), new ClientOfflineError(), new ConnectionTimeoutError(), new SocketClosedUnexpectedlyError()]) {
    t.equal(error.name, 'Error')
    t.ok(isStoreUnavailable(error), `${error.constructor.name}: ${error.message}`)
  }
  t.notOk(isStoreUnavailable(new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value')), 'a command error is not an outage')
  t.ok(isStoreUnavailable(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })))
  t.notOk(isStoreUnavailable(new Error('x')))
  t.notOk(isStoreUnavailable(Object.assign(new Error('x'), { code: 'FST_CSRF_INVALID_TOKEN' })))
  t.notOk(isStoreUnavailable(null))
  t.notOk(isStoreUnavailable('ECONNREFUSED'))
})

t.test('the plugin with Redis stores: sign-in, lockout and rate limit go through the client', async (t) => {
  const fake = new FakeRedis()
  const { app } = await buildTestApp({
    session: { store: new RedisSessionStore(fake, { prefix: 's:' }) },
    plugin: {
      lockout: { store: new RedisAttemptStore(fake, { prefix: 'a:' }), maxAttempts: 2 },
      loginRateLimit: { store: new RedisAttemptStore(fake, { prefix: 'r:' }), max: 100 }
    }
  })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(page.statusCode, 200)
  t.ok([...fake.data.keys()].some((k) => k.startsWith('s:')), 'the session is in the store')
  for (let i = 0; i < 2; i++) await postLogin(app, { email: TEACHER.email, password: 'wrong' })
  t.ok(fake.data.has('r:address:127.0.0.1'), 'the per-address limit counts failures in its store')
  const locked = await postLogin(app, { email: TEACHER.email, password: TEACHER.password })
  t.equal(locked.statusCode, 429, 'locked by the counts in the store')
  t.ok(fake.data.has('a:user-address:127.0.0.1|teacher@example.org'))
  t.ok(fake.data.has('a:user:teacher@example.org'))
})

t.test('store failures on the plugin routes answer 503 with Retry-After, no stack, no page, no cookie', async (t) => {
  const fake = new FakeRedis()
  const { app } = await buildTestApp({
    session: { store: new RedisSessionStore(fake, { timeoutMs: 100 }) },
    plugin: { lockout: { store: new RedisAttemptStore(fake, { timeoutMs: 100 }) } },
    extend: (app) => { app.get('/host', async () => 'host page') }
  })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const maths = '/schools/resources/resources/maths/'
  // The sign-in is counted once its answer has gone (sign-in/new-sessions.ts): let that finish first, so
  // that the failures below are the pages' own and the client's breaker counts only them.
  await new Promise((resolve) => setImmediate(resolve))

  fake.failWith = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
  const page = await app.inject({ url: maths, headers: { cookie } })
  t.equal(page.statusCode, 503)
  t.equal(page.headers['retry-after'], String(STORE_RETRY_AFTER_SECONDS))
  t.equal(page.headers['cache-control'], 'no-store')
  t.equal(page.headers['set-cookie'], undefined)
  t.match(page.body, '<h1>Temporarily unavailable</h1>')
  t.notMatch(page.body, /Mathematics|at .*\.js|ECONNREFUSED/, 'neither the page nor a stack nor the cause')

  const json = await app.inject({ url: maths, headers: { cookie, accept: 'application/json' } })
  t.equal(json.statusCode, 503)
  t.same(json.json(), { statusCode: 503, code: 'FST_SR_STORE_UNAVAILABLE', error: 'Service Unavailable', message: 'This part of the site is briefly unavailable. Please try again in a moment.' })

  const anonymous = await app.inject(maths)
  t.equal(anonymous.statusCode, 302, 'anonymous visitors still get the login redirect: it needs no store')
  t.match(anonymous.headers.location, '/Security/login?BackURL=')
  t.equal((await app.inject('/schools/resources/')).statusCode, 200, 'the index, anonymously, needs no store')

  // The login form keeps its CSRF secret in a cookie, not in the store: it needs no store either.
  const form = await app.inject('/Security/login')
  t.equal(form.statusCode, 200, 'the login form needs no store')
  t.same(form.cookies.map((c) => c.name), [CSRF_COOKIE], 'and starts no session')

  // The host's own routes keep the host's error handling; Fastify's default uses the error's 503.
  const host = await app.inject({ url: '/host', headers: { cookie } })
  t.equal(host.statusCode, 503)
  t.equal(host.json().code, 'FST_SR_STORE_UNAVAILABLE')
  t.notMatch(host.body, /\n\s+at /, 'no stack')

  fake.failWith = undefined
  fake.hang = true
  const slow = await app.inject({ url: maths, headers: { cookie } })
  t.equal(slow.statusCode, 503, 'a store that does not answer: the same 503 after timeoutMs')

  fake.hang = false
  const back = await app.inject({ url: maths, headers: { cookie } })
  t.equal(back.statusCode, 200, 'back with the same cookie: still signed in')
})

t.test('storeErrorHandler passes other errors on', async (t) => {
  const app = Fastify()
  app.register(async (scope) => {
    scope.setErrorHandler(storeErrorHandler)
    scope.get('/other', async () => { throw Object.assign(new Error('teapot'), { statusCode: 418 }) })
    scope.get('/store', async () => { throw new FST_SR_STORE_UNAVAILABLE('down') })
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/other')).statusCode, 418)
  t.equal((await app.inject('/store')).statusCode, 503)
})
