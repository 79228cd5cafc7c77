import t, { type Test } from 'tap'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { buildApp } from '../../examples/app.js'
import { healthRoutes, type Store, type StoreState } from '../../examples/health.js'
import { connectRedis, createClusterClient, createRedisClient, createSentinelClient, watchRedis } from '../../examples/redis.js'
import { compileSnippets, snippet } from '../helpers/doc-snippets.js'
import { cookiePairs, signInThroughForm, startListening } from '../helpers/listening-app.js'
import { capturedLog } from '../helpers/log-capture.js'
import { rawCommand, requireRedis, ThrowawayRedis, uniquePrefix } from '../helpers/redis.js'
import { RedisCluster3, SENTINEL_NAME, SentinelSet, until } from '../helpers/redis-topology.js'

// The health routes of docs/health.md (examples/health.ts) on real Redis processes: /readyz stays 200
// through a store outage (an outage every instance sees), /storez reports it, and a promoted master, on
// Sentinel and on a Cluster whose master is stalled (SIGSTOP), with no member traffic at all.

const maths = '/schools/resources/resources/maths/'
const quiet = { info: () => {}, warn: () => {}, error: () => {} }

/** The health routes alone on `client`, connected here: no member request moves the client. */
async function healthApp (t: Test, client: Store & { on (event: 'error', listener: () => void): unknown, connect (): Promise<unknown>, destroy (): unknown }): Promise<FastifyInstance> {
  client.on('error', () => {})
  await client.connect()
  t.teardown(() => client.destroy())
  const app = Fastify()
  healthRoutes(app, { draining: () => false, store: client, timeoutMs: 500 })
  t.teardown(() => app.close())
  return app
}

async function storez (app: FastifyInstance): Promise<[number, StoreState]> {
  const res = await app.inject('/storez')
  return [res.statusCode, res.json()]
}

