import t from 'tap'
import Fastify from 'fastify'
import rateLimit from '@fastify/rate-limit'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import plugin from '../../lib/index.js'
import { buildTestApp, postLogin, SECRET, TEACHER } from '../helpers/app.js'

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

/** An ioredis look-alike for @fastify/rate-limit's `redis` option: defineCommand() and the defined commands. */
function ioredisLike () {
  const counts = new Map<string, number>()
  const client: Record<string, unknown> = {
    defineCommand (name: string): void {
      client[name] = (key: string, timeWindow: number, ...rest: unknown[]) => {
        const callback = rest.at(-1) as (err: Error | null, result?: [number, number]) => void
        const current = (counts.get(key) ?? 0) + (name === 'rateLimit' ? 1 : 0)
        counts.set(key, current)
        callback(null, [current, timeWindow])
      }
    }
  }
  return { client, counts }
}

t.test('loginRateLimit.redis (an ioredis client) and nameSpace still reach @fastify/rate-limit', async (t) => {
  const redis = ioredisLike()
  const { app } = await buildTestApp({ plugin: { loginRateLimit: { redis: redis.client, nameSpace: 'ns:', max: 2, timeWindow: '1 minute' } } })
  t.teardown(() => app.close())
  const statuses: number[] = []
  for (let i = 0; i < 3; i++) statuses.push((await postLogin(app, { email: 'x@example.org', password: 'wrong' })).statusCode)
  t.same(statuses, [401, 401, 429])
  t.ok([...redis.counts.keys()].every((key) => key.startsWith('ns:')), 'keys under nameSpace')
})

t.test('a host that registered @fastify/rate-limit itself keeps it; the plugin uses its decorator', async (t) => {
  const host = Fastify()
  await host.register(rateLimit, { global: false })
  await host.register(fastifyCookie)
  await host.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  await host.register(plugin, { catalog: { listCategories: async () => [], getCategory: async () => undefined }, authenticate: async () => null, loginRateLimit: { max: 1 } })
  t.teardown(() => host.close())
  await host.ready()
  const statuses: number[] = []
  for (let i = 0; i < 2; i++) statuses.push((await postLogin(host, { email: 'x@example.org', password: 'wrong' })).statusCode)
  t.same(statuses, [401, 429], 'the limit applies through the host\'s registration')
})
