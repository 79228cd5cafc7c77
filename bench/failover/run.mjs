// Two example servers behind HAProxy on a Sentinel set of our own (primary, one replica, three
// sentinels), under a scripted population of visitors signing in and opening a page; a planned
// failover (SENTINEL FAILOVER), then the primary killed (SIGKILL) and started again by its
// "supervisor" once the replica is promoted. Prints, per phase, the sign-ins answered 303 / 503 / 500, the pages, and how many
// members answered 303 are later found signed out. Not part of CI (it needs haproxy and takes ~1 min):
//   npm run build && node bench/failover/run.mjs        [VISITORS=8] [REDIS_WAIT_REPLICAS=1]
import { execFile, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const NAME = 'schools'
const VISITORS = Number(process.env.VISITORS ?? 8)
const dir = mkdtempSync(join(tmpdir(), 'schools-resources-failover-'))
const children = new Map()

async function freePort () {
  const server = createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function cli (port, ...args) {
  return run('redis-cli', ['-p', String(port), ...args], { timeout: 5000 }).then(({ stdout }) => stdout.trim(), (err) => `(failed) ${err.message}`)
}

async function until (what, check, ms = 60_000) {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

async function redis (port, lines, sentinel = false) {
  const home = join(dir, String(port))
  mkdirSync(home, { recursive: true })
  writeFileSync(join(home, 'redis.conf'), [`port ${port}`, 'bind 127.0.0.1', `dir ${home}`, 'save ""', 'appendonly no', 'loglevel warning', ...lines].join('\n') + '\n')
  children.set(port, spawn('redis-server', [join(home, 'redis.conf'), ...(sentinel ? ['--sentinel'] : [])], { stdio: 'ignore' }))
  await until(`redis on ${port}`, async () => await cli(port, 'PING') === 'PONG')
}

const [primary, replica, ...sentinels] = await Promise.all([0, 1, 2, 3, 4].map(freePort))
async function currentPrimary () {
  return Number((await cli(sentinels[0], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)).split('\n')[1])
}
async function settled () {
  const info = await cli(await currentPrimary(), 'INFO', 'replication')
  return /role:master/.test(info) && /state=online/.test(info)
}

function exampleServer () {
  const child = spawn(process.execPath, ['--disable-warning=FST_SR_REDIRECT_CONFLICT', resolve('dist/examples/server.js')], {
    env: { ...process.env, REDIS_URL: '', REDIS_SENTINELS: sentinels.map((port) => `127.0.0.1:${port}`).join(','), REDIS_SENTINEL_NAME: NAME, PORT: '0', LOG_LEVEL: 'warn', SESSION_SECRET: 'failover-bench-secret-of-32-characters!!' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  children.set(`example-${child.pid}`, child)
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const match = /Resources section: http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (match !== null) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error(`example server exited ${code}: ${out}`)))
  })
}

const cookiesOf = (res) => res.headers.getSetCookie().map((c) => c.split(';')[0])
async function signIn (base) {
  const form = await fetch(`${base}/Security/login`)
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? ''
  const body = new URLSearchParams({ _csrf: token, email: 'teacher@example.org', password: 'correct horse battery staple' })
  const res = await fetch(`${base}/Security/login`, { method: 'POST', body, headers: { cookie: cookiesOf(form).join('; ') }, redirect: 'manual' })
  await res.arrayBuffer()
  return { status: res.status, cookie: cookiesOf(res).find((c) => c.startsWith('sessionId=')) }
}
async function page (base, cookie) {
  const res = await fetch(`${base}/schools/resources/resources/maths/`, { headers: { cookie }, redirect: 'manual' })
  await res.arrayBuffer()
  return res.status
}

try {
  await redis(primary, [])
  await redis(replica, [`replicaof 127.0.0.1 ${primary}`])
  for (const port of sentinels) {
    await redis(port, [`sentinel monitor ${NAME} 127.0.0.1 ${primary} 2`, `sentinel down-after-milliseconds ${NAME} 1000`, `sentinel failover-timeout ${NAME} 5000`], true)
  }
  await until('the set to be ready', async () => {
    const info = await cli(sentinels[2], 'SENTINEL', 'MASTER', NAME)
    return /num-other-sentinels\n2/.test(info) && /num-slaves\n1/.test(info) && await settled()
  })
  const ports = [await exampleServer(), await exampleServer()]
  const lb = await freePort()
  writeFileSync(join(dir, 'haproxy.cfg'), ['defaults', '  mode http', '  timeout connect 1s', '  timeout client 30s', '  timeout server 30s',
    'frontend www', `  bind 127.0.0.1:${lb}`, '  default_backend examples', 'backend examples', '  balance roundrobin',
    ...ports.map((port, i) => `  server ex${i} 127.0.0.1:${port} check inter 500ms`)].join('\n') + '\n')
  children.set('haproxy', spawn('haproxy', ['-f', join(dir, 'haproxy.cfg'), '-db'], { stdio: 'ignore' }))
  const base = `http://127.0.0.1:${lb}`
  await until('haproxy', async () => (await fetch(`${base}/schools/resources/`).catch(() => ({ status: 0 }))).status === 200)

  const phases = []
  let phase
  const startPhase = (name) => { phase = { name, started: Date.now(), signIns: {}, pages: {}, cookies: [], first503: 0, last503: 0 }; phases.push(phase) }
  const tally = (map, status) => { map[status] = (map[status] ?? 0) + 1 }
  const state = { stopped: false }
  startPhase('steady')
  const visitors = Array.from({ length: VISITORS }, async () => {
    while (!state.stopped) {
      const p = phase
      const { status, cookie } = await signIn(base).catch(() => ({ status: 'error' }))
      tally(p.signIns, status)
      if (status === 503) { p.first503 ||= Date.now(); p.last503 = Date.now() }
      if (status === 303) { p.cookies.push(cookie); tally(p.pages, await page(base, cookie).catch(() => 'error')) }
      await sleep(20)
    }
  })
  await sleep(3000)
  startPhase('planned failover (SENTINEL FAILOVER)')
  const before = await currentPrimary()
  await cli(sentinels[0], 'SENTINEL', 'FAILOVER', NAME)
  await until('the failover', async () => await currentPrimary() !== before && await settled())
  await sleep(3000)
  startPhase('primary killed (SIGKILL), restarted once the replica is promoted')
  const victim = await currentPrimary()
  children.get(victim).kill('SIGKILL')
  // Restarted empty (no persistence here) before the sentinels promote the replica, it would be
  // replicated, empty, to the replica: so its "supervisor" waits for the promotion.
  await until('the promotion', async () => await currentPrimary() !== victim)
  await redis(victim, [])
  await until('the restarted server in sync', settled)
  await sleep(3000)
  state.stopped = true
  await Promise.all(visitors)

  console.log(`Two example servers behind HAProxy, a Sentinel set (1 replica, 3 sentinels), ${VISITORS} visitors, REDIS_WAIT_REPLICAS=${process.env.REDIS_WAIT_REPLICAS ?? '1 (default)'}`)
  for (const p of phases) {
    const later = {}
    for (const cookie of p.cookies) tally(later, await page(base, cookie).catch(() => 'error'))
    const lost = p.cookies.length - (later[200] ?? 0)
    const fmt = (map) => Object.entries(map).map(([s, n]) => `${s} x ${n}`).join(', ')
    console.log(`- ${p.name}: sign-ins ${fmt(p.signIns)}${p.first503 ? ` (503s over ${p.last503 - p.first503} ms)` : ''}; pages ${fmt(p.pages)}; later signed out: ${lost} of ${p.cookies.length}; 500s: ${(p.signIns[500] ?? 0) + (p.pages[500] ?? 0)}`)
  }
} finally {
  for (const child of children.values()) child.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}
