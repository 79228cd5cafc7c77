import t, { type Test } from 'tap'
import { ErrorReply } from 'redis'
import { MemoryTokenStore, type TokenStore } from '../../lib/index.js'
import { RedisTokenStore } from '../../lib/stores/redis/index.js'
import { FakeRedis } from '../helpers/fake-redis.js'
import { REDIS_URL, connectedClient, deleteKeys, listKeys, uniquePrefix } from '../helpers/redis.js'

// One contract for every TokenStore: the per-process default, the Redis store over the stand-in client
// and, when REDIS_URL is set, the Redis store against the real Redis (which checks its script and GETDEL).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const record = (memberId: string, data = 'd') => ({ memberId, data })

function contract (name: string, make: (t: Test) => Promise<TokenStore>) {
  t.test(`${name} keeps the TokenStore contract`, async (t) => {
    const store = await make(t)
    t.equal(await store.get('a'), undefined, 'nothing before a set')
    t.equal(await store.take('a'), undefined)

    await store.set('a', record('7', '{"v":1}'), 10_000)
    t.same(await store.get('a'), record('7', '{"v":1}'))
    t.same(await store.get('a'), record('7', '{"v":1}'), 'get leaves it')
    const copy = await store.get('a')
    copy!.data = 'changed'
    t.same(await store.get('a'), record('7', '{"v":1}'), 'callers get copies')
    await store.set('a', record('7', 'second'), 10_000)
    t.same(await store.get('a'), record('7', 'second'), 'set replaces')

    t.same(await store.take('a'), record('7', 'second'), 'take answers the record')
    t.equal(await store.get('a'), undefined, 'and deletes it')
    t.equal(await store.take('a'), undefined, 'a second take gets nothing')

    await store.set('once', record('7'), 10_000)
    const takes = await Promise.all(Array.from({ length: 10 }, () => store.take('once')))
    t.equal(takes.filter((r) => r !== undefined).length, 1, 'ten takes at once: one gets it')

    await store.set('short', record('7'), 100)
    await sleep(250)
    t.equal(await store.get('short'), undefined, 'an expired token is gone')
    t.equal(await store.take('short'), undefined)

    await store.set('t1', record('7'), 10_000)
    await store.set('t2', record('7'), 10_000)
    await store.set('t3', record('8'), 10_000)
    await store.set('t4', record('70'), 10_000)
    await store.deleteAll('7')
    t.equal(await store.get('t1'), undefined, 'deleteAll forgets every token of the member')
    t.equal(await store.get('t2'), undefined)
    t.same(await store.get('t3'), record('8'), 'and no other member\'s')
    t.same(await store.get('t4'), record('70'), 'ids are compared whole')
    await store.deleteAll('nobody')
    await store.deleteAll('7')
    await store.set('t5', record('7'), 10_000)
    t.same(await store.get('t5'), record('7'), 'a token set after deleteAll lives')
    await store.deleteAll('7')
    t.equal(await store.get('t5'), undefined, 'and a second deleteAll forgets it too')

    await t.rejects(store.set('', record('7'), 1000), { code: 'FST_SR_INVALID_TOKEN', message: /TokenStore\.set: the key must be a non-empty string/ })
    await t.rejects(store.set('k', { memberId: '', data: '' }, 1000), { code: 'FST_SR_INVALID_TOKEN', message: /memberId: non-empty string/ })
    await t.rejects(store.set('k', null as never, 1000), { code: 'FST_SR_INVALID_TOKEN' })
    await t.rejects(store.set('k', { memberId: 7, data: '' } as never, 1000), { code: 'FST_SR_INVALID_TOKEN' })
    await t.rejects(store.set('k', { memberId: '7', data: 1 } as never, 1000), { code: 'FST_SR_INVALID_TOKEN' })
    await t.rejects(store.set('k', record('7'), 0), { code: 'FST_SR_INVALID_TOKEN', message: /ttlMs must be a positive whole number/ })
    await t.rejects(store.set('k', record('7'), 1.5), { code: 'FST_SR_INVALID_TOKEN' })
    t.equal(await store.get('k'), undefined, 'a refused set stores nothing')
  })
}

contract('MemoryTokenStore', async () => new MemoryTokenStore())
contract('RedisTokenStore (stand-in client)', async () => new RedisTokenStore(new FakeRedis()))
if (REDIS_URL !== undefined) {
  contract('RedisTokenStore (real Redis)', async (t) => {
    const client = await connectedClient(t, REDIS_URL!)
    const prefix = uniquePrefix('tokens')
    t.teardown(() => deleteKeys(client, prefix))
    return new RedisTokenStore(client, { prefix })
  })
  t.test('RedisTokenStore (real Redis): the member index expires with the longest token', async (t) => {
    const client = await connectedClient(t, REDIS_URL!)
    const prefix = uniquePrefix('tokens-index')
    t.teardown(() => deleteKeys(client, prefix))
    const store = new RedisTokenStore(client, { prefix })
    await store.set('long', record('9'), 60_000)
    await store.set('short', record('9'), 1000)
    const ttl = Number(await client.sendCommand(['PTTL', `${prefix}member:9`]))
    t.ok(ttl > 50_000 && ttl <= 60_000, `a shorter token does not shorten the index (${ttl} ms)`)
    t.same(await listKeys(client, prefix), [`${prefix}member:9`, `${prefix}token:long`, `${prefix}token:short`])
    await store.deleteAll('9')
    t.same(await listKeys(client, prefix), [], 'deleteAll leaves no key behind')
  })
} else {
  t.test('RedisTokenStore (real Redis)', { skip: 'REDIS_URL is not set; run with REDIS_URL=redis://127.0.0.1:6379 npm run test:all' }, async () => {})
}

