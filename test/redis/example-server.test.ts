import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { requireRedis, connectedClient, freePort, listKeys, rawCommand, ThrowawayRedis, uniquePrefix } from '../helpers/redis.js'
import { connectRedis, createRedisClient, watchRedis } from '../../examples/redis.js'
import { EXAMPLE_ENV, EXAMPLE_NODE_FLAGS, EXAMPLE_SERVER, signInOverHttp } from '../helpers/example-server.js'

// The example server (dist/examples/server.js) with REDIS_URL: refusing to start without Redis, waiting
// for it, and shutting down gracefully on SIGTERM. Each test has its own throwaway redis-server.

const maths = '/schools/resources/resources/maths/'
const CLIENT_NAME = 'name=schools-resources-example'

interface Server {
  child: ChildProcess
  output: () => string
  waitFor: (pattern: RegExp, ms: number) => Promise<RegExpExecArray>
  exited: Promise<number | null>
}

function startServer (t: Test, env: Record<string, string>): Server {
  const full: NodeJS.ProcessEnv = { ...EXAMPLE_ENV, ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SESSION_SECRET: 's'.repeat(40), ...env }
  const child = spawn(process.execPath, [...EXAMPLE_NODE_FLAGS, EXAMPLE_SERVER], { env: full, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let output = ''
  const listeners = new Set<() => void>()
  const onData = (d: Buffer) => { output += d; for (const l of listeners) l() }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return {
    child,
    exited,
    output: () => output,
    waitFor: (pattern, ms) => new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output)
        if (match !== null) { done(); resolve(match) }
      }
      const timer = setTimeout(() => { done(); reject(new Error(`no ${pattern} within ${ms} ms; output:\n${output}`)) }, ms)
      const done = () => { clearTimeout(timer); listeners.delete(check) }
      listeners.add(check)
      check()
    })
  }
}

