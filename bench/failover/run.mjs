// Two example servers behind HAProxy on a Redis topology of our own, under a scripted population of
// visitors signing in and opening a page, across a planned failover and a killed primary:
// - TOPOLOGY=sentinel (default): a primary, one replica, three sentinels (down-after 1 s); SENTINEL
//   FAILOVER, then the primary killed (SIGKILL) and started again by its "supervisor" once the replica
//   is promoted.
// - TOPOLOGY=cluster: three masters with one replica each (cluster-node-timeout 1000); CLUSTER FAILOVER
//   on a replica, then a master killed and started again once its replica is promoted.
// Prints, per phase: the sign-ins answered 303 / 503 / 500, the pages, how many members answered 303
// are later found signed out, when the topology changed and when sign-ins were refused (ms from the
// event), and whether failed-attempt counts made before the event survived it (the lockout).
// Not part of CI (it needs haproxy and takes ~1 min):
//   npm run build && node bench/failover/run.mjs   [TOPOLOGY=cluster] [VISITORS=8] [REDIS_WAIT_REPLICAS=1]
// Redis listens on BASE_PORT.. (default 7100; a cluster also on +10000 for its bus), sentinels on
// SENTINEL_PORT.. (default 26400).
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const NAME = 'schools'
const TOPOLOGY = process.env.TOPOLOGY ?? 'sentinel'
const VISITORS = Number(process.env.VISITORS ?? 8)
const WAIT_REPLICAS = process.env.REDIS_WAIT_REPLICAS ?? '1'
const BASE_PORT = Number(process.env.BASE_PORT ?? 7100)
const SENTINEL_PORT = Number(process.env.SENTINEL_PORT ?? 26400)
const PREFIX = 'schools-resources:'
// The example's lockout: 10 failures of one username from one address lock it (the 10th answers 429).
const MAX_ATTEMPTS = 10
const FAILED_BEFORE = 4
const dir = mkdtempSync(join(tmpdir(), 'schools-resources-failover-'))
// The example servers' warn and error lines, whole, for a look at why a request failed.
const serverLog = join(tmpdir(), `schools-resources-failover-${TOPOLOGY}.log`)
writeFileSync(serverLog, '')
const children = new Map()
const t0 = Date.now()
const log = (message) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${message}`)

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
  const child = spawn('redis-server', [join(home, 'redis.conf'), ...(sentinel ? ['--sentinel'] : [])], { stdio: 'ignore' })
  children.set(port, child)
  await until(`redis on ${port}`, async () => {
    if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited ${child.exitCode} (port in use? set BASE_PORT)`)
    return await cli(port, 'PING') === 'PONG'
  })
}

async function kill (port) {
  const child = children.get(port)
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  await exited
}

