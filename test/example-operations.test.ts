import t, { type Test } from 'tap'
import { cpSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { Agent, get as httpGet, type IncomingMessage } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Writable } from 'node:stream'
import { buildApp } from '../examples/app.js'
import { capturedLog } from './helpers/log-capture.js'
import { signInOverHttp, startExampleServer } from './helpers/example-server.js'

// The example's operations: /healthz and /readyz for a load balancer, a shutdown that gives downloads
// time until SHUTDOWN_DEADLINE_MS, request timeouts that fire when documented (docs/example-server.md).

const config = { sessionSecret: 's'.repeat(40), demoEmail: 'teacher@example.org', demoPassword: 'correct horse battery staple' }
const maths = '/schools/resources/resources/maths/'
const FILE = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'

function exampleEnv (env: Record<string, string>): NodeJS.ProcessEnv {
  const full: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SESSION_SECRET: 's'.repeat(40), ...env }
  delete full.REDIS_URL
  return full
}

/** The demo's files, with the Fraction wall replaced by `size` bytes (sparse: no disk written). */
function filesWithBigPdf (t: Test, size: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'schools-resources-files-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(resolve(__dirname, '../examples/files'), dir, { recursive: true })
  const pdf = join(dir, 'maths/fraction-wall.pdf')
  writeFileSync(pdf, '')
  truncateSync(pdf, size)
  return dir
}

interface Download {
  /** Resolves once the answer's headers are in. */
  started: Promise<IncomingMessage>
  /** The bytes received, and how the download ended: 'complete', or the error that cut it. */
  ended: Promise<{ bytes: number, how: string }>
}

/**
 * A client that reads slowly: 64 KiB at most every 10 ms, so the server's writes wait on it. Its
 * connection is kept alive (as a load balancer's pool keeps it) unless `agent` says otherwise.
 */
function slowDownload (address: string, cookie: string, agent?: Agent): Download {
  let bytes = 0
  let onStarted: (res: IncomingMessage) => void
  const started = new Promise<IncomingMessage>((resolve) => { onStarted = resolve })
  const ended = new Promise<{ bytes: number, how: string }>((resolve) => {
    const req = httpGet(`${address}${FILE}`, { headers: { cookie }, agent }, (res) => {
      onStarted(res)
      const length = Number(res.headers['content-length'])
      const slow = new Writable({
        highWaterMark: 64 * 1024,
        write (chunk: Buffer, _encoding, done) {
          bytes += chunk.length
          setTimeout(done, 10)
        }
      })
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ bytes, how: err.code ?? err.message }))
      res.on('close', () => { if (!res.complete) resolve({ bytes, how: 'cut' }) })
      slow.on('finish', () => resolve({ bytes, how: bytes === length ? 'complete' : `short: ${bytes} of ${length}` }))
      res.pipe(slow)
    })
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ bytes, how: err.code ?? err.message }))
  })
  return { started, ended }
}

/** Sends a request's headers and half its body, then nothing: the server waits for the rest. */
function halfARequest (address: string): { socket: ReturnType<typeof connect>, answer: Promise<string> } {
  const { port } = new URL(address)
  const socket = connect(Number(port), '127.0.0.1', () => {
    socket.write('POST /Security/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nemail=')
  })
  let data = ''
  socket.on('data', (chunk) => { data += chunk })
  const answer = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(data))
    socket.on('error', () => {})
  })
  return { socket, answer }
}

