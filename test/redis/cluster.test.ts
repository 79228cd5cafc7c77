import t from 'tap'
import { createClusterClient } from '../../examples/redis.js'
import { RedisSessionStore } from '../../lib/stores/redis/index.js'
import { postLogin, signIn, TEACHER } from '../helpers/app.js'
import { requireRedis } from '../helpers/redis.js'
import { trySignInOverHttp, startExampleServer } from '../helpers/example-server.js'
import { cli, RedisCluster3, until } from '../helpers/redis-topology.js'
import { MATHS, population, statuses, topologyApp } from '../helpers/topology-app.js'

// A 3-master Redis Cluster of our own (test/helpers/redis-topology.ts) under the example's Cluster
// client: every command is routed by its one key, so sessions and counts land on all three masters; a
// master killed costs CLUSTERDOWN (503, never a 500) until it is back.

if (requireRedis(t)) {
  t.test('a 3-master Cluster', async (t) => {
    const cluster = await RedisCluster3.start(t)
    const client = createClusterClient(cluster.rootNodes.map(({ url }) => ({ host: '127.0.0.1', port: Number(new URL(url).port) })))
    client.on('error', () => {})
    await client.connect()
    t.teardown(() => client.destroy())
    const { app, attempts, prefix } = await topologyApp(t, client)

    await t.test('sign-in, sessions and lockout counts, spread over the masters', async (t) => {
      const cookies = []
      for (let i = 0; i < 12; i++) cookies.push(await signIn(app))
      for (const cookie of cookies) t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200)
      const holding = []
      for (const port of cluster.ports) holding.push(Number(await cli(port, 'DBSIZE')))
      t.ok(holding.filter((keys) => keys > 0).length >= 2, `sessions on several masters (keys per master: ${holding.join(', ')})`)
      const wrong = []
      for (let i = 0; i < 4; i++) wrong.push((await postLogin(app, { email: 'nobody@example.org', password: 'wrong' })).statusCode)
      t.same(wrong, [401, 401, 429, 429], 'locked out (maxAttempts 3) by the counts in the Cluster')
      for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) {
        await attempts.increment(key, 60_000)
        t.same((await attempts.get(key))?.count, 1, `count ${key} on ${await cluster.nodeOf(`${prefix}attempts:${key}`)}`)
      }
    })

    await t.test('the example server with REDIS_CLUSTER_NODES: signs in, and its member page is served', async (t) => {
      const server = await startExampleServer({ ...process.env, REDIS_URL: '', REDIS_CLUSTER_NODES: `127.0.0.1:${cluster.ports[0]}`, PORT: '0', SESSION_SECRET: 'x'.repeat(32), REDIS_PREFIX: prefix })
      t.teardown(() => { server.child.kill('SIGKILL') })
      const cookie = await trySignInOverHttp(server.address)
      t.type(cookie, 'string', `signed in (${cookie})`)
      t.equal((await fetch(`${server.address}${MATHS}`, { headers: { cookie: String(cookie) } })).status, 200)
      t.match(server.stdout(), /sessions in Redis at Cluster 127\.0\.0\.1:\d+/)
    })

    await t.test('waitForReplicas: INFO and WAIT go to the master that holds the key', async (t) => {
      // One master with a replica, two without: a write on the first waits for its replica; on the
      // others, for none (logged once per master). node-redis 6 alone would send WAIT to every master
      // (the least answer: 0 of 1) and INFO to any node.
      const replicated = cluster.ports[2]
      await cluster.addReplica(replicated)
      const logged: string[] = []
      const store = new RedisSessionStore(client, { prefix: `${prefix}wait:`, waitForReplicas: { replicas: 1, timeoutMs: 2000 }, log: { warn: (_fields, message) => logged.push(message) } })
      const masters = new Set<number>()
      for (let i = 0; i < 12; i++) {
        const node = await cluster.nodeOf(`${prefix}wait:s${i}`)
        masters.add(node)
        t.equal(await new Promise((resolve) => store.set(`s${i}`, { cookie: {} }, resolve)), undefined, `a session written on ${node}${node === replicated ? ', with its replica' : ''}`)
      }
      t.ok(masters.has(replicated) && masters.size === 3, 'on every master')
      t.equal(logged.length, 2, `only the two masters without a replica said so: ${logged.join(' | ')}`)
      t.match(logged, [/wait for 0 replica\(s\), not 1/, /wait for 0 replica\(s\), not 1/])
      t.match(await cli(replicated, 'INFO', 'replication'), /slave0:.*state=online/, 'the replica is still there')
    })

    await t.test('a master killed: 503s (CLUSTERDOWN, a lost node), never a 500, then service again', async (t) => {
      const victim = cluster.ports[0]
      const killed = cluster.kill(victim).then(() => until('the cluster to see the node fail', async () => /cluster_state:fail/.test(await cli(cluster.ports[1], 'CLUSTER', 'INFO'))))
      const down = await population(app, killed)
      // Down: a sign-in gets 503 whatever slot it lands on (cluster-require-full-coverage).
      const outage = await population(app, new Promise((resolve) => setTimeout(resolve, 1000)))
      await cluster.restart(victim)
      await until('sign-ins again', async () => (await postLogin(app, TEACHER)).statusCode === 303)
      for (const tally of [down, outage]) t.notOk(tally.signIns.has(500) || tally.pages.has(500), `no 500 (sign-ins ${statuses(tally.signIns)})`)
      t.ok(outage.signIns.has(503), 'the outage was answered 503')
      t.comment(`FIGURES cluster master killed: sign-ins ${statuses(down.signIns)} while it failed (503s over ${down.outageMs} ms), ${statuses(outage.signIns)} while down`)
    })
  })
}
