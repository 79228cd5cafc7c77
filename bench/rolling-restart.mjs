// A rolling restart under load: two example instances (sessions in Redis) behind HAProxy, which checks
// `GET /readyz`; each instance in turn gets SIGTERM and is started again once it has exited, while
// members sign in and read pages and a slow client downloads a large file over and over. Prints the
// failed requests and the cut downloads. Not part of CI; docs/example-server.md#rolling-restart has a run.
//
//   npm run build && node bench/rolling-restart.mjs [--rounds 2] [--download-mib 24] [--ready-pause-ms 3000] [--no-retry]
//
// Needs haproxy (/usr/sbin/haproxy or on PATH) and Redis at REDIS_URL (default redis://127.0.0.1:6379;
// keys under a prefix of the run's own, deleted at the end).
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, truncateSync, writeFileSync, cpSync } from 'node:fs'
import { Agent, get as httpGet, request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { startEnv, startFlags } from './lib/npm-start-flags.mjs'

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '2' }, 'download-mib': { type: 'string', default: '24' }, 'ready-pause-ms': { type: 'string', default: '3000' }, 'no-retry': { type: 'boolean', default: false } } })
const ROUNDS = Number(args.rounds)
const DOWNLOAD_BYTES = Number(args['download-mib']) * 1024 * 1024
// Longer than HAProxy's detection (fall 2 x inter 500 ms); --ready-pause-ms 0 shows what the pause buys.
const READY_PAUSE_MS = Number(args['ready-pause-ms'])
const DEADLINE_MS = 30_000 // > the download's time at the slow client's pace
const SLOW_BYTES_PER_SECOND = 2 * 1024 * 1024
const WORKERS = 6
const root = join(import.meta.dirname, '..')
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const prefix = `schools-resources-rolling:${process.pid}:`
const haproxyBin = ['/usr/sbin/haproxy', 'haproxy'].find((bin) => spawnSync(bin, ['-v']).status === 0)
if (haproxyBin === undefined) throw new Error('haproxy not found (apt-get install haproxy)')

async function freePort () {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  server.close()
  await once(server, 'close')
  return port
}

// The demo's files, the Fraction wall made DOWNLOAD_BYTES long (sparse).
const dir = mkdtempSync(join(tmpdir(), 'schools-resources-rolling-'))
cpSync(join(root, 'examples/files'), join(dir, 'files'), { recursive: true })
truncateSync(join(dir, 'files/maths/fraction-wall.pdf'), DOWNLOAD_BYTES)

