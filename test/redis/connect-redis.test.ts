import t, { type Test } from 'tap'
import { createClient } from 'redis'
import { RedisStore } from 'connect-redis'
import type { SessionStore } from '@fastify/session'
import { buildTestApp, signIn } from '../helpers/app.js'
import { requireRedis, ThrowawayRedis, uniquePrefix } from '../helpers/redis.js'

// connect-redis, the session store most @fastify/session hosts have, against a real redis-server of our
// own that is stopped and started again: the outage answers 503 with Retry-After (not a 500 carrying
// node-redis's message), and the member is signed in again once Redis is back.

const maths = '/schools/resources/resources/maths/'

/** A host's connect-redis wiring; `clientOptions` as hosts set them to fail fast rather than queue. */
async function connectRedisApp (t: Test, url: string, clientOptions: Parameters<typeof createClient>[0]) {
  const client = createClient({ url, ...clientOptions })
  const errors: Error[] = []
  client.on('error', (err: Error) => { errors.push(err) })
  await client.connect()
  t.teardown(async () => { if (client.isOpen) client.destroy() })
  const store = new RedisStore({ client, prefix: uniquePrefix('connect-redis') })
  const { app } = await buildTestApp({ session: { store: store as unknown as SessionStore } })
  t.teardown(() => app.close())
  return { app, client, errors }
}

function outageAnswer (t: Test, res: { statusCode: number, headers: Record<string, unknown>, body: string }, what: string) {
  t.equal(res.statusCode, 503, `${what}: 503`)
  t.equal(res.headers['retry-after'], '5', `${what}: Retry-After`)
  t.notMatch(res.body, /client is|Socket closed|ECONNREFUSED/, `${what}: not node-redis's message`)
}

if (requireRedis(t)) {
  t.test('client offline (disableOfflineQueue): 503 during the outage, signed in again after it', async (t) => {
    const redis = await ThrowawayRedis.start(t)
    const { app, client } = await connectRedisApp(t, redis.url, { disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } })
    const cookie = await signIn(app)
    t.equal((await app.inject({ url: maths, headers: { cookie } })).statusCode, 200)

    await redis.stop()
    outageAnswer(t, await app.inject({ url: maths, headers: { cookie } }), 'member page')
    outageAnswer(t, await app.inject({ url: maths, headers: { cookie, accept: 'application/json' } }), 'member page (JSON)')
    const json = await app.inject({ url: maths, headers: { cookie, accept: 'application/json' } })
    t.equal(json.json().code, 'FST_SR_STORE_UNAVAILABLE')

    await redis.resume()
    const deadline = Date.now() + 5000
    while (!client.isReady && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25))
    t.equal((await app.inject({ url: maths, headers: { cookie } })).statusCode, 200, 'the same cookie works once Redis is back')
  })

  t.test('client closed (it gave up reconnecting): 503, not "The client is closed" as a 500', async (t) => {
    const redis = await ThrowawayRedis.start(t)
    const { app, client, errors } = await connectRedisApp(t, redis.url, { socket: { reconnectStrategy: false } })
    const cookie = await signIn(app)
    await redis.stop()
    const deadline = Date.now() + 5000
    while (client.isOpen && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25))
    t.notOk(client.isOpen, 'the client has closed')
    outageAnswer(t, await app.inject({ url: maths, headers: { cookie } }), 'member page')
    t.ok(errors.length > 0, 'the client reported the outage itself')
    await redis.resume()
    await client.connect()
    t.equal((await app.inject({ url: maths, headers: { cookie } })).statusCode, 200, 'signed in again once the host reconnects')
  })
}
