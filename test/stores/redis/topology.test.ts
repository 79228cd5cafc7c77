import t from 'tap'
import { createCluster, createSentinel, ErrorReply } from 'redis'
import { RedisAttemptStore, RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { isOutage } from '../../../lib/stores/redis/client.js'
import { FakeRedis } from '../../helpers/fake-redis.js'
import { buildTestApp, capturedLogs, postLogin, postSignOutForm, sessionCookie, signIn, TEACHER } from '../../helpers/app.js'

// Which clients the Redis stores take and how they drive each; which failures are outages; the breaker;
// waitForReplicas. Over the in-process stand-in (test/helpers/fake-redis.ts) and unconnected node-redis
// Sentinel and Cluster clients; test/redis/sentinel.test.ts and cluster.test.ts run real ones.

function settle (op: (done: (err?: unknown) => void) => void): Promise<unknown> {
  return new Promise((resolve) => op(resolve))
}

t.test('node-redis clients are recognised; ioredis and plain objects are refused at construction', async (t) => {
  const ioredisLike = { sendCommand: async () => 'OK', call: async () => 'OK', status: 'ready' }
  for (const Store of [RedisAttemptStore, RedisSessionStore]) {
    t.throws(() => new Store(ioredisLike as never), { code: 'FST_SR_UNSUPPORTED_REDIS_CLIENT', statusCode: 500, message: new RegExp(`${Store.name} cannot use this Redis client: ioredis is not supported; pass a node-redis .*createSentinel\\(\\)`) })
    t.throws(() => new Store({ sendCommand: async () => 'OK' }), { code: 'FST_SR_UNSUPPORTED_REDIS_CLIENT', message: /it is not a node-redis client/ })
  }

  const calls: unknown[][] = []
  const record = async (...args: unknown[]) => { calls.push(args); return 1 }
  const sentinel = Object.assign(createSentinel({ name: 'x', sentinelRootNodes: [{ host: '127.0.0.1', port: 1 }] }), { sendCommand: record })
  await settle((done) => new RedisSessionStore(sentinel, { prefix: 's:' }).destroy('id', done))
  t.same(calls.pop(), [false, ['DEL', 's:id']], 'a Sentinel: isReadonly false (the primary), then the command')

  const cluster = Object.assign(createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), { sendCommand: record })
  await settle((done) => new RedisSessionStore(cluster, { prefix: 's:' }).destroy('id', done))
  t.same(calls.pop(), ['s:id', false, ['DEL', 's:id']], 'a Cluster: the key for its slot, isReadonly false, the command')
  await new RedisAttemptStore(cluster, { prefix: 'a:' }).get('k').catch(() => {})
  t.match(calls.pop(), ['a:k', false, ['EVAL', String, '1', 'a:k']], 'a script is routed by its one key')
  await new RedisAttemptStore(cluster, { prefix: 'a:' }).hold('k', 10)
  t.same(calls.pop(), ['a:k', false, ['PEXPIRE', 'a:k', '10']])
})

t.test('outages are 503, mistakes 500', async (t) => {
  const outages = ['READONLY You can\'t write against a read only replica.', 'LOADING Redis is loading the dataset in memory',
    'CLUSTERDOWN The cluster is down', 'TRYAGAIN Multiple keys request during rehashing of slot', 'MASTERDOWN Link with MASTER is down']
  for (const message of outages) t.ok(isOutage(new ErrorReply(message)), message)
  t.ok(isOutage(new Error('None of the sentinels are available')), 'a client\'s own error: an outage')
  t.ok(isOutage('a string'))
  for (const mistake of [new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value'),
    new ErrorReply('ERR user_script:1: Script attempted to access nonexistent global variable'), new TypeError('Cannot read properties of undefined (reading \'length\')')]) {
    t.notOk(isOutage(mistake), mistake.message)
  }

  const fake = new FakeRedis()
  const store = new RedisAttemptStore(fake)
  fake.failWith = new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value')
  const err = await store.get('k').catch((e: unknown) => e) as Error & { code: string, statusCode: number }
  t.match(err, { code: 'FST_SR_STORE_ERROR', statusCode: 500, message: /EVAL failed: .*WRONGTYPE/, cause: fake.failWith })
  fake.failWith = new ErrorReply('LOADING Redis is loading the dataset in memory')
  await t.rejects(store.get('k'), { code: 'FST_SR_STORE_UNAVAILABLE', statusCode: 503 })
})