/** The Sentinel set: its phases' events, and where a key is. */
async function sentinelTopology () {
  const [primary, replica] = [BASE_PORT, BASE_PORT + 1]
  const sentinels = [SENTINEL_PORT, SENTINEL_PORT + 1, SENTINEL_PORT + 2]
  const currentPrimary = async () => Number((await cli(sentinels[0], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)).split('\n')[1])
  const settled = async () => {
    const info = await cli(await currentPrimary(), 'INFO', 'replication')
    return /role:master/.test(info) && /state=online/.test(info)
  }
  await redis(primary, [])
  await redis(replica, [`replicaof 127.0.0.1 ${primary}`])
  for (const port of sentinels) {
    await redis(port, [`sentinel monitor ${NAME} 127.0.0.1 ${primary} 2`, `sentinel down-after-milliseconds ${NAME} 1000`, `sentinel failover-timeout ${NAME} 5000`], true)
  }
  await until('the set to be ready', async () => {
    const info = await cli(sentinels[2], 'SENTINEL', 'MASTER', NAME)
    return /num-other-sentinels\n2/.test(info) && /num-slaves\n1/.test(info) && await settled()
  })
  return {
    describe: 'a Sentinel set (primary, 1 replica, 3 sentinels, down-after 1 s)',
    env: { REDIS_SENTINELS: sentinels.map((port) => `127.0.0.1:${port}`).join(','), REDIS_SENTINEL_NAME: NAME },
    get: async (key) => cli(await currentPrimary(), 'GET', key),
    planned: {
      name: 'planned failover (SENTINEL FAILOVER)',
      async run (mark) {
        const before = await currentPrimary()
        await cli(sentinels[0], 'SENTINEL', 'FAILOVER', NAME)
        await until('the failover', async () => await currentPrimary() !== before)
        mark('new primary named by the sentinels')
        await until('the old primary in sync as a replica', settled)
        mark('old primary back as a replica in sync')
      }
    },
    kill: {
      name: 'primary killed (SIGKILL), restarted once the replica is promoted',
      async run (mark) {
        const victim = await currentPrimary()
        await kill(victim)
        mark('primary killed')
        // Restarted empty (no persistence here) before the sentinels promote the replica, it would be
        // replicated, empty, to the replica: so its "supervisor" waits for the promotion.
        await until('the promotion', async () => await currentPrimary() !== victim)
        mark('replica promoted by the sentinels')
        await redis(victim, [])
        mark('killed server restarted (empty)')
        await until('the restarted server in sync', settled)
        mark('restarted server a replica in sync')
      }
    }
  }
}

/** Three masters with a replica each. */
async function clusterTopology () {
  const ports = [0, 1, 2, 3, 4, 5].map((i) => BASE_PORT + i)
  const config = (port) => ['cluster-enabled yes', `cluster-config-file nodes-${port}.conf`, 'cluster-node-timeout 1000']
  await Promise.all(ports.map((port) => redis(port, config(port))))
  await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 30_000 })
  const live = new Set(ports)
  const nodes = async () => {
    for (const port of live) {
      const out = await cli(port, 'CLUSTER', 'NODES')
      if (out.startsWith('(failed)')) continue
      return out.split('\n').map((line) => {
        const [id, address, flags, master] = line.split(' ')
        return { id, port: Number(address.split(':')[1].split('@')[0]), master: flags.includes('master'), fail: flags.includes('fail'), of: master }
      })
    }
    throw new Error('no cluster node answers')
  }
  // Healthy: every live node says ok, and every master has a replica that is in sync.
  const healthy = async () => {
    for (const port of live) if (!/cluster_state:ok/.test(await cli(port, 'CLUSTER', 'INFO'))) return false
    const masters = (await nodes()).filter((n) => n.master && !n.fail)
    for (const m of masters) if (!/slave0:.*state=online/.test(await cli(m.port, 'INFO', 'replication'))) return false
    return masters.length === 3
  }
  await until('the cluster to be healthy', healthy)
  const masterPorts = async () => (await nodes()).filter((n) => n.master && !n.fail).map((n) => n.port).sort()
  return {
    describe: 'a Cluster (3 masters, 1 replica each, cluster-node-timeout 1000)',
    env: { REDIS_CLUSTER_NODES: ports.slice(0, 3).map((port) => `127.0.0.1:${port}`).join(',') },
    get: async (key) => cli([...live][0], '-c', 'GET', key),
    planned: {
      name: 'planned failover (CLUSTER FAILOVER on a replica)',
      async run (mark) {
        const all = await nodes()
        const replica = all.find((n) => !n.master)
        const old = all.find((n) => n.id === replica.of)
        const answer = await cli(replica.port, 'CLUSTER', 'FAILOVER')
        if (answer !== 'OK') throw new Error(`CLUSTER FAILOVER: ${answer}`)
        await until('the replica to be a master', async () => /role:master/.test(await cli(replica.port, 'INFO', 'replication')))
        mark(`replica ${replica.port} promoted (was of ${old.port})`)
        await until('the cluster to be healthy', healthy)
        mark('old master back as a replica in sync')
      }
    },
    kill: {
      name: 'a master killed (SIGKILL), restarted once its replica is promoted',
      async run (mark) {
        const all = await nodes()
        const victim = all.find((n) => n.master)
        const replica = all.find((n) => n.of === victim.id)
        live.delete(victim.port)
        await kill(victim.port)
        mark(`master ${victim.port} killed`)
        await until('the promotion', async () => /role:master/.test(await cli(replica.port, 'INFO', 'replication')))
        mark(`replica ${replica.port} promoted`)
        await until('cluster_state:ok', async () => {
          for (const port of live) if (!/cluster_state:ok/.test(await cli(port, 'CLUSTER', 'INFO'))) return false
          return true
        })
        mark('cluster_state:ok on every live node')
        // Restarted from its nodes.conf, it learns that its slots moved and rejoins as a replica (empty).
        await redis(victim.port, config(victim.port))
        live.add(victim.port)
        mark('killed master restarted (empty)')
        await until('the cluster to be healthy', healthy)
        mark('restarted node a replica in sync')
        if ((await masterPorts()).includes(victim.port)) throw new Error('the killed master came back as a master')
      }
    }
  }
}