if (requireRedis(t)) {
  t.test('Redis unreachable at start (a closed port): says so, never listens, exits 1', async (t) => {
    const port = await freePort()
    const server = startServer(t, { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_CONNECT_TIMEOUT_MS: '1000' })
    const code = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000))])
    t.equal(code, 1, 'exits non-zero')
    t.match(server.output(), `Redis at redis://127.0.0.1:${port} is unreachable; retrying`)
    t.match(server.output(), `Not starting: Redis at redis://127.0.0.1:${port} did not answer within 1000 ms (REDIS_CONNECT_TIMEOUT_MS); not starting without a session store`)
    t.notMatch(server.output(), 'Server listening', 'it never served anything')
  })

  t.test('waits for Redis, serves with it, and on SIGTERM finishes the request in flight and closes Redis', async (t) => {
    const port = await freePort()
    const prefix = uniquePrefix('example')
    const server = startServer(t, { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_CONNECT_TIMEOUT_MS: '15000', REDIS_TIMEOUT_MS: '4000', REDIS_PREFIX: prefix })
    // Generous bounds on start-up: they only end a test that would otherwise hang; on a loaded machine the
    // built server has taken over 5 s to print its first line.
    await server.waitFor(/is unreachable; retrying/, 20_000)
    t.notMatch(server.output(), 'Server listening', 'not listening while Redis is missing')

    const redis = await ThrowawayRedis.start(t, port)
    const [, address] = await server.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/, 30_000)
    t.match(server.output(), `Connected to Redis at redis://127.0.0.1:${port}`)
    t.match(server.output(), `sessions in Redis at redis://127.0.0.1:${port}`)

    const cookie = await signInOverHttp(address)
    const page = await fetch(`${address}${maths}`, { headers: { cookie } })
    t.equal(page.status, 200)
    t.match(await page.text(), 'Demo Teacher')
    const admin = await connectedClient(t, redis.url)
    t.equal((await listKeys(admin, `${prefix}sess:`)).length, 1, 'the session is in Redis under REDIS_PREFIX')
    t.match(String(await admin.sendCommand(['CLIENT', 'LIST'])), CLIENT_NAME, 'the server holds a connection')

    // A request in flight: Redis holds its commands for a while, so the session lookup is pending.
    await redis.pause(1500)
    const inFlight = fetch(`${address}${maths}`, { headers: { cookie } })
    await new Promise((resolve) => setTimeout(resolve, 300))
    server.child.kill('SIGTERM')
    await server.waitFor(/shutting down/, 5000)
    const late = await fetch(`${address}/schools/resources/`).then((r) => r.status, (err: Error) => (err.cause as { code?: string })?.code ?? err.message)
    t.not(late, 200, `no new requests once shutting down (${late})`)
    t.comment(`FIGURES shutdown: a new request during shutdown got ${late}; the request in flight:`)
    const finished = await inFlight
    t.equal(finished.status, 200, 'the request in flight was finished')
    t.match(await finished.text(), 'Demo Teacher')
    t.comment(`FIGURES   ${finished.status}, then exit`)
    t.equal(await server.exited, 0, 'clean exit')
    t.match(server.output(), 'Redis connection closed')
    t.notMatch(String(await admin.sendCommand(['CLIENT', 'LIST'])), CLIENT_NAME, 'its Redis connection is closed')
  })

  t.test('the example logs an outage once at error, and its end at warn (issue 12, item 9)', async (t) => {
    const redis = await ThrowawayRedis.start(t)
    const lines: Array<[string, string]> = []
    const log = { info: (m: string) => lines.push(['info', m]), warn: (m: string) => lines.push(['warn', m]), error: (_o: unknown, m: string) => lines.push(['error', m]) }
    const client = createRedisClient(redis.url)
    watchRedis(client, redis.url, log as never)
    await connectRedis(client, redis.url, 5000, log as never)
    t.teardown(() => { if (client.isOpen) client.destroy() })
    await redis.stop()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    await redis.resume()
    for (const deadline = Date.now() + 20_000; !lines.some(([, m]) => /^Redis at \S+ is back$/.test(m)) && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 50))
    const outage = lines.filter(([level]) => level !== 'info')
    t.same(outage, [['error', `Redis at ${redis.url} is unreachable; requests that need a session get 503 until it is back`], ['warn', `Redis at ${redis.url} is back`]], 'one line down (not one per retry), one line back, both at warn or above')
  })

  t.test('a Redis that can never work fails the start at once, with the real reason (issue 12, item 9)', async (t) => {
    const redis = await ThrowawayRedis.start(t)
    t.equal(await rawCommand(redis.port, ['CONFIG', 'SET', 'requirepass', 'sekret']), '+OK')
    const cases: Array<[string, string, RegExp]> = [
      ['a wrong password', `redis://:wrong@127.0.0.1:${redis.port}`, /cannot be used: it refused the login \(WRONGPASS /],
      ['no password', redis.url, /cannot be used: it refused the login \(NOAUTH /],
      ['rediss:// to a plain Redis', `rediss://127.0.0.1:${redis.port}`, /cannot be used: no TLS handshake within 2000 ms .*rediss:\/\/ needs/],
      ['an unknown host', 'redis://no-such-host.invalid:6379', /cannot be used: its host name does not resolve \(getaddrinfo ENOTFOUND no-such-host\.invalid\)/]
    ]
    for (const [what, url, reason] of cases) {
      const started = Date.now()
      const server = startServer(t, { REDIS_URL: url, REDIS_CONNECT_TIMEOUT_MS: '30000' })
      const code = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000))])
      t.equal(code, 1, `${what}: exits 1 after ${Date.now() - started} ms, long before REDIS_CONNECT_TIMEOUT_MS`)
      t.match(server.output(), reason, `${what}: says why`)
      t.notMatch(server.output(), 'did not answer', `${what}: not "did not answer"`)
      t.notMatch(server.output(), 'sekret', `${what}: no password in the output`)
      server.child.kill('SIGKILL')
    }
  })

  t.test('SIGTERM while Redis is stalled: the close gives up, the connection is dropped, exit 0 within the deadline (issue 12, item 9)', async (t) => {
    const redis = await ThrowawayRedis.start(t)
    const server = startServer(t, { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '1000', REDIS_PREFIX: uniquePrefix('stalled') })
    const [, address] = await server.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/, 30_000)
    const cookie = await signInOverHttp(address)
    // Redis holds every command for 30 s: the request in flight and the close both wait on it.
    await redis.pause(30_000)
    const inFlight = fetch(`${address}${maths}`, { headers: { cookie } })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const started = Date.now()
    server.child.kill('SIGTERM')
    const answer = await inFlight
    t.equal(answer.status, 503, 'the request in flight gets its 503 after REDIS_TIMEOUT_MS')
    t.equal(answer.headers.get('retry-after'), '5')
    const code = await server.exited
    const took = Date.now() - started
    t.equal(code, 0, 'exit 0')
    t.ok(took < 10_000, `shutdown with Redis stalled took ${took} ms (deadline 10000)`)
    t.match(server.output(), 'Redis did not confirm the close within 2000 ms; connection dropped')
    t.comment(`FIGURES shutdown with Redis stalled: ${took} ms, exit ${code}`)
  })
}