t.test('on the section: WRONGTYPE is the 500 page with the error logged, never its text', async (t) => {
  const fake = new FakeRedis()
  const logs = capturedLogs()
  const { app } = await buildTestApp({ fastify: { logger: logs.logger }, session: { store: new RedisSessionStore(fake) }, plugin: { lockout: { store: new RedisAttemptStore(fake) } } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  fake.failWith = new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value')
  const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(page.statusCode, 500)
  t.match(page.body, 'FST_SR_STORE_ERROR')
  t.notMatch(page.body, /WRONGTYPE|Operation against/, 'the error\'s text stays in the log')
  t.match(logs.withCode('FST_SR_STORE_ERROR')[0], { err: { message: /WRONGTYPE/ } }, 'logged at error with the cause')
})

t.test('the breaker: opens after consecutive failures, fails fast, probes, closes; one per client', async (t) => {
  const fake = new FakeRedis()
  const sessions = new RedisSessionStore(fake, { timeoutMs: 20, breaker: { failures: 3, openMs: 100 } })
  const attempts = new RedisAttemptStore(fake, { timeoutMs: 20 })
  fake.hang = true
  for (let i = 0; i < 3; i++) await t.rejects(attempts.get('k'), { message: /no answer from Redis within 20 ms/ })
  const sent = fake.commands.length
  await t.rejects(attempts.get('k'), { code: 'FST_SR_STORE_UNAVAILABLE', message: /breaker open after 3 consecutive failures; the latest: .*no answer/ })
  await t.rejects(settle((done) => sessions.get('id', done)).then((err) => { throw err }), { message: /breaker open/ }, 'shared by the stores on the client')
  t.equal(fake.commands.length, sent, 'nothing was sent while open')

  await settle((done) => sessions.destroy('id', done))
  t.equal(fake.commands.length, sent + 1, 'a sign-out\'s DEL is tried even so')

  await new Promise((resolve) => setTimeout(resolve, 150))
  const probe = attempts.get('k')
  await t.rejects(attempts.get('k'), { message: /breaker open/ }, 'one probe at a time')
  t.equal(fake.commands.length, sent + 2, 'only the probe was sent')
  await t.rejects(probe, { message: /no answer/ })
  await t.rejects(attempts.get('k'), { message: /breaker open/ }, 'a failed probe opens it again')

  fake.hang = false
  await new Promise((resolve) => setTimeout(resolve, 150))
  t.equal(await attempts.get('k'), undefined, 'the probe answered')
  fake.failWith = new ErrorReply('WRONGTYPE x')
  for (let i = 0; i < 4; i++) await t.rejects(attempts.get('k'), { code: 'FST_SR_STORE_ERROR' }, 'a mistake is an answer: it does not open the breaker')

  t.throws(() => new RedisAttemptStore(fake, { breaker: { failures: 5 } }), { code: 'FST_SR_INVALID_OPTION', message: /"breaker": differs from the breaker another store set on this client \(\{ failures: 3, openMs: 100 \}\)/ })
  t.doesNotThrow(() => new RedisAttemptStore(fake, { breaker: { failures: 3, openMs: 100 } }), 'the same settings again')
  t.throws(() => new RedisAttemptStore(new FakeRedis(), { breaker: { failures: 0 } }), { message: /"breaker.failures": must be a positive whole number/ })
  t.throws(() => new RedisAttemptStore(new FakeRedis(), { breaker: 5 as never }), { message: /"breaker": must be an object/ })
})

t.test('the breaker never keeps a sign-out from signing the browser out', async (t) => {
  const fake = new FakeRedis()
  const { app } = await buildTestApp({ session: { store: new RedisSessionStore(fake, { breaker: { failures: 2, openMs: 60_000 } }) }, plugin: { lockout: { store: new RedisAttemptStore(fake) } } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const page = await app.inject({ url: '/schools/resources/', headers: { cookie } })
  fake.failWith = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
  for (let i = 0; i < 2; i++) t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })).statusCode, 503)
  const sent = fake.commands.length
  t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })).statusCode, 503, 'open: a fast 503')
  t.equal(fake.commands.length, sent, 'without asking Redis')
  const out = await postSignOutForm(app, cookie, page)
  t.equal(out.statusCode, 503)
  t.match(out.headers['set-cookie'], /^sessionId=;/, 'the session cookie is expired all the same')
})

t.test('waitForReplicas: a session write is kept only once enough replicas have it', async (t) => {
  for (const bad of [{}, { replicas: 0 }, { replicas: 1, timeoutMs: 0 }, null]) {
    t.throws(() => new RedisSessionStore(new FakeRedis(), { waitForReplicas: bad as never }), { code: 'FST_SR_INVALID_OPTION', message: /"waitForReplicas": must be \{ replicas, timeoutMs \}/ })
  }
  const fake = new FakeRedis()
  const store = new RedisSessionStore(fake, { prefix: 's:', waitForReplicas: { replicas: 1 } })
  t.match(await settle((done) => store.set('id', { cookie: {} }, done)), { code: 'FST_SR_STORE_UNAVAILABLE', message: /0 of 1 replicas confirmed the session write within 500 ms/ })
  fake.replicas = 1
  t.equal(await settle((done) => store.set('id', { cookie: {} }, done)), undefined)
  t.same(fake.commands.slice(-2).map((c) => c[0]), ['SET', 'WAIT'])
  t.same(fake.commands.at(-1), ['WAIT', '1', '500'])

  fake.replicas = 0
  const { app } = await buildTestApp({ session: { store: new RedisSessionStore(fake, { waitForReplicas: { replicas: 1, timeoutMs: 50 } }) }, plugin: { lockout: { store: new RedisAttemptStore(fake) } } })
  t.teardown(() => app.close())
  const refused = await postLogin(app, TEACHER)
  t.equal(refused.statusCode, 503, 'no replica confirmed it: no 303')
  t.equal(sessionCookie(refused), undefined, 'and no session cookie')
  fake.replicas = 1
  t.equal((await postLogin(app, TEACHER)).statusCode, 303)
})