function exampleServer (env) {
  const child = spawn(process.execPath, ['--disable-warning=FST_SR_REDIRECT_CONFLICT', resolve('dist/examples/server.js')], {
    env: { ...process.env, REDIS_URL: '', ...env, REDIS_WAIT_REPLICAS: WAIT_REPLICAS, PORT: '0', LOG_LEVEL: 'warn', SESSION_SECRET: 'failover-bench-secret-of-32-characters!!' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  children.set(`example-${child.pid}`, child)
  // The servers' warn lines (outage, degraded replicas), one line each, for the run's timeline.
  let err = ''
  child.stderr.on('data', (d) => { err += d })
  child.once('exit', () => { if (err) log(`example ${child.pid} stderr: ${err.slice(0, 2000)}`) })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      for (const line of String(d).split('\n')) {
        const msg = /"msg":"([^"]*)"/.exec(line)?.[1]
        if (msg === undefined || msg.startsWith('audit') || !/"level":(40|50)/.test(line)) continue
        log(`example ${child.pid}: ${msg.slice(0, 200)}`)
        appendFileSync(serverLog, `[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`)
      }
      const match = /Resources section: http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (match !== null) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error(`example server exited ${code}: ${out}`)))
  })
}

const cookiesOf = (res) => res.headers.getSetCookie().map((c) => c.split(';')[0])
async function signIn (base, email = 'teacher@example.org', password = 'correct horse battery staple') {
  const form = await fetch(`${base}/Security/login`)
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? ''
  const body = new URLSearchParams({ _csrf: token, email, password })
  const res = await fetch(`${base}/Security/login`, { method: 'POST', body, headers: { cookie: cookiesOf(form).join('; ') }, redirect: 'manual' })
  await res.arrayBuffer()
  return { status: res.status, cookie: cookiesOf(res).find((c) => c.startsWith('sessionId=')) }
}
async function page (base, cookie) {
  const res = await fetch(`${base}/schools/resources/resources/maths/`, { headers: { cookie }, redirect: 'manual' })
  await res.arrayBuffer()
  return res.status
}

/** `n` wrong passwords for `email`, retried past 503s (a failure the store could not count is not one). */
async function fail (base, email, n) {
  const statuses = []
  while (statuses.length < n) {
    const { status } = await signIn(base, email, 'not the password')
    if (status === 503) { await sleep(100); continue }
    statuses.push(status)
  }
  return statuses
}

