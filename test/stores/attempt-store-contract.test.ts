import t, { type Test } from 'tap'
import { type AttemptStore } from '../../lib/index.js'
import { MemoryAttemptStore } from '../../lib/stores/attempt-store.js'
import { RedisAttemptStore } from '../../lib/stores/redis/index.js'
import { FakeRedis } from '../helpers/fake-redis.js'
import { REDIS_URL, connectedClient, deleteKeys, uniquePrefix } from '../helpers/redis.js'

// One contract for every AttemptStore: the per-process default, the Redis store over the stand-in client
// and, when REDIS_URL is set, the Redis store against the real Redis (which checks the Lua scripts).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function contract (name: string, make: (t: Test) => Promise<AttemptStore>) {
  t.test(`${name} keeps the AttemptStore contract`, async (t) => {
    const store = await make(t)
    t.equal(await store.get('k'), undefined, 'nothing before the first increment')

    const before = Date.now()
    const first = await store.increment('k', 10_000)
    t.equal(first.count, 1)
    t.ok(first.expiresAt >= before + 9_900 && first.expiresAt <= Date.now() + 10_000, 'lives one window from the first increment')
    const second = await store.increment('k', 60_000)
    t.equal(second.count, 2)
    t.ok(second.expiresAt <= Date.now() + 10_000, 'a later increment does not extend the window')
    t.same((await store.get('k'))?.count, 2)

    await store.hold('k', 120_000)
    const held = await store.get('k')
    t.equal(held?.count, 2, 'holding keeps the count')
    t.ok(held!.expiresAt > Date.now() + 100_000, 'and extends its life')
    await store.hold('missing', 120_000)
    t.equal(await store.get('missing'), undefined, 'holding a missing key creates nothing')

    await store.reset('k')
    t.equal(await store.get('k'), undefined, 'reset forgets the count')
    t.equal((await store.increment('k', 10_000)).count, 1, 'and counting starts again')

    await store.increment('short', 100)
    await sleep(250)
    t.equal(await store.get('short'), undefined, 'an expired count is gone')
    t.equal((await store.increment('short', 100)).count, 1, 'and a new window starts')
    t.equal((await store.get('other')), undefined, 'keys are independent')

    // The places of checks in flight: count + places under max, atomically; released, or expired.
    t.equal(await store.reserve!('p', 3, 10_000), true)
    t.equal(await store.reserve!('p', 3, 10_000), true)
    await store.increment('p', 10_000)
    t.equal(await store.reserve!('p', 3, 10_000), false, 'one count and two places: full at 3')
    await store.release!('p')
    t.equal(await store.reserve!('p', 3, 10_000), true, 'a place given back is free again')
    t.equal(await store.reserve!('p', 3, 10_000), false)
    await store.release!('p')
    await store.release!('p')
    await store.release!('p')
    await store.release!('nothing reserved')
    t.equal(await store.reserve!('p', 2, 10_000), true, 'releasing more than was reserved frees no more than there was')
    t.equal(await store.reserve!('p', 2, 10_000), false)
    t.equal(await store.reserve!('q', 1, 100), true)
    t.equal(await store.reserve!('q', 1, 100), false)
    await sleep(250)
    t.equal(await store.reserve!('q', 1, 100), true, 'a place never released (its process died) frees itself')
    t.same(await Promise.all(Array.from({ length: 10 }, () => store.reserve!('r', 4, 10_000))).then((r) => r.filter(Boolean).length), 4, 'ten at once: four places')
  })
}

contract('MemoryAttemptStore', async () => new MemoryAttemptStore())
contract('RedisAttemptStore (stand-in client)', async () => new RedisAttemptStore(new FakeRedis()))
if (REDIS_URL !== undefined) {
  contract('RedisAttemptStore (real Redis)', async (t) => {
    const client = await connectedClient(t, REDIS_URL!)
    const prefix = uniquePrefix('contract')
    t.teardown(() => deleteKeys(client, prefix))
    return new RedisAttemptStore(client, { prefix })
  })
} else {
  t.test('RedisAttemptStore (real Redis)', { skip: 'REDIS_URL is not set; run with REDIS_URL=redis://127.0.0.1:6379 npm run test:all' }, async () => {})
}

t.test('MemoryAttemptStore drops expired counts: lazily, and in a sweep past 10,000 keys', async (t) => {
  let now = 1_000_000
  const store = new MemoryAttemptStore({ now: () => now })
  for (let i = 0; i < 10_000; i++) await store.increment(`k${i}`, 1000)
  t.equal(store.size, 10_000)
  now += 1001
  await store.increment('new', 1000)
  t.equal(store.size, 1, 'adding a key past the threshold sweeps the expired ones')
  await store.increment('newer', 5000)
  now += 1001
  t.equal(await store.get('new'), undefined)
  t.equal(store.size, 1, 'an expired key is dropped when read')
  const live = new MemoryAttemptStore()
  t.equal(live.size, 0, 'Date.now by default')
  await live.increment('a', 1000)
  t.ok((await live.get('a'))!.expiresAt > Date.now())
})

t.test('counts within a window, holds, resets and forgets expired counts', async (t) => {
  let now = 1_000_000
  const store = new MemoryAttemptStore({ now: () => now })
  t.same(await store.increment('a', 1000), { count: 1, expiresAt: 1_001_000 })
  now += 500
  t.same(await store.increment('a', 1000), { count: 2, expiresAt: 1_001_000 }, 'the window runs from the first attempt')
  t.same(await store.get('a'), { count: 2, expiresAt: 1_001_000 })
  await store.hold('a', 5000)
  t.same(await store.get('a'), { count: 2, expiresAt: 1_005_500 }, 'held 5 s from now')
  await store.hold('missing', 5000)
  t.equal(await store.get('missing'), undefined, 'holding nothing creates nothing')
  now += 6000
  t.equal(await store.get('a'), undefined, 'expired')
  t.same(await store.increment('a', 1000), { count: 1, expiresAt: now + 1000 }, 'a new window after expiry')
  await store.reset('a')
  t.equal(await store.get('a'), undefined)
  const copy = (await store.increment('b', 1000))
  copy.count = 99
  t.equal((await store.get('b'))?.count, 1, 'callers get copies')
})

t.test('many usernames do not grow the map without bound', async (t) => {
  let now = 0
  const store = new MemoryAttemptStore({ now: () => now })
  for (let i = 0; i < 10_000; i++) await store.increment(`user-${i}`, 1000)
  t.equal(store.size, 10_000)
  now = 2000
  await store.increment('fresh', 1000)
  t.equal(store.size, 1, 'expired keys are swept once the map is large')
  t.ok(new MemoryAttemptStore().size === 0, 'the default clock works')
})
