import t from 'tap'
import { createCluster, createSentinel, ErrorReply } from 'redis'
import { RedisAttemptStore, RedisSessionStore } from '../../../lib/stores/redis/index.js'
import { replicationOf } from '../../../lib/stores/redis/session-store.js'
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

  // INFO and WAIT (waitForReplicas) go to the key's master's own connection: node-redis 6 would send a
  // raw WAIT to every master and INFO to any node.
  const onNode: unknown[][] = []
  const node = { sendCommand: async (args: string[]) => { onNode.push(args); return args[0] === 'INFO' ? 'role:master\r\nmaster_replid:n1\r\nslave0:ip=x,port=1,state=online\r\n' : 1 } }
  const keyed: unknown[] = []
  const pinned = Object.assign(createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), { sendCommand: record, getNodeClientForKey: async (key: string, isReadonly: boolean) => { keyed.push([key, isReadonly]); return node } })
  t.equal(await settle((done) => new RedisSessionStore(pinned, { prefix: 's:', waitForReplicas: { replicas: 1 } }).destroy('id', done)), undefined)
  t.same(calls.pop(), ['s:id', false, ['DEL', 's:id']], 'the write: routed by its key')
  t.same(onNode, [['INFO', 'replication'], ['WAIT', '1', '500']], 'INFO and WAIT: on the node that holds the key')
  t.same(keyed, [['s:id', false], ['s:id', false]], 'its master')
  // A client without getNodeClientForKey (node-redis 5): by the key, as every other command.
  const older = Object.assign(createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), { sendCommand: record, getNodeClientForKey: undefined })
  await settle((done) => new RedisSessionStore(older, { prefix: 's:', waitForReplicas: { replicas: 1 } }).destroy('id', done))
  t.same(calls.slice(-2), [['s:id', false, ['DEL', 's:id']], ['s:id', false, ['INFO', 'replication']]])
})

