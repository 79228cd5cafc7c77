import t from 'tap'
import { createClient } from 'redis'
import { RedisSessionStore } from '../../lib/stores/redis/index.js'
import { postLogin, signIn, TEACHER } from '../helpers/app.js'
import { requireRedis } from '../helpers/redis.js'
import { trySignInOverHttp, startExampleServer } from '../helpers/example-server.js'
import { cli, SENTINEL_NAME, until } from '../helpers/redis-topology.js'
import { MATHS, population, later, sentinelApp, statuses } from '../helpers/topology-app.js'

// A Sentinel set of our own (primary, replica, three sentinels; test/helpers/redis-topology.ts) under
// the example's Sentinel client: the stores work through it, a planned failover loses no completed
// sign-in (a killed primary: sentinel-kill.test.ts).
// Figures are printed as FIGURES comments; nothing here asserts a duration.

if (requireRedis(t)) {
  t.test('a Sentinel set', async (t) => {
    const { set, app, attempts, prefix } = await sentinelApp(t)
    await t.test('sign-in, the session and lockout counts go through the primary', async (t) => {
      const cookie = await signIn(app)
      t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, 'the member page')
      const primary = await set.primary()
      t.match(await cli(primary, 'DBSIZE'), /^[1-9]/, 'the session is on the primary')
      const wrong = []
      for (let i = 0; i < 4; i++) wrong.push((await postLogin(app, { email: 'nobody@example.org', password: 'wrong' })).statusCode)
      t.same(wrong, [401, 401, 429, 429], 'locked out (maxAttempts 3) by the counts in Redis')
      await attempts.increment('kept', 60_000)
      await attempts.increment('kept', 60_000)
    })

    await t.test('the example server with REDIS_SENTINELS: signs in, and its member page is served', async (t) => {
      const server = await startExampleServer({ ...process.env, REDIS_URL: '', REDIS_SENTINELS: set.sentinels.map((port) => `127.0.0.1:${port}`).join(','), REDIS_SENTINEL_NAME: SENTINEL_NAME, PORT: '0', SESSION_SECRET: 'x'.repeat(32), REDIS_PREFIX: prefix })
      t.teardown(() => { server.child.kill('SIGKILL') })
      const cookie = await trySignInOverHttp(server.address)
      t.type(cookie, 'string', `signed in (${cookie})`)
      t.equal((await fetch(`${server.address}${MATHS}`, { headers: { cookie: String(cookie) } })).status, 200)
      t.match(server.stdout(), /sessions in Redis at Sentinel primary \\"schools\\" via 127\.0\.0\.1:\d+,/)
    })

    await t.test('a plain client on the replica: READONLY is an outage (503), not a 500', async (t) => {
      const primary = await set.primary()
      const replica = createClient({ url: `redis://127.0.0.1:${set.servers.find((port) => port !== primary)!}` })
      replica.on('error', () => {})
      await replica.connect()
      t.teardown(() => replica.destroy())
      const store = new RedisSessionStore(replica, { prefix: `${prefix}replica:` })
      const err = await new Promise<unknown>((resolve) => store.set('x', { cookie: {} }, resolve)) as { code?: string, message?: string }
      t.equal(err.code, 'FST_SR_STORE_UNAVAILABLE')
      t.match(err.message, /SET failed: .*READONLY/)
    })

    await t.test('a planned failover (SENTINEL FAILOVER) loses no completed sign-in, and answers no 500', async (t) => {
      const before = await set.primary()
      // Until the new primary takes sign-ins: the old one refuses them once its replica is gone
      // (waitForReplicas.lostReplicasMs), so a 303 after the switch was written on the new primary, and
      // the later look at every cookie reads there. Its old primary rejoining (~15 s) is not awaited.
      const failover = set.failover(false)
      const served = failover.then(() => until('sign-ins on the new primary', async () => (await postLogin(app, TEACHER)).statusCode === 303))
      const tally = await population(app, served)
      await served
      const after = await failover
      t.not(after, before, 'the replica is the primary now')
      t.ok(tally.cookies.length > 0, 'members signed in during the failover')
      t.notOk(tally.signIns.has(500) || tally.pages.has(500), 'no 500')
      const after303 = await later(app, tally.cookies)
      t.same([...after303.keys()], [200], `every sign-in answered 303 is still signed in (${statuses(after303)})`)
      t.same((await attempts.get('kept'))?.count, 2, 'the lockout counts survived')
      t.comment(`FIGURES planned failover: sign-ins ${statuses(tally.signIns)} (503s over ${tally.outageMs} ms); pages ${statuses(tally.pages)}; later: ${statuses(after303)}`)
    })
  })
}
