import t from 'tap'
import { MemoryAttemptStore } from '../../lib/stores/attempt-store.js'
import { buildTestApp, postLogin, TEACHER } from '../helpers/app.js'

// Where the counts live: the lockout's and the rate limit's store options.

t.test('lockout.store must be an AttemptStore', async (t) => {
  await t.rejects(buildTestApp({ plugin: { lockout: { store: { increment () {} } as never } } }), {
    code: 'FST_SR_INVALID_OPTION',
    message: /invalid option "lockout.store": must implement increment, hold, get, reset/
  })
  await t.rejects(buildTestApp({ plugin: { lockout: { store: 'redis' as never } } }), { message: /"lockout.store"/ })
})

t.test('lockout: false never locks', async (t) => {
  const { app } = await buildTestApp({ plugin: { lockout: false } })
  t.teardown(() => app.close())
  const statuses: number[] = []
  for (let i = 0; i < 12; i++) statuses.push((await postLogin(app, { email: TEACHER.email, password: 'wrong' })).statusCode)
  t.same(new Set(statuses), new Set([401]), '12 failures, all 401')
  t.equal((await postLogin(app, { email: TEACHER.email, password: TEACHER.password })).statusCode, 303)
})

t.test('the options of the @fastify/rate-limit based limit fail at start-up, naming the replacement', async (t) => {
  class RateLimitStore {}
  for (const [loginRateLimit, name, fix] of [
    [{ redis: {} }, 'loginRateLimit.redis', /was removed: failed sign-ins are counted in an AttemptStore; pass store: new RedisAttemptStore/],
    [{ nameSpace: 'ns:' }, 'loginRateLimit.nameSpace', /was removed/],
    [{ store: RateLimitStore }, 'loginRateLimit.store', /must be an AttemptStore .*redisRateLimitStore.* no longer used/],
    [{ store: {} }, 'loginRateLimit.store', /must implement increment, hold, get, reset/],
    [{ timeWindow: '15 minutes' }, 'loginRateLimit.timeWindow', /must be milliseconds, e.g. 15 \* 60 \* 1000/]
  ] as const) {
    await t.rejects(buildTestApp({ plugin: { loginRateLimit: loginRateLimit as never } }), { code: 'FST_SR_INVALID_OPTION', message: new RegExp(`"${name.replace('.', '\\.')}": ${fix.source}`) }, name)
  }
})

t.test('the per-address limit counts in lockout.store, or in a store of its own', async (t) => {
  const shared = new MemoryAttemptStore()
  const { app } = await buildTestApp({ plugin: { lockout: { store: shared } } })
  t.teardown(() => app.close())
  await postLogin(app, { email: 'x@example.org', password: 'wrong' })
  t.equal((await shared.get('address:127.0.0.1'))?.count, 1, 'lockout.store by default')

  const own = new MemoryAttemptStore()
  const lockoutStore = new MemoryAttemptStore()
  const { app: app2 } = await buildTestApp({ plugin: { lockout: { store: lockoutStore }, loginRateLimit: { store: own } } })
  t.teardown(() => app2.close())
  await postLogin(app2, { email: 'x@example.org', password: 'wrong' })
  t.equal((await own.get('address:127.0.0.1'))?.count, 1, 'its own store when given')
  t.equal(await lockoutStore.get('address:127.0.0.1'), undefined)
  t.equal((await lockoutStore.get('user:x@example.org'))?.count, 1)

  const { app: app3 } = await buildTestApp({ plugin: { lockout: false, loginRateLimit: { max: 1 } } })
  t.teardown(() => app3.close())
  const statuses = []
  for (let i = 0; i < 2; i++) statuses.push((await postLogin(app3, { email: 'x@example.org', password: 'wrong' })).statusCode)
  t.same(statuses, [401, 429], 'without the lockout, in memory')
  t.equal((await postLogin(app3, { email: TEACHER.email, password: TEACHER.password }, { remoteAddress: '198.51.100.1' })).statusCode, 303, 'and a success from elsewhere')
})
