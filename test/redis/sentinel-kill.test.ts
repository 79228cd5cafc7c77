import t from 'tap'
import { postLogin, signIn, TEACHER } from '../helpers/app.js'
import { requireRedis } from '../helpers/redis.js'
import { cli, until } from '../helpers/redis-topology.js'
import { later, MATHS, population, sentinelApp, statuses } from '../helpers/topology-app.js'

// The primary of a Sentinel set of our own killed (SIGKILL) under a population of sign-ins: 503s, never
// a 500, until the sentinels have promoted the replica; then sign-ins are taken by the promoted primary
// while its old primary is still dead (waitForReplicas waits for the replicas it has: none).

if (requireRedis(t)) {
  t.test('a Sentinel set loses its primary', async (t) => {
    const { set, app, errors } = await sentinelApp(t)
    const warnings: string[] = []
    const listener = (w: Error & { code?: string }) => { if (w.code === 'FST_SR_WAIT_REPLICAS') warnings.push(w.message) }
    process.on('warning', listener)
    t.teardown(() => { process.off('warning', listener) })
    const cookie = await signIn(app)
    t.same(warnings, [], 'nothing said while the replica is there')
    const promoted = set.killPrimary()
    // The killed server is not started again: the promoted primary has no replica, and takes sign-ins.
    const served = promoted.then(() => until('a sign-in on the promoted primary', async () => (await postLogin(app, TEACHER)).statusCode === 303))
    // The visitors go on for a moment after the first sign-in the promoted primary took: without it they
    // could stop at that first 303 (the probe's, not theirs) with every one of their own answered 503.
    const tally = await population(app, served.then(() => new Promise((resolve) => setTimeout(resolve, 500))))
    await served
    const primary = await promoted
    t.match(await cli(primary, 'INFO', 'replication'), /connected_slaves:0/, 'the new primary has no replica')
    t.notOk(tally.signIns.has(500) || tally.pages.has(500), `no 500 (sign-ins ${statuses(tally.signIns)})`)
    t.ok(tally.signIns.has(503), 'the outage was answered 503')
    t.ok(tally.cookies.length > 0, 'members signed in on the promoted primary')
    const after = await later(app, tally.cookies)
    t.same([...after.keys()], [200], `every sign-in answered 303 is still signed in (${statuses(after)})`)
    t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, 'a member signed in before is still signed in (the replica had the session)')
    t.match(warnings, [/^session writes wait for 0 replica\(s\), not 1: the primary has only 0 online/], 'said once that sign-ins are now unreplicated')
    t.comment(`FIGURES killed primary: sign-ins ${statuses(tally.signIns)} (503s over ${tally.outageMs} ms); pages ${statuses(tally.pages)}; ${errors.length} client errors`)
  })
}