t.test('MemoryTokenStore stays bounded: expired tokens swept past 10,000 keys, the oldest evicted past maxEntries', async (t) => {
  let now = 1_000_000
  const store = new MemoryTokenStore({ now: () => now })
  for (let i = 0; i < 10_000; i++) await store.set(`k${i}`, record(`m${i % 10}`), 1000)
  t.equal(store.size, 10_000)
  now += 1001
  await store.set('new', record('m1'), 1000)
  t.equal(store.size, 1, 'adding a key past the threshold sweeps the expired ones')
  await store.deleteAll('m1')
  t.equal(store.size, 0, 'and the member index followed the sweep')

  const small = new MemoryTokenStore({ maxEntries: 3 })
  for (const key of ['a', 'b', 'c']) await small.set(key, record('1'), 60_000)
  await small.set('a', record('1', 'rewritten'), 60_000)
  await small.set('d', record('2'), 60_000)
  t.equal(small.size, 3, 'never more than maxEntries')
  t.equal(await small.get('b'), undefined, 'the oldest written went first')
  t.same(await small.get('a'), record('1', 'rewritten'), 'a rewritten key counts as new')
  await small.deleteAll('1')
  t.same([await small.get('c'), await small.get('a'), await small.get('d')], [undefined, undefined, record('2')])
  t.throws(() => new MemoryTokenStore({ maxEntries: 0 }), { code: 'FST_SR_INVALID_OPTION', message: /"maxEntries": must be a positive whole number/ })
})

t.test('RedisTokenStore: keys under its prefix, values it did not write, and the outage errors of every store', async (t) => {
  const fake = new FakeRedis()
  const store = new RedisTokenStore(fake, { prefix: 'p:' })
  await store.set('sel', record('42', 'x'), 5000)
  t.same([...fake.data.keys()], ['p:token:sel'], 'the token key carries the prefix')
  t.same([...fake.members.get('p:member:42')!.keys], ['sel'], 'and the member index names it')
  t.same(JSON.parse(fake.data.get('p:token:sel')!.value), record('42', 'x'))
  await new RedisTokenStore(fake).set('sel', record('1'), 5000)
  t.ok(fake.data.has('schools-resources:tokens:token:sel'), 'default prefix')

  for (const value of ['not json', 'null', '{"memberId":1,"data":"x"}', '{"memberId":"1"}']) {
    fake.data.set('p:token:odd', { value, expiresAt: undefined })
    t.equal(await store.get('odd'), undefined, `a value it did not write is no token: ${value}`)
  }

  fake.failWith = new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value')
  await t.rejects(store.get('sel'), { code: 'FST_SR_STORE_ERROR', message: /GET failed/ })
  fake.failWith = new Error('connect ECONNREFUSED 127.0.0.1:6379')
  await t.rejects(store.set('sel', record('42'), 1000), { code: 'FST_SR_STORE_UNAVAILABLE', statusCode: 503 })
  await t.rejects(store.take('sel'), { code: 'FST_SR_STORE_UNAVAILABLE', message: /GETDEL failed/ })
  await t.rejects(store.deleteAll('42'), { code: 'FST_SR_STORE_UNAVAILABLE', message: /SMEMBERS failed/ })
  await t.rejects(store.get('sel'), { code: 'FST_SR_STORE_UNAVAILABLE' })
  await t.rejects(store.get('sel'), { code: 'FST_SR_STORE_UNAVAILABLE' })
  fake.failWith = undefined

  // The breaker (5 outages) is open: reads fail fast, deleteAll is still tried, as a sign-out is.
  const sent = fake.commands.length
  await t.rejects(store.get('sel'), { code: 'FST_SR_STORE_UNAVAILABLE', message: /breaker open/ })
  t.equal(fake.commands.length, sent, 'a read is refused without a command')
  await store.deleteAll('42')
  t.equal(fake.data.has('p:token:sel'), false, 'deleteAll went through the open breaker')
  t.equal(fake.members.has('p:member:42'), false, 'and emptied the index')

  const hanging = new FakeRedis()
  hanging.hang = true
  await t.rejects(new RedisTokenStore(hanging, { timeoutMs: 20 }).get('x'), { code: 'FST_SR_STORE_UNAVAILABLE', message: /no answer from Redis within 20 ms \(GET\)/ })
  t.throws(() => new RedisTokenStore({} as never), { code: 'FST_SR_INVALID_OPTION', message: /RedisTokenStore needs a Redis client/ })
})