t.test('/healthz and /readyz: outside the section, out of the request log; only /readyz fails while draining', async (t) => {
  const { lines, logger } = capturedLog('info')
  let draining = false
  const app = await buildApp({ ...config, logger, draining: () => draining })
  t.teardown(() => app.close())

  const live = await app.inject('/healthz')
  t.equal(live.statusCode, 200)
  t.equal(live.body, 'ok\n')
  t.equal(live.headers['cache-control'], 'no-store')
  const ready = await app.inject('/readyz')
  t.equal(ready.statusCode, 200, 'ready: sessions in memory need nothing else')
  t.equal(ready.body, 'ready\n')
  const store = await app.inject('/storez')
  t.same([store.statusCode, store.json()], [200, { ok: true, store: 'memory' }], '/storez: sessions in memory')

  draining = true
  for (let i = 0; i < 3; i++) {
    const notReady = await app.inject('/readyz')
    t.equal(notReady.statusCode, 503, 'draining: /readyz fails')
    t.equal(notReady.body, 'not ready: shutting down\n')
    t.equal(notReady.headers['retry-after'], '5', 'with Retry-After, as every 503 of the example')
  }
  t.equal((await app.inject('/healthz')).statusCode, 200, 'the process still answers')
  const anonymous = await app.inject(maths)
  t.equal(anonymous.statusCode, 302, 'every other route keeps its answer: the anonymous login redirect')
  t.equal((await app.inject('/schools/resources/')).statusCode, 200)
  draining = false
  t.equal((await app.inject('/readyz')).statusCode, 200)

  // 2 requests other than the probes were made (the anonymous redirect and the index): only they are logged.
  const urls = lines.filter((l) => l.msg === 'incoming request').map((l) => (l.req as { url: string }).url)
  t.same(urls, [maths, '/schools/resources/'], 'the 9 probes write no request log lines')
  t.equal(lines.filter((l) => l.msg === 'request completed').length, 2)
  t.same(lines.filter((l) => /\/readyz/.test(l.msg)).map((l) => [l.level, l.msg, l.reason]), [
    [40, 'not ready: /readyz answers 503', 'shutting down'],
    [40, 'ready again: /readyz answers 200', undefined]
  ], 'a change of readiness is logged once, not every probe, at warn both ways')
})