try {
  const topology = TOPOLOGY === 'cluster' ? await clusterTopology() : await sentinelTopology()
  const ports = [await exampleServer(topology.env), await exampleServer(topology.env)]
  const lb = await freePort()
  writeFileSync(join(dir, 'haproxy.cfg'), ['defaults', '  mode http', '  timeout connect 1s', '  timeout client 30s', '  timeout server 30s',
    'frontend www', `  bind 127.0.0.1:${lb}`, '  default_backend examples', 'backend examples', '  balance roundrobin',
    ...ports.map((port, i) => `  server ex${i} 127.0.0.1:${port} check inter 500ms`)].join('\n') + '\n')
  children.set('haproxy', spawn('haproxy', ['-f', join(dir, 'haproxy.cfg'), '-db'], { stdio: 'ignore' }))
  const base = `http://127.0.0.1:${lb}`
  await until('haproxy', async () => (await fetch(`${base}/schools/resources/`).catch(() => ({ status: 0 }))).status === 200)

  const phases = []
  let phase
  const startPhase = (name) => {
    phase = { name, started: Date.now(), signIns: {}, pages: {}, cookies: [], first503: 0, last503: 0, marks: [], last303: Date.now(), longestGap: 0 }
    phases.push(phase)
    log(`phase: ${name}`)
    return phase
  }
  const tally = (map, status) => { map[status] = (map[status] ?? 0) + 1 }
  const state = { stopped: false }
  startPhase('steady')
  const visitors = Array.from({ length: VISITORS }, async () => {
    while (!state.stopped) {
      const { status, cookie } = await signIn(base).catch(() => ({ status: 'error' }))
      const now = Date.now()
      const p = phase
      tally(p.signIns, status)
      if (status === 503) { p.first503 ||= now; p.last503 = now }
      if (status === 303) {
        p.longestGap = Math.max(p.longestGap, now - p.last303)
        p.last303 = now
        p.cookies.push(cookie)
        tally(p.pages, await page(base, cookie).catch(() => 'error'))
      }
      await sleep(20)
    }
  })
  await sleep(3000)
  for (const [i, event] of [topology.planned, topology.kill].entries()) {
    // Failed attempts on an account of this phase's own, counted before the event.
    const email = `lock-${i}@example.org`
    const before = await fail(base, email, FAILED_BEFORE)
    await sleep(200)
    const p = startPhase(event.name)
    p.lockout = { email, before }
    await event.run((what) => { p.marks.push(`${what} +${Date.now() - p.started} ms`); log(what) })
    await sleep(3000)
    // The count as Redis has it now, then the rest of the failures: the last one locks the account
    // (429) only if the failures made before the event were kept.
    const key = `${PREFIX}attempts:user-address:127.0.0.1|${email}`
    p.lockout.stored = await topology.get(key)
    p.lockout.after = await fail(base, email, MAX_ATTEMPTS - FAILED_BEFORE)
  }
  state.stopped = true
  await Promise.all(visitors)

  console.log(`Two example servers behind HAProxy on ${topology.describe}, ${VISITORS} visitors, REDIS_WAIT_REPLICAS=${WAIT_REPLICAS}`)
  for (const p of phases) {
    const later = {}
    for (const cookie of p.cookies) tally(later, await page(base, cookie).catch(() => 'error'))
    const lost = p.cookies.length - (later[200] ?? 0)
    const fmt = (map) => Object.entries(map).map(([s, n]) => `${s} x ${n}`).join(', ')
    const refused = p.first503 ? ` (503s from +${p.first503 - p.started} to +${p.last503 - p.started} ms)` : ''
    console.log(`- ${p.name}: sign-ins ${fmt(p.signIns)}${refused}; longest time without a 303: ${p.longestGap} ms; pages ${fmt(p.pages)}; later signed out: ${lost} of ${p.cookies.length}; 500s: ${(p.signIns[500] ?? 0) + (p.pages[500] ?? 0)}`)
    if (p.marks.length > 0) console.log(`  events: ${p.marks.join('; ')}`)
    if (p.lockout !== undefined) {
      const { email, before, stored, after } = p.lockout
      const kept = after.at(-1) === 429
      console.log(`  lockout: ${before.length} failures for ${email} before (${before.join(',')}); count in Redis after: ${stored || '(none)'}; ${after.length} more: ${after.join(',')} -> ${kept ? 'locked at the 10th: the counts survived' : 'NOT locked: counts were lost'}`)
    }
  }
} finally {
  for (const child of children.values()) child.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
  console.error(`the example servers' warn and error lines: ${serverLog}`)
}