const instances = await Promise.all([0, 1].map(async (i) => ({ name: `s${i + 1}`, port: await freePort(), child: undefined, exits: [] })))
async function startInstance (instance) {
  const env = {
    ...process.env,
    ...startEnv(root),
    PORT: String(instance.port),
    LOG_LEVEL: 'warn',
    SESSION_SECRET: 'rolling-restart-secret-rolling-restart-secret',
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    FILES_DIR: join(dir, 'files'),
    TRUST_PROXY: '127.0.0.1',
    SHUTDOWN_READY_PAUSE_MS: String(READY_PAUSE_MS),
    SHUTDOWN_DEADLINE_MS: String(DEADLINE_MS)
  }
  const child = spawn(process.execPath, [...startFlags(root), join(root, 'dist/examples/server.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  instance.child = child
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  instance.log = () => out
  for (;;) {
    if (/Resources section: /.test(out)) return
    if (child.exitCode !== null) throw new Error(`${instance.name} exited with ${child.exitCode}: ${out}`)
    await sleep(50)
  }
}
await Promise.all(instances.map(startInstance))

const frontPort = await freePort()
const config = join(dir, 'haproxy.cfg')
writeFileSync(config, `global
  maxconn 1000
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
${args['no-retry'] ? '  retries 0' : '  retries 3\n  option redispatch\n  retry-on conn-failure empty-response'}
frontend front
  bind 127.0.0.1:${frontPort}
  default_backend examples
backend examples
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 500 fall 2 rise 2
${instances.map((s) => `  server ${s.name} 127.0.0.1:${s.port} check`).join('\n')}
`)
const haproxy = spawn(haproxyBin, ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] })
let haproxyLog = ''
haproxy.stderr.on('data', (d) => { haproxyLog += d })
const front = `http://127.0.0.1:${frontPort}`
for (let up = false; !up;) {
  up = await fetch(`${front}/readyz`).then((r) => r.status === 200, () => false)
  await sleep(100)
}

const agent = new Agent({ keepAlive: true, maxSockets: WORKERS + 2 })
function request (method, path, { cookie, body } = {}) {
  return new Promise((resolve) => {
    const headers = { ...(cookie ? { cookie } : {}), ...(body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {}) }
    const req = httpRequest(`${front}${path}`, { method, agent, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }))
      res.on('error', (err) => resolve({ status: err.code ?? err.message }))
    })
    req.on('error', (err) => resolve({ status: err.code ?? err.message }))
    req.end(body)
  })
}
const pairs = (res) => (res.headers?.['set-cookie'] ?? []).map((c) => c.split(';')[0]).filter((p) => !p.endsWith('='))
async function signIn () {
  const form = await request('GET', '/Security/login')
  if (form.status !== 200) return { res: form }
  const token = /name="_csrf" value="([^"]+)"/.exec(form.text)[1]
  const body = new URLSearchParams({ _csrf: token, email: 'teacher@example.org', password: 'correct horse battery staple' }).toString()
  const res = await request('POST', '/Security/login', { cookie: pairs(form).join('; '), body })
  return { res, form, cookie: pairs(res).find((c) => c.startsWith('sessionId=')) }
}

const counts = new Map()
const failures = []
function count (what, res, ok) {
  const key = `${what} ${res.status}`
  counts.set(key, (counts.get(key) ?? 0) + 1)
  if (!ok) failures.push(key)
}
const run = { going: true }
const sessions = []
for (let i = 0; i < 4; i++) {
  const { res, cookie } = await signIn()
  if (res.status !== 303) throw new Error(`sign-in before the run answered ${res.status}`)
  sessions.push(cookie)
}
async function worker (w) {
  for (let i = 0; run.going; i++) {
    const kind = i % 10
    if (kind === 0) {
      const { res, form, cookie } = await signIn()
      if (form !== undefined) count('sign-in form', { status: 200 }, true)
      count(form === undefined ? 'sign-in form' : 'sign-in', res, res.status === 303)
      // A session made now must be known to both instances, whichever answers next.
      if (cookie !== undefined) {
        const page = await request('GET', '/schools/resources/resources/maths/', { cookie })
        count('page after sign-in', page, page.status === 200 && page.text.includes('Demo Teacher'))
      }
    } else if (kind === 1) {
      const res = await request('GET', '/schools/resources/resources/science/')
      count('anonymous', res, res.status === 302)
    } else {
      const res = await request('GET', '/schools/resources/resources/maths/', { cookie: sessions[(w + i) % sessions.length] })
      count('member page', res, res.status === 200 && res.text.includes('Demo Teacher'))
    }
  }
}

const downloads = { complete: 0, cut: [] }
function slowDownload () {
  return new Promise((resolve) => {
    let bytes = 0
    const started = Date.now()
    const done = (how) => {
      if (how === 'complete') downloads.complete++
      else downloads.cut.push({ how, bytes, afterMs: Date.now() - started })
      resolve()
    }
    const req = httpGet(`${front}/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf`, { headers: { cookie: sessions[0] } }, (res) => {
      if (res.statusCode !== 200) { res.resume(); done(`status ${res.statusCode}`); return }
      res.pause()
      // Reads at SLOW_BYTES_PER_SECOND: a chunk, then a wait as long as the pace asks.
      const pump = () => {
        let chunk
        while ((chunk = res.read()) !== null) bytes += chunk.length
        if (res.readableEnded) return
        setTimeout(pump, Math.max(1, bytes / SLOW_BYTES_PER_SECOND * 1000 - (Date.now() - started)))
      }
      res.on('readable', () => {})
      res.on('end', () => done(bytes === DOWNLOAD_BYTES ? 'complete' : `short: ${bytes}`))
      res.on('error', (err) => done(err.code ?? err.message))
      res.on('aborted', () => done('aborted'))
      pump()
    })
    req.on('error', (err) => done(err.code ?? err.message))
  })
}
async function downloader () {
  while (run.going) await slowDownload()
}

