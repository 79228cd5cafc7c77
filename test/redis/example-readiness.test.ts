import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { createClient, createCluster, createSentinel } from 'redis'
import { buildApp } from '../../examples/app.js'
import { healthRoutes } from '../../examples/health.js'
import { connectRedis, createRedisClient, watchRedis } from '../../examples/redis.js'
import { capturedLog } from '../helpers/log-capture.js'
import { freePort, rawCommand, requireRedis, ThrowawayRedis, uniquePrefix } from '../helpers/redis.js'

// /readyz with sessions in Redis: 503 while Redis cannot take the sessions' writes (unreachable, too
// slow, a replica), 200 again when it can; every other route keeps its own answer meanwhile.

const maths = '/schools/resources/resources/maths/'

if (requireRedis(t)) {
  t.test('/readyz follows Redis: a replica, a stall and an outage answer 503; only /readyz does', async (t) => {
    const redis = await ThrowawayRedis.start(t)
    const other = await ThrowawayRedis.start(t)
    const { lines, logger } = capturedLog('info')
    const client = createRedisClient(redis.url)
    watchRedis(client, redis.url, { info: () => {}, warn: () => {}, error: () => {} })
    await connectRedis(client, redis.url, 5000, { info: () => {}, warn: () => {}, error: () => {} })
    t.teardown(() => { if (client.isOpen) client.destroy() })
    const app = await buildApp({
      sessionSecret: 's'.repeat(40),
      demoEmail: 'teacher@example.org',
      demoPassword: 'correct horse battery staple',
      logger,
      redis: { client, prefix: uniquePrefix('readiness'), timeoutMs: 300 }
    })
    t.teardown(() => app.close())
    const readiness = async () => {
      const res = await app.inject('/readyz')
      return [res.statusCode, res.body]
    }

    t.same(await readiness(), [200, 'ready\n'], 'a master that answers: ready')

    // A failover gone the wrong way round: the connection now reaches a replica, where writes fail.
    t.equal(await rawCommand(redis.port, ['REPLICAOF', '127.0.0.1', String(other.port)]), '+OK')
    t.same(await readiness(), [503, 'not ready: Redis is a replica, so writes fail (READONLY)\n'])
    t.equal((await app.inject(maths)).statusCode, 302, 'the anonymous redirect needs no store: still 302')
    t.equal((await app.inject('/healthz')).statusCode, 200)
    t.equal(await rawCommand(redis.port, ['REPLICAOF', 'NO', 'ONE']), '+OK')
    t.same(await readiness(), [200, 'ready\n'], 'a master again: ready')

    await redis.pause(3000)
    t.same(await readiness(), [503, 'not ready: Redis did not answer ROLE within 300 ms\n'], 'a stalled Redis: 503 after the stores\' timeout')
    let after: unknown[] = []
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && after[0] !== 200;) after = await readiness()
    t.same(after, [200, 'ready\n'], 'the stall over: ready again')

    await redis.stop()
    const [status, body] = await readiness()
    t.equal(status, 503, 'Redis stopped: 503')
    t.match(body, /^not ready: Redis is unreachable \(\w+: /)
    t.equal((await app.inject(maths)).statusCode, 302, 'still 302 for the anonymous visitor')

    t.same(lines.filter((l) => /\/readyz/.test(l.msg)).map((l) => [l.level, l.msg]), [
      [40, 'not ready: /readyz answers 503'],
      [30, 'ready again: /readyz answers 200'],
      [40, 'not ready: /readyz answers 503'],
      [30, 'ready again: /readyz answers 200'],
      [40, 'not ready: /readyz answers 503']
    ], 'each change logged once, with its reason')
    t.match(lines.filter((l) => /\/readyz/.test(l.msg)).map((l) => l.reason), [/replica/, undefined, /did not answer ROLE/, undefined, /unreachable/])
  })
}