if (requireRedis(t)) {
  t.test('the docs\' host app through a stalled, then a stopped Redis: /readyz 200, /storez 503, everyone answered', async (t) => {
    const root = resolve(__dirname, '..', '..')
    const doc = readFileSync(join(root, 'docs', 'health.md'), 'utf8')
    const dir = compileSnippets(t, { 'health.ts': snippet(doc, 'health-recipe'), 'server.mts': snippet(doc, 'health-wiring') })
    const redis = await ThrowawayRedis.start(t)
    const { origin, child } = await startListening(t, join(dir, 'server.mjs'), dir, { REDIS_URL: redis.url, SESSION_SECRET: 's'.repeat(40) })
    const get = (path: string, cookie = '') => fetch(origin + path, { redirect: 'manual', headers: { cookie } })

    t.equal((await get('/readyz')).status, 200)
    t.same(await (await get('/storez')).json(), { ok: true, store: 'redis', role: 'master' })
    const member = await signInThroughForm(origin, maths)
    t.equal(member.status, 303)
    const page = await get(maths, member.cookie)
    t.equal(page.status, 200)
    const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]
    const browser = [member.cookie, ...cookiePairs(page)].join('; ')

    // Every command held for 4 s: longer than the store's and the probe's 2 s.
    await redis.pause(4000)
    const [readyz, stored, visitor, login, stylesheet, memberPage, signOut] = await Promise.all([
      get('/readyz'), get('/storez'), get(maths), get('/Security/login'), get('/schools/resources/assets/resources.css'), get(maths, member.cookie),
      fetch(`${origin}/Security/logout`, { method: 'POST', redirect: 'manual', headers: { cookie: browser, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: token }).toString() })
    ])
    t.equal(readyz.status, 200, 'readiness never asks the store')
    t.equal(stored.status, 503)
    t.match(await stored.json(), { ok: false, store: 'redis', problem: 'Redis did not answer ROLE (Error: no answer within 2000 ms)' })
    t.equal(visitor.status, 302, 'a visitor gets the spec\'s login redirect')
    t.equal(login.status, 200, 'the login page')
    t.equal(stylesheet.status, 200, 'the stylesheet')
    t.equal(memberPage.status, 503, 'a member gets the section\'s 503')
    t.equal(memberPage.headers.get('retry-after'), '5')
    const expired = signOut.headers.getSetCookie().find((c) => c.startsWith('sessionId=;'))
    t.match(expired, /Expires=Thu, 01 Jan 1970/, `a sign-out expires the session cookie (${signOut.status})`)
    await until('the stall to end', async () => (await get('/storez')).status === 200, 10_000)

    await redis.stop()
    t.equal((await get('/readyz')).status, 200, 'Redis stopped: still ready')
    const down = await get('/storez')
    t.equal(down.status, 503)
    t.match(await down.json(), { ok: false, problem: /^Redis did not answer ROLE \(\w+/ })
    t.equal((await get(maths)).status, 302)

    child.kill('SIGTERM')
    let draining: Response | undefined
    await until('the signal to be handled', async () => (draining = await get('/readyz')).status === 503, 2000)
    t.equal(await draining!.text(), 'not ready: shutting down\n', 'only draining fails readiness')
    t.equal((await get(maths)).status, 302, 'served through the pause')
    await once(child, 'exit')
  })

  t.test('the example on a Redis that turns replica: /storez says so, /readyz stays 200, logged at warn both ways', async (t) => {
    const redis = await ThrowawayRedis.start(t)
    const other = await ThrowawayRedis.start(t)
    const { lines, logger } = capturedLog('info')
    const client = createRedisClient(redis.url)
    watchRedis(client, redis.url, quiet)
    await connectRedis(client, redis.url, 5000, quiet)
    t.teardown(() => { if (client.isOpen) client.destroy() })
    const app = await buildApp({ sessionSecret: 's'.repeat(40), demoEmail: 'teacher@example.org', demoPassword: 'correct horse battery staple', logger, redis: { client, prefix: uniquePrefix('health'), timeoutMs: 300 } })
    t.teardown(() => app.close())

    t.same(await storez(app), [200, { ok: true, store: 'redis', role: 'master' }])
    t.equal(await rawCommand(redis.port, ['REPLICAOF', '127.0.0.1', String(other.port)]), '+OK')
    t.same(await storez(app), [503, { ok: false, store: 'redis', role: 'replica', problem: 'Redis is a replica, so writes fail (READONLY)' }])
    t.equal((await app.inject('/readyz')).statusCode, 200)
    t.equal((await app.inject(maths)).statusCode, 302)
    t.equal(await rawCommand(redis.port, ['REPLICAOF', 'NO', 'ONE']), '+OK')
    t.same((await storez(app))[0], 200)
    t.same(lines.filter((l) => /storez/.test(l.msg)).map((l) => [l.level, l.msg, l.reason]), [
      [40, 'session store failing: /storez answers 503', 'Redis is a replica, so writes fail (READONLY)'],
      [40, 'session store back: /storez answers 200', undefined]
    ])
  })

  t.test('Sentinel: a stalled primary (SIGSTOP) is reported, then the promoted one, with no member traffic', async (t) => {
    const set = await SentinelSet.start(t)
    const app = await healthApp(t, createSentinelClient(set.sentinelNodes, SENTINEL_NAME))

    const before = await set.primary()
    t.same(await storez(app), [200, { ok: true, store: 'sentinel', master: `127.0.0.1:${before}`, role: 'master' }])
    await set.stallPrimary()
    t.teardown(() => set.resume(before))
    const [status, stalled] = await storez(app)
    t.equal(status, 503, 'the primary stalled: not ok')
    t.match(stalled, { ok: false, master: `127.0.0.1:${before}`, problem: /^Redis did not answer ROLE/ })
    t.equal((await app.inject('/readyz')).statusCode, 200)
    let promoted = before
    await until('the sentinels to promote the replica', async () => (promoted = await set.primary()) !== before)
    let state: StoreState | undefined
    await until('/storez to name the promoted primary', async () => {
      state = (await storez(app))[1]
      return state.ok && state.master === `127.0.0.1:${promoted}`
    }, 15_000)
    t.same(state, { ok: true, store: 'sentinel', master: `127.0.0.1:${promoted}`, role: 'master' })
  })

  t.test('Cluster: a stalled master (SIGSTOP); /storez names the promoted replica, then the client follows it', async (t) => {
    const cluster = await RedisCluster3.start(t)
    const victim = cluster.ports[0]
    const replica = await cluster.addReplica(victim)
    const app = await healthApp(t, createClusterClient(cluster.ports.map((port) => ({ host: '127.0.0.1', port }))))

    const [status, state] = await storez(app)
    t.equal(status, 200)
    t.equal(state.shards?.length, 3)
    const range = state.shards!.find((shard) => shard.master === `127.0.0.1:${victim}`)!
    t.ok(range, 'the victim serves a range of slots')
    const shardOf = (s: StoreState) => s.shards?.find((shard) => shard.slots === range.slots)

    cluster.stall(victim)
    t.teardown(() => cluster.stall(victim, false))
    await until('the replica to be promoted', () => cluster.isMaster(replica), 20_000)
    let moved: StoreState | undefined
    await until('/storez to name the promoted replica', async () => {
      moved = (await storez(app))[1]
      return shardOf(moved)?.master === `127.0.0.1:${replica}`
    }, 10_000)
    t.match(moved, { ok: false, problem: `slots ${range.slots}: the cluster moved them to 127.0.0.1:${replica}, this process still sends them to 127.0.0.1:${victim}, which did not answer` })
    t.same(shardOf(moved!), { slots: range.slots, master: `127.0.0.1:${replica}`, answered: false, routedTo: `127.0.0.1:${victim}` })
    t.equal((await app.inject('/readyz')).statusCode, 200, 'readiness never asks the store')

    // Back, the old master is a replica: EXISTS there answers MOVED, and the client maps the slots again.
    cluster.stall(victim, false)
    // Until gossip tells it otherwise, the old master still claims its slots and answers for them.
    await until('the old master to rejoin as a replica', async () => !(await cluster.isMaster(victim)), 20_000)
    let followed: StoreState | undefined
    await until('the client to follow the promotion', async () => {
      followed = (await storez(app))[1]
      return followed.ok
    }, 20_000)
    t.same(shardOf(followed!), { slots: range.slots, master: `127.0.0.1:${replica}`, answered: true })
  })
}