const load = [...Array.from({ length: WORKERS }, (_, w) => worker(w)), downloader(), downloader()]
const startedAt = Date.now()
await sleep(3000)
for (let round = 1; round <= ROUNDS; round++) {
  for (const instance of instances) {
    const exited = once(instance.child, 'exit')
    instance.child.kill('SIGTERM')
    const [code] = await exited
    instance.exits.push(code)
    if (code !== 0) console.log(`${instance.name} exited with ${code}; its log:\n${instance.log().trim()}`)
    await startInstance(instance)
    // Back in rotation after HAProxy's rise 2 x inter 500 ms; a little more for the load to spread.
    await sleep(2000)
  }
}
run.going = false
await Promise.all(load)
const seconds = (Date.now() - startedAt) / 1000

const total = [...counts.values()].reduce((a, b) => a + b, 0)
console.log(`rolling restart: ${ROUNDS} round(s) of SIGTERM to each of ${instances.length} instances behind HAProxy (/readyz checks, inter 500 ms, fall 2, ${args['no-retry'] ? 'no retries' : 'retry-on conn-failure with redispatch'}), SHUTDOWN_READY_PAUSE_MS=${READY_PAUSE_MS}, SHUTDOWN_DEADLINE_MS=${DEADLINE_MS}, ${seconds.toFixed(0)} s`)
console.log(`requests: ${total} by ${WORKERS} workers; failed: ${failures.length}`)
for (const [key, n] of [...counts].sort()) console.log(`  ${key}: ${n}`)
if (failures.length > 0) console.log(`failures: ${[...new Set(failures)].map((f) => `${f} x${failures.filter((x) => x === f).length}`).join(', ')}`)
console.log(`downloads of ${DOWNLOAD_BYTES / 1024 / 1024} MiB at ${SLOW_BYTES_PER_SECOND / 1024 / 1024} MiB/s: ${downloads.complete} complete, ${downloads.cut.length} cut${downloads.cut.length === 0 ? '' : ` (${downloads.cut.map((c) => `${c.how} at ${c.bytes} bytes after ${c.afterMs} ms`).join('; ')})`}`)
console.log(`exit codes: ${instances.map((s) => `${s.name} ${s.exits.join(',')}`).join('; ')}`)

haproxy.kill('SIGTERM')
for (const instance of instances) instance.child.kill('SIGTERM')
await Promise.all(instances.map((s) => once(s.child, 'exit')))
agent.destroy()
// The run's keys in Redis, through redis-cli (its sessions and counts).
spawnSync('sh', ['-c', `redis-cli -u "${redisUrl}" --scan --pattern '${prefix}*' | xargs -r redis-cli -u "${redisUrl}" del >/dev/null`])
rmSync(dir, { recursive: true, force: true })
const seen = (what) => haproxyLog.split('\n').filter((l) => l.includes(what)).length
console.log(`haproxy: ${seen(' is DOWN')} times an instance out of rotation, ${seen(' is UP')} back${seen('[ALERT]') === 0 ? '' : `; alerts:\n${haproxyLog.split('\n').filter((l) => l.includes('[ALERT]')).join('\n')}`}`)
process.exit(failures.length === 0 && downloads.cut.length === 0 ? 0 : 1)