t.test('outages are 503, mistakes 500', async (t) => {
  const outages = ['READONLY You can\'t write against a read only replica.', 'LOADING Redis is loading the dataset in memory',
    'CLUSTERDOWN The cluster is down', 'TRYAGAIN Multiple keys request during rehashing of slot', 'MASTERDOWN Link with MASTER is down',
    'UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)', 'ERR WAIT cannot be used with replica instances. Please also note …']
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
  for (const bad of [{}, { replicas: 0 }, { replicas: 1, timeoutMs: 0 }, { replicas: 1, lostReplicasMs: 1.5 }, null]) {
    t.throws(() => new RedisSessionStore(new FakeRedis(), { waitForReplicas: bad as never }), { code: 'FST_SR_INVALID_OPTION', message: /"waitForReplicas": must be \{ replicas, timeoutMs, lostReplicasMs \}/ })
  }
  const fake = new FakeRedis()
  const store = new RedisSessionStore(fake, { prefix: 's:', waitForReplicas: { replicas: 1 } })
  t.match(await settle((done) => store.set('id', { cookie: {} }, done)), { code: 'FST_SR_STORE_UNAVAILABLE', message: /0 of 1 replicas confirmed the session write within 500 ms/ })
  fake.replicas = 1
  t.equal(await settle((done) => store.set('id', { cookie: {} }, done)), undefined)
  t.same(fake.commands.slice(-3).map((c) => c[0]), ['SET', 'INFO', 'WAIT'], 'the write, what the primary has, then the wait: one connection')
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

t.test('waitForReplicas waits for the replicas the primary has online, after a grace for a primary that lost them', async (t) => {
  const fake = new FakeRedis()
  fake.replicas = 2
  fake.online = 2
  const logged: Array<[object, string]> = []
  const store = new RedisSessionStore(fake, { prefix: 's:', waitForReplicas: { replicas: 2, lostReplicasMs: 60_000 }, log: { warn: (fields, message) => logged.push([fields, message]) } })
  const write = () => settle((done) => store.set('id', { cookie: {} }, done))
  t.equal(await write(), undefined)
  t.same(fake.commands.at(-1), ['WAIT', '2', '500'])

  // The same primary loses a replica: refused at once (no WAIT) while a failover may be replacing it.
  fake.online = 1
  fake.replicas = 1
  const sent = fake.commands.length
  t.match(await write(), { code: 'FST_SR_STORE_UNAVAILABLE', message: /the primary has 1 of its 2 replicas online; writes wait 60000 ms \(waitForReplicas\.lostReplicasMs\) in case a failover is replacing it/ })
  t.same(fake.commands.slice(sent).map((c) => c[0]), ['SET', 'INFO'], 'no WAIT sent')
  t.same(logged, [], 'nothing logged while it only waits')

  // A primary never seen with more (just promoted, its old primary dead): writes wait for what it has.
  fake.replid = 'promoted'
  fake.online = 0
  t.equal(await write(), undefined, 'taken, unreplicated')
  t.equal(fake.commands.at(-1)![0], 'INFO', 'no WAIT for no replica')
  t.same(logged, [[{ code: 'FST_SR_WAIT_REPLICAS' }, 'session writes wait for 0 replica(s), not 2: the primary has only 0 online. A sign-in now is lost if this primary fails before a replica has it; bring a replica back (waitForReplicas, docs/redis.md)']])
  t.equal(await write(), undefined)
  t.equal(logged.length, 1, 'logged once, not per write')
  fake.online = 1
  t.equal(await write(), undefined)
  t.same(fake.commands.at(-1), ['WAIT', '1', '500'])
  t.match(logged[1][1], /^session writes wait for 1 replica\(s\), not 2: the primary has only 1 online\. bring a replica back/, 'a change of degree is logged too')
  fake.online = 3
  fake.replicas = 2
  t.equal(await write(), undefined)
  t.same(fake.commands.at(-1), ['WAIT', '2', '500'], 'never more than asked')
  t.same(logged[2][1], 'session writes wait for 2 replica(s) again (waitForReplicas)')
  t.equal(logged.length, 3)

  // After lostReplicasMs, a primary that lost its replicas takes writes with what it has.
  const quick = new RedisSessionStore(fake, { prefix: 'q:', waitForReplicas: { replicas: 1, lostReplicasMs: 1 } })
  const warnings: Error[] = []
  const listener = (w: Error & { code?: string }) => { if (w.code === 'FST_SR_WAIT_REPLICAS') warnings.push(w) }
  process.on('warning', listener)
  t.teardown(() => { process.off('warning', listener) })
  t.equal(await settle((done) => quick.set('id', { cookie: {} }, done)), undefined)
  fake.online = 0
  t.match(await settle((done) => quick.set('id', { cookie: {} }, done)), { code: 'FST_SR_STORE_UNAVAILABLE' })
  await new Promise((resolve) => setTimeout(resolve, 5))
  t.equal(await settle((done) => quick.destroy('id', done)), undefined, 'taken after the grace (a sign-out too)')
  await new Promise((resolve) => setImmediate(resolve))
  t.match(warnings.map(String), [/^UserWarning: session writes wait for 0 replica\(s\), not 1/], 'without a log: a process warning')

  // Primaries are remembered by replication id, a bounded number of them: the oldest is forgotten.
  fake.online = 1
  for (let i = 0; i < 40; i++) {
    fake.replid = `p${i}`
    t.equal(await write(), undefined)
  }
  fake.replid = 'p0'
  fake.online = 0
  t.equal(await write(), undefined, 'a primary forgotten is as one never seen')
  fake.replid = 'p39'
  t.match(await write(), { code: 'FST_SR_STORE_UNAVAILABLE' }, 'a primary remembered that lost its replicas waits')
  t.same(replicationOf('# Replication\r\nrole:master\r\nconnected_slaves:0\r\n'), { role: 'master', replid: '', online: 0 }, 'an INFO without a replication id: one primary with no id')
  t.same(replicationOf(''), { role: '', replid: '', online: 0 })

  // The node that took the write is a replica by now (a Cluster's master demoted): not confirmed.
  fake.role = 'slave'
  t.match(await write(), { code: 'FST_SR_STORE_UNAVAILABLE', message: /the node that took the session write is a slave now, not a primary \(a failover\)/ })
  fake.role = ''
  t.match(await write(), { code: 'FST_SR_STORE_UNAVAILABLE', message: /is a node of unknown role now/ })
})