t.test('Node checks request timeouts often enough for REQUEST_TIMEOUT_MS to hold (issue 21)', async (t) => {
  // The option as Node stores it on the server (not in @types/node 22).
  const interval = (server: object) => (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval
  const app = await buildApp(config)
  t.teardown(() => app.close())
  t.equal(interval(app.server), 3000, 'a tenth of the 30 s default (Node\'s own: every 30 s)')
  const quick = await buildApp({ ...config, requestTimeoutMs: 500 })
  t.teardown(() => quick.close())
  t.equal(interval(quick.server), 100, 'never more often than every 100 ms')

  // A client that sends half a request and stops: cut with 408 about REQUEST_TIMEOUT_MS later, not up
  // to 30 s after it (Node's default connectionsCheckingInterval).
  const server = await startExampleServer(exampleEnv({ REQUEST_TIMEOUT_MS: '1000' }))
  t.teardown(() => { server.child.kill('SIGKILL') })
  const started = Date.now()
  const { answer } = halfARequest(server.address)
  const raw = await answer
  const took = Date.now() - started
  t.match(raw, /^HTTP\/1\.1 408 /, 'the slow client gets 408')
  t.ok(took < 10_000, `cut after ${took} ms with REQUEST_TIMEOUT_MS=1000`)
  t.comment(`FIGURES a half-sent request with REQUEST_TIMEOUT_MS=1000 was cut after ${took} ms`)
})

t.test('SIGTERM with SHUTDOWN_READY_PAUSE_MS: /readyz fails at once, everything else is served through the pause, then exit 0', async (t) => {
  // Which modules the server loaded, written when it exits: node-redis must not be among them without REDIS_URL.
  const dir = mkdtempSync(join(tmpdir(), 'schools-resources-preload-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const preload = join(dir, 'modules.cjs')
  writeFileSync(preload, "process.on('exit', () => { console.log('LOADED ' + JSON.stringify(Object.keys(require.cache).filter((f) => /node_modules[\\\\/](redis|@redis)[\\\\/]/.test(f)).length)) })\n")
  const server = await startExampleServer(exampleEnv({ SHUTDOWN_READY_PAUSE_MS: '1500', NODE_OPTIONS: `--require ${preload}` }))
  t.teardown(() => { server.child.kill('SIGKILL') })
  t.equal((await fetch(`${server.address}/readyz`)).status, 200)
  server.child.kill('SIGTERM')
  await server.waitFor(/"msg":"shutting down: \/readyz answers 503; serving for 1500 ms \(SHUTDOWN_READY_PAUSE_MS\)/)
  const readiness = await fetch(`${server.address}/readyz`)
  t.equal(readiness.status, 503, 'the load balancer is told at once')
  t.equal(await readiness.text(), 'not ready: shutting down\n')
  const page = await fetch(`${server.address}/schools/resources/`)
  t.equal(page.status, 200, 'a request the load balancer still sends during the pause is served')
  t.equal(page.headers.get('connection'), 'close', 'and its connection closed')
  t.equal((await fetch(`${server.address}${maths}`, { redirect: 'manual' })).status, 302)
  t.equal(await server.exited, 0)
  t.match(server.stdout(), /"msg":"shut down"/)
  t.match(server.stdout(), /^LOADED 0$/m, 'node-redis was never loaded (no REDIS_URL)')
})

t.test('SIGTERM during a slow download that cannot end by SHUTDOWN_DEADLINE_MS: cut at the deadline, logged with the count, exit 0', async (t) => {
  const files = filesWithBigPdf(t, 2 * 1024 ** 3)
  const server = await startExampleServer(exampleEnv({ FILES_DIR: files, SHUTDOWN_DEADLINE_MS: '3000' }))
  t.teardown(() => { server.child.kill('SIGKILL') })
  const cookie = await signInOverHttp(server.address)
  const endless = slowDownload(server.address, cookie)
  t.equal((await endless.started).statusCode, 200)
  server.child.kill('SIGTERM')
  const cut = await endless.ended
  t.not(cut.how, 'complete', `the 2 GiB download is cut at the deadline (${cut.how} after ${cut.bytes} bytes)`)
  t.ok(cut.bytes > 0)
  t.equal(await server.exited, 0, 'a shutdown that only cut downloads at the deadline exits 0')
  t.match(server.stdout(), /"level":40,[^\n]*"cut":1,[^\n]*"msg":"shutdown deadline \(3000 ms, SHUTDOWN_DEADLINE_MS\): cutting 1 download still sending"/)
  t.notMatch(server.stdout(), /"level":50/, 'nothing at error')
})

t.test('SIGTERM during a slow download that ends within the deadline: it completes, then exit 0', async (t) => {
  const size = 8 * 1024 ** 2
  const files = filesWithBigPdf(t, size)
  const server = await startExampleServer(exampleEnv({ FILES_DIR: files, SHUTDOWN_DEADLINE_MS: '20000' }))
  t.teardown(() => { server.child.kill('SIGKILL') })
  const cookie = await signInOverHttp(server.address)
  // The download's connection stays in the client's pool afterwards (begun before the signal, its answer
  // did not close it): the server must close it once idle, or close() waits for the deadline and exits 1.
  const pool = new Agent({ keepAlive: true })
  t.teardown(() => pool.destroy())
  const download = slowDownload(server.address, cookie, pool)
  await download.started
  server.child.kill('SIGTERM')
  const done = await download.ended
  t.same(done, { bytes: size, how: 'complete' }, 'every byte arrives')
  t.equal(await server.exited, 0, 'exit 0, the kept-alive connection closed once the download was done')
  t.notMatch(server.stdout(), 'cutting', 'nothing was cut')
})

t.test('a shutdown stuck on a request not answered by the deadline still exits 1', async (t) => {
  const server = await startExampleServer(exampleEnv({ SHUTDOWN_DEADLINE_MS: '1000' }))
  t.teardown(() => { server.child.kill('SIGKILL') })
  const { socket } = halfARequest(server.address)
  t.teardown(() => socket.destroy())
  await server.waitFor(/"method":"POST","url":"\/Security\/login"[^\n]*"msg":"incoming request"/)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 1, 'exit 1: the shutdown hung for another reason than a download')
  t.match(server.stdout(), /"level":50,[^\n]*"unanswered":1,[^\n]*"msg":"shutdown took longer than 1000 ms \(SHUTDOWN_DEADLINE_MS\); exiting"/)
})
