import t from 'tap'
import { MemoryAttemptStore } from '../../lib/stores/attempt-store.js'

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
