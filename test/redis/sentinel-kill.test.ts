import t from 'tap'
import { postLogin, signIn, TEACHER } from '../helpers/app.js'
import { requireRedis } from '../helpers/redis.js'
import { until } from '../helpers/redis-topology.js'
import { MATHS, population, sentinelApp, statuses } from '../helpers/topology-app.js'

// The primary of a Sentinel set of our own killed (SIGKILL) under a population of sign-ins: 503s, never
// a 500, until the sentinels have promoted the replica and the killed server is back as its replica.

if (requireRedis(t)) {
  t.test('a Sentinel set loses its primary', async (t) => {
    const { set, app, errors } = await sentinelApp(t)
    const cookie = await signIn(app)
    const old = await set.primary()
    // Killed, then started again by its supervisor: until it is a replica again, no replica confirms a
    // sign-in's session (waitForReplicas), so sign-ins get 503 until then.
    const back = set.killPrimary().then(() => set.restart(old))
    const tally = await population(app, back)
    await back
    await until('a sign-in on the new primary', async () => (await postLogin(app, TEACHER)).statusCode === 303)
    t.notOk(tally.signIns.has(500) || tally.pages.has(500), `no 500 (sign-ins ${statuses(tally.signIns)})`)
    t.ok(tally.signIns.has(503), 'the outage was answered 503')
    t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, 'a member signed in before is still signed in (the replica had the session)')
    t.comment(`FIGURES killed primary: sign-ins ${statuses(tally.signIns)} (503s over ${tally.outageMs} ms); pages ${statuses(tally.pages)}; ${errors.length} client errors`)
  })
}
