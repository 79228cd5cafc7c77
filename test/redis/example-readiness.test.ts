import t from 'tap'
import { buildApp } from '../../examples/app.js'
import { connectRedis, createRedisClient, watchRedis } from '../../examples/redis.js'
import { capturedLog } from '../helpers/log-capture.js'
import { rawCommand, requireRedis, ThrowawayRedis, uniquePrefix } from '../helpers/redis.js'

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