if (requireRedis(t)) {
  t.test('/readyz with a Cluster client asks every master: one master down answers 503', async (t) => {
    // Three masters of a local cluster, the slots split between them.
    const ports = [await freePort(), await freePort(), await freePort()]
    const dir = mkdtempSync(join(tmpdir(), 'schools-resources-cluster-'))
    const children = ports.map((port) => spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
      '--cluster-config-file', `nodes-${port}.conf`, '--dir', dir, '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' }))
    t.teardown(() => {
      for (const child of children) child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    })
    for (const port of ports) {
      while (await rawCommand(port, ['PING'], 500).catch(() => '') !== '+PONG') await new Promise((resolve) => setTimeout(resolve, 25))
    }
    const ranges = [[0, 5460], [5461, 10922], [10923, 16383]]
    for (const [i, port] of ports.entries()) {
      t.equal(await rawCommand(port, ['CLUSTER', 'ADDSLOTSRANGE', String(ranges[i][0]), String(ranges[i][1])]), '+OK')
      if (i > 0) t.equal(await rawCommand(port, ['CLUSTER', 'MEET', '127.0.0.1', String(ports[0])]), '+OK')
    }
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      if ((await Promise.all(ports.map((port) => clusterState(port)))).every((ok) => ok)) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const cluster = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${ports[0]}` }], defaults: { socket: { reconnectStrategy: false } } })
    cluster.on('error', () => {})
    await cluster.connect()
    t.teardown(() => cluster.destroy())
    t.equal(cluster.masters.length, 3)

    const app = Fastify()
    healthRoutes(app, { draining: () => false, redis: cluster, timeoutMs: 500 })
    t.teardown(() => app.close())
    const ready = await app.inject('/readyz')
    t.same([ready.statusCode, ready.body], [200, 'ready\n'], 'three masters that answer: ready')

    children[2].kill('SIGKILL')
    await once(children[2], 'exit')
    const res = await app.inject('/readyz')
    t.equal(res.statusCode, 503, 'one master down: not ready')
    t.match(res.body, /^not ready: Redis (is unreachable|did not answer ROLE)/)
  })
}

/** Whether this cluster node says cluster_state:ok. */
async function clusterState (port: number): Promise<boolean> {
  const client = createClient({ url: `redis://127.0.0.1:${port}` })
  await client.connect()
  try {
    return String(await client.sendCommand(['CLUSTER', 'INFO'])).includes('cluster_state:ok')
  } finally {
    client.destroy()
  }
}

if (requireRedis(t)) {
  t.test('/readyz with a Sentinel client asks the master it follows: its master down answers 503', async (t) => {
    const master = await ThrowawayRedis.start(t)
    const port = await freePort()
    const dir = mkdtempSync(join(tmpdir(), 'schools-resources-sentinel-'))
    const conf = join(dir, 'sentinel.conf')
    writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor resources 127.0.0.1 ${master.port} 1\nsentinel down-after-milliseconds resources 60000\n`)
    const child = spawn('redis-sentinel', [conf], { stdio: 'ignore' })
    t.teardown(() => {
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    })
    while (await rawCommand(port, ['PING'], 500).catch(() => '') !== '+PONG') await new Promise((resolve) => setTimeout(resolve, 25))
    const sentinel = createSentinel({ name: 'resources', sentinelRootNodes: [{ host: '127.0.0.1', port }] })
    sentinel.on('error', () => {})
    await sentinel.connect()
    t.teardown(() => sentinel.destroy())

    const app = Fastify()
    healthRoutes(app, { draining: () => false, redis: sentinel, timeoutMs: 500 })
    t.teardown(() => app.close())
    const ready = await app.inject('/readyz')
    t.same([ready.statusCode, ready.body], [200, 'ready\n'], 'the master answers ROLE as master: ready')

    await master.stop()
    const res = await app.inject('/readyz')
    t.equal(res.statusCode, 503, 'its master down (no failover yet): not ready')
    t.match(res.body, /^not ready: Redis (is unreachable|did not answer ROLE)/)
  })
}
