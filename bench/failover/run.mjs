// The review's scenario of issue 37 as one command: three example servers behind HAProxy configured as
// docs/health.md says (its HAProxy block, read from the doc: /readyz checks, /storez refused), on a Redis
// topology of our own, under a scripted population of members and visitors, across a planned failover,
// a killed primary and a stalled one (SIGSTOP):
// - sentinel: a primary, one replica, three sentinels (down-after 1 s); SENTINEL FAILOVER; the primary
//   killed (SIGKILL) and started again by its "supervisor" once the replica is promoted; the primary
//   stalled (SIGSTOP) until PAUSE_AFTER_MS past the promotion, then resumed (SIGCONT).
// - cluster: three masters with one replica each (cluster-node-timeout 1000); CLUSTER FAILOVER on a
//   replica; a master killed, then started again once its replica is promoted; a master stalled.
// Members sign in, open pages and sign out (half of them keep their session, checked at the end);
// visitors ask for a category page (the login redirect), the login page and the stylesheet. Prints, per
// phase: the sign-ins, the members' and the visitors' answers (5xx split into HAProxy's own and the
// example's, and whether each 503 has Retry-After), the sign-outs that expired the cookie, /readyz
// failures seen by polling each instance, how long after the promotion each instance's /storez named the
// promoted master, the sign-ins answered 303 later found signed out, and whether failed-attempt counts
// made before the event survived it (the lockout). Then the issue's "Done when", each yes or no.
// Not part of CI (needs haproxy, redis-server, redis-sentinel: apt-get install -y haproxy redis-sentinel):
//   npm run build && node bench/failover/run.mjs   [TOPOLOGY=sentinel|cluster] [INSTANCES=3] [MEMBERS=6]
//     [VISITORS=6] [REDIS_WAIT_REPLICAS=1] [REDIS_TIMEOUT_MS=1000] [PAUSE_AFTER_MS=5000] [EVENTS=planned,kill,pause]
// Both topologies, one after the other, unless TOPOLOGY names one. Redis listens on BASE_PORT.. (default
// 7100; a cluster also on +10000 for its bus), sentinels on SENTINEL_PORT.. (default 26400).
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const NAME = 'schools'
const TOPOLOGIES = process.env.TOPOLOGY === undefined ? ['sentinel', 'cluster'] : [process.env.TOPOLOGY]
const INSTANCES = Number(process.env.INSTANCES ?? 3)
const MEMBERS = Number(process.env.MEMBERS ?? 6)
const VISITORS = Number(process.env.VISITORS ?? 6)
const WAIT_REPLICAS = process.env.REDIS_WAIT_REPLICAS ?? '1'
const REDIS_TIMEOUT_MS = process.env.REDIS_TIMEOUT_MS ?? '1000'
const PAUSE_AFTER_MS = Number(process.env.PAUSE_AFTER_MS ?? 5000)
const EVENTS = (process.env.EVENTS ?? 'planned,kill,pause').split(',')
const BASE_PORT = Number(process.env.BASE_PORT ?? 7100)
const SENTINEL_PORT = Number(process.env.SENTINEL_PORT ?? 26400)
const PREFIX = 'schools-resources:'
// The example's lockout: 10 failures of one username from one address lock it (the 10th answers 429).
const MAX_ATTEMPTS = 10
const FAILED_BEFORE = 4
// Per topology: its directory, the example servers' warn and error lines (whole, for a look at why a
// request failed), and the processes to kill at the end.
let dir
let serverLog
let children = new Map()
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

/** SIGSTOP: the process keeps its connections and answers nothing; `false`: SIGCONT. */
function stall (port, stalled = true) {
  children.get(port).kill(stalled ? 'SIGSTOP' : 'SIGCONT')
}

/** The Sentinel set: its phases' events, and where a key is. */
async function sentinelTopology () {
  const [primary, replica] = [BASE_PORT, BASE_PORT + 1]
  const sentinels = [SENTINEL_PORT, SENTINEL_PORT + 1, SENTINEL_PORT + 2]
  const currentPrimary = async () => Number((await cli(sentinels[0], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)).split('\n')[1])
  // node-redis listens to one sentinel; the others learn a new configuration from its hello messages.
  const everySentinel = async (port) => {
    for (const sentinel of sentinels) if (Number((await cli(sentinel, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)).split('\n')[1]) !== port) return false
    return true
  }
  const agreed = (mark) => currentPrimary().then((port) => until('every sentinel to name it', () => everySentinel(port))).then(() => mark('every sentinel names it'))
  const settled = async () => {
    const info = await cli(await currentPrimary(), 'INFO', 'replication')
    return /role:master/.test(info) && /state=online/.test(info)
  }
  await redis(primary, [])
  await redis(replica, [`replicaof 127.0.0.1 ${primary}`])
  for (const port of sentinels) {
    await redis(port, [`sentinel monitor ${NAME} 127.0.0.1 ${primary} 2`, `sentinel down-after-milliseconds ${NAME} 1000`, `sentinel failover-timeout ${NAME} 5000`], true)
  }
  // /storez is right once it follows the promoted primary, and it takes writes.
  const right = (port) => (state) => state.ok === true && state.master === `127.0.0.1:${port}`
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
      async run ({ mark, promoted }) {
        const before = await currentPrimary()
        await cli(sentinels[0], 'SENTINEL', 'FAILOVER', NAME)
        await until('the failover', async () => await currentPrimary() !== before)
        promoted(right(await currentPrimary()))
        mark('new primary named by the sentinels')
        await agreed(mark)
        await until('the old primary in sync as a replica', settled)
        mark('old primary back as a replica in sync')
      }
    },
    kill: {
      name: 'primary killed (SIGKILL), restarted once the replica is promoted',
      async run ({ mark, promoted }) {
        const victim = await currentPrimary()
        await kill(victim)
        mark('primary killed')
        // Restarted empty (no persistence here) before the sentinels promote the replica, it would be
        // replicated, empty, to the replica: so its "supervisor" waits for the promotion.
        await until('the promotion', async () => await currentPrimary() !== victim)
        promoted(right(await currentPrimary()))
        mark('replica promoted by the sentinels')
        await agreed(mark)
        await redis(victim, [])
        mark('killed server restarted (empty)')
        await until('the restarted server in sync', settled)
        mark('restarted server a replica in sync')
      }
    },
    pause: {
      name: `primary stalled (SIGSTOP), resumed ${PAUSE_AFTER_MS} ms after the replica is promoted`,
      async run ({ mark, promoted }) {
        const victim = await currentPrimary()
        stall(victim)
        mark('primary stalled')
        await until('the promotion', async () => await currentPrimary() !== victim)
        promoted(right(await currentPrimary()))
        mark('replica promoted by the sentinels')
        await agreed(mark)
        await sleep(PAUSE_AFTER_MS)
        stall(victim, false)
        mark('stalled server resumed')
        await until('the resumed server in sync', settled)
        mark('resumed server a replica in sync')
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
        const [id, address, flags, master, , , , , ...ranges] = line.split(' ')
        const first = ranges.length === 0 ? undefined : Number(ranges[0].split('-')[0])
        return { id, port: Number(address.split(':')[1].split('@')[0]), master: flags.includes('master'), fail: flags.includes('fail'), of: master, first }
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
  // /storez is right once the range holding `slot` names the promoted `port` as its master.
  const right = (slot, port) => (state) => (state.shards ?? []).some((shard) => {
    const [from, to = from] = shard.slots.split('-').map(Number)
    return shard.master === `127.0.0.1:${port}` && slot >= from && slot <= to
  })
  const masterPorts = async () => (await nodes()).filter((n) => n.master && !n.fail).map((n) => n.port).sort()
  return {
    describe: 'a Cluster (3 masters, 1 replica each, cluster-node-timeout 1000)',
    env: { REDIS_CLUSTER_NODES: ports.slice(0, 3).map((port) => `127.0.0.1:${port}`).join(',') },
    get: async (key) => cli([...live][0], '-c', 'GET', key),
    planned: {
      name: 'planned failover (CLUSTER FAILOVER on a replica)',
      async run ({ mark, promoted }) {
        const all = await nodes()
        const replica = all.find((n) => !n.master)
        const old = all.find((n) => n.id === replica.of)
        const answer = await cli(replica.port, 'CLUSTER', 'FAILOVER')
        if (answer !== 'OK') throw new Error(`CLUSTER FAILOVER: ${answer}`)
        await until('the replica to be a master', async () => /role:master/.test(await cli(replica.port, 'INFO', 'replication')))
        promoted(right(old.first, replica.port))
        mark(`replica ${replica.port} promoted (was of ${old.port})`)
        await until('the cluster to be healthy', healthy)
        mark('old master back as a replica in sync')
      }
    },
    kill: {
      name: 'a master killed (SIGKILL), restarted once its replica is promoted',
      async run ({ mark, promoted }) {
        const all = await nodes()
        const victim = all.find((n) => n.master)
        const replica = all.find((n) => n.of === victim.id)
        live.delete(victim.port)
        await kill(victim.port)
        mark(`master ${victim.port} killed`)
        await until('the promotion', async () => /role:master/.test(await cli(replica.port, 'INFO', 'replication')))
        promoted(right(victim.first, replica.port))
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
    },
    pause: {
      name: `a master stalled (SIGSTOP), resumed ${PAUSE_AFTER_MS} ms after its replica is promoted`,
      async run ({ mark, promoted }) {
        const all = await nodes()
        const victim = all.find((n) => n.master)
        const replica = all.find((n) => n.of === victim.id)
        live.delete(victim.port)
        stall(victim.port)
        mark(`master ${victim.port} stalled`)
        await until('the promotion', async () => /role:master/.test(await cli(replica.port, 'INFO', 'replication')))
        promoted(right(victim.first, replica.port))
        mark(`replica ${replica.port} promoted`)
        await sleep(PAUSE_AFTER_MS)
        stall(victim.port, false)
        live.add(victim.port)
        mark(`master ${victim.port} resumed`)
        await until('the cluster to be healthy', healthy)
        mark('resumed node a replica in sync')
        if ((await masterPorts()).includes(victim.port)) throw new Error('the stalled master came back as a master')
      }
    }
  }
}

function exampleServer (env) {
  const child = spawn(process.execPath, ['--disable-warning=FST_SR_REDIRECT_CONFLICT', resolve('dist/examples/server.js')], {
    env: { ...process.env, REDIS_URL: '', ...env, REDIS_WAIT_REPLICAS: WAIT_REPLICAS, REDIS_TIMEOUT_MS, PORT: '0', LOG_LEVEL: 'warn', SESSION_SECRET: 'failover-bench-secret-of-32-characters!!' },
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

/** docs/health.md's HAProxy configuration, with this run's address and instances in place of its own. */
function haproxyConfig (lb, ports) {
  const block = /<!-- health-haproxy -->\s*```\w*\n([\s\S]*?)\n```/.exec(readFileSync(resolve('docs/health.md'), 'utf8'))?.[1]
  if (block === undefined) throw new Error('docs/health.md has no HAProxy block after <!-- health-haproxy -->')
  const lines = block.split('\n')
  const servers = lines.filter((line) => /^\s*server /.test(line))
  const indent = /^\s*/.exec(servers[0])[0]
  return lines.flatMap((line) => {
    if (/^\s*bind /.test(line)) return [`${indent}bind 127.0.0.1:${lb}`]
    if (line === servers[0]) return ports.map((port, i) => `${indent}server web${i + 1} 127.0.0.1:${port} check`)
    return servers.includes(line) ? [] : [line]
  }).join('\n') + '\n'
}

const cookiesOf = (res) => res.headers.getSetCookie().map((c) => c.split(';')[0])
const sessionOf = (res) => cookiesOf(res).find((c) => c.startsWith('sessionId=') && c !== 'sessionId=')
const csrfOf = (text) => /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? ''
const MATHS = '/schools/resources/resources/maths/'

/** Status, Retry-After, whether HAProxy answered it itself (its own 503 page), and the body. */
async function answer (res) {
  const text = await res.text()
  return { status: res.status, retryAfter: res.headers.get('retry-after') !== null, haproxy: res.status >= 500 && /No server is available|<h1>50\d/.test(text) && !/Temporarily unavailable/.test(text), text, res }
}
const request = (base, path, init = {}) => fetch(base + path, { redirect: 'manual', ...init }).then(answer, (err) => ({ status: 'error', error: err.message }))

async function signIn (base, email = 'teacher@example.org', password = 'correct horse battery staple') {
  const form = await request(base, '/Security/login')
  if (form.status !== 200) return { ...form, kind: 'form' }
  const body = new URLSearchParams({ _csrf: csrfOf(form.text), email, password })
  const res = await request(base, '/Security/login', { method: 'POST', body, headers: { cookie: cookiesOf(form.res).join('; ') } })
  return { ...res, cookie: res.res === undefined ? undefined : sessionOf(res.res) }
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

async function runTopology (name) {
  dir = mkdtempSync(join(tmpdir(), 'schools-resources-failover-'))
  serverLog = join(tmpdir(), `schools-resources-failover-${name}.log`)
  writeFileSync(serverLog, '')
  children = new Map()
  try {
    log(`topology: ${name}`)
    const topology = name === 'cluster' ? await clusterTopology() : await sentinelTopology()
    const ports = await Promise.all(Array.from({ length: INSTANCES }, () => exampleServer(topology.env)))
    const lb = await freePort()
    writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig(lb, ports))
    children.set('haproxy', spawn('haproxy', ['-f', join(dir, 'haproxy.cfg'), '-db'], { stdio: 'ignore' }))
    const base = `http://127.0.0.1:${lb}`
    await until('haproxy', async () => (await request(base, '/schools/resources/')).status === 200)
    const refused = (await request(base, '/storez')).status
    if (refused !== 403) throw new Error(`HAProxy answered /storez with ${refused}, not 403: docs/health.md's configuration should refuse it`)
    // Every instance in rotation before the first event (rise 2 x inter 500 ms).
    await sleep(1500)

    const phases = []
    let phase
    const tally = (map, key) => { map[key] = (map[key] ?? 0) + 1 }
    const startPhase = (phaseName) => {
      phase = {
        name: phaseName,
        started: Date.now(),
        signIns: {},
        member: {},
        visitor: {},
        signOuts: [],
        kept: [],
        readyzFailed: 0,
        readyzAsked: 0,
        readyzSlow: 0,
        readyzMaxMs: 0,
        haproxyAt: [],
        storez: [],
        marks: [],
        promotedAt: undefined,
        right: undefined
      }
      phases.push(phase)
      log(`phase: ${phaseName}`)
      return phase
    }
    /** A 5xx is counted by who answered it; a 503 of the example's by whether it has Retry-After. */
    const kindOf = (a) => {
      if (a.haproxy) phase.haproxyAt.push(Date.now() - phase.started)
      return kindName(a)
    }
    const kindName = (a) => a.status === 'error' ? 'error' : a.status < 500 ? String(a.status) : a.haproxy ? `${a.status} haproxy` : `${a.status}${a.retryAfter ? ' retry-after' : ' NO retry-after'}`
    const state = { stopped: false }
    startPhase('steady')

    const members = Array.from({ length: MEMBERS }, async (_, m) => {
      for (let round = 0; !state.stopped; round++) {
        const signedIn = await signIn(base)
        const p = phase
        tally(p.signIns, kindOf(signedIn))
        if (signedIn.status !== 303 || signedIn.cookie === undefined) { await sleep(100); continue }
        let token = ''
        let csrfCookie = []
        for (let i = 0; i < 3 && !state.stopped; i++) {
          const page = await request(base, MATHS, { headers: { cookie: signedIn.cookie } })
          tally(phase.member, kindOf(page))
          if (page.status === 200) { token = csrfOf(page.text); csrfCookie = cookiesOf(page.res) }
          await sleep(50)
        }
        // Half the rounds keep their session (checked at the end); the others sign out.
        if ((round + m) % 2 === 0 || token === '') { p.kept.push(signedIn.cookie); continue }
        const out = await request(base, '/Security/logout', { method: 'POST', body: new URLSearchParams({ _csrf: token }), headers: { cookie: [signedIn.cookie, ...csrfCookie].join('; ') } })
        const q = phase
        tally(q.member, kindOf(out))
        // A browser drops a cookie the answer expired; else it keeps sending it (checked at the end).
        const expired = out.res?.headers.getSetCookie().some((c) => c.startsWith('sessionId=;') && /Expires=Thu, 01 Jan 1970/.test(c)) === true
        q.signOuts.push({ cookie: signedIn.cookie, expired, status: out.status })
      }
    })
    const visitors = Array.from({ length: VISITORS }, async () => {
      while (!state.stopped) {
        for (const path of [MATHS, '/Security/login', '/schools/resources/assets/resources.css']) tally(phase.visitor, kindOf(await request(base, path)))
        await sleep(50)
      }
    })
    // What the balancer and monitoring see, asked of each instance directly.
    const pollers = ports.flatMap((port) => [
      (async () => {
        while (!state.stopped) {
          const asked = Date.now()
          const r = await request(`http://127.0.0.1:${port}`, '/readyz')
          const ms = Date.now() - asked
          phase.readyzAsked++
          if (r.status !== 200) phase.readyzFailed++
          // Slower than HAProxy's check timeout (its inter, 500 ms, without a timeout check): a failed check.
          if (ms > 500) phase.readyzSlow++
          phase.readyzMaxMs = Math.max(phase.readyzMaxMs, ms)
          await sleep(100)
        }
      })(),
      (async () => {
        while (!state.stopped) {
          const r = await request(`http://127.0.0.1:${port}`, '/storez')
          const p = phase
          let body
          try { body = JSON.parse(r.text) } catch {}
          if (body !== undefined && p.right?.(body) === true) p.storez.push({ port, at: Date.now() })
          await sleep(250)
        }
      })()
    ])

    await sleep(3000)
    for (const [i, eventName] of EVENTS.entries()) {
      const event = topology[eventName]
      // Failed attempts on an account of this phase's own, counted before the event.
      const email = `lock-${name}-${i}@example.org`
      const before = await fail(base, email, FAILED_BEFORE)
      await sleep(200)
      const p = startPhase(event.name)
      p.lockout = { email, before }
      await event.run({
        mark: (what) => { p.marks.push(`${what} +${Date.now() - p.started} ms`); log(what) },
        promoted: (right) => { p.promotedAt = Date.now(); p.right = right }
      })
      await sleep(3000)
      // The count as Redis has it now, then the rest of the failures: the last one locks the account
      // (429) only if the failures made before the event were kept.
      const key = `${PREFIX}attempts:user-address:127.0.0.1|${email}`
      p.lockout.stored = await topology.get(key)
      p.lockout.after = await fail(base, email, MAX_ATTEMPTS - FAILED_BEFORE)
    }
    state.stopped = true
    await Promise.all([...members, ...visitors, ...pollers])

    const fmt = (map) => Object.entries(map).map(([s, n]) => `${s} x ${n}`).join(', ') || 'none'
    const fivexx = (map) => Object.entries(map).filter(([k]) => /^5/.test(k) || k === 'error').reduce((sum, [, n]) => sum + n, 0)
    const noRetryAfter = (map) => Object.entries(map).filter(([k]) => /^5/.test(k) && !/ retry-after$/.test(k)).reduce((sum, [, n]) => sum + n, 0)
    console.log(`\n${INSTANCES} example servers behind HAProxy (docs/health.md's configuration) on ${topology.describe}; ${MEMBERS} members, ${VISITORS} visitors; REDIS_WAIT_REPLICAS=${WAIT_REPLICAS}, REDIS_TIMEOUT_MS=${REDIS_TIMEOUT_MS}`)
    const done = { stillIn: 0, visitors5xx: 0, memberNoRetryAfter: 0, readyzFailed: 0, storezLate: [], lost: 0, checked: 0 }
    for (const p of phases) {
      const later = {}
      for (const cookie of p.kept) tally(later, (await request(base, MATHS, { headers: { cookie } })).status)
      const lost = p.kept.length - (later[200] ?? 0)
      // A sign-out whose answer did not expire the cookie, and whose session still opens a page.
      let stillIn = 0
      for (const { cookie, expired } of p.signOuts) if (!expired && (await request(base, MATHS, { headers: { cookie } })).status === 200) stillIn++
      done.stillIn += stillIn
      done.visitors5xx += fivexx(p.visitor)
      done.memberNoRetryAfter += noRetryAfter(p.member) + noRetryAfter(p.signIns)
      done.readyzFailed += p.readyzFailed
      done.lost += lost
      done.checked += p.kept.length
      console.log(`- ${p.name}:`)
      console.log(`  sign-ins: ${fmt(p.signIns)}`)
      console.log(`  members' pages and sign-outs: ${fmt(p.member)}; sign-outs: ${p.signOuts.length} (${fmt(p.signOuts.reduce((m, s) => { tally(m, s.status); return m }, {}))}), the cookie expired by ${p.signOuts.filter((s) => s.expired).length}, still signed in after: ${stillIn}`)
      console.log(`  visitors (category redirect, login page, stylesheet): ${fmt(p.visitor)}`)
      console.log(`  /readyz asked of each instance every 100 ms: ${p.readyzAsked - p.readyzFailed} of ${p.readyzAsked} answered 200; slowest ${p.readyzMaxMs} ms, ${p.readyzSlow} slower than 500 ms`)
      if (p.haproxyAt.length > 0) console.log(`  HAProxy's own 503s: ${p.haproxyAt.length}, from +${p.haproxyAt[0]} to +${p.haproxyAt.at(-1)} ms`)
      if (p.right !== undefined) {
        const delays = ports.map((port) => {
          const first = p.storez.find((s) => s.port === port && s.at >= p.promotedAt)
          return first === undefined ? undefined : first.at - p.promotedAt
        })
        const worst = delays.includes(undefined) ? undefined : Math.max(...delays)
        done.storezLate.push({ phase: p.name, worst })
        console.log(`  /storez (each instance every 250 ms) right after the promotion: ${delays.map((d) => d === undefined ? 'never' : `+${d} ms`).join(', ')}`)
      }
      console.log(`  sessions kept (not signed out by the script), checked at the end: ${later[200] ?? 0} of ${p.kept.length} still signed in; lost: ${lost}`)
      if (p.marks.length > 0) console.log(`  events: ${p.marks.join('; ')}`)
      if (p.lockout !== undefined) {
        const { email, before, stored, after } = p.lockout
        const kept = after.at(-1) === 429
        console.log(`  lockout: ${before.length} failures for ${email} before (${before.join(',')}); count in Redis after: ${stored || '(none)'}; ${after.length} more: ${after.join(',')} -> ${kept ? 'locked at the 10th: the counts survived' : 'NOT locked: counts were lost'}`)
      }
    }
    const yes = (ok) => ok ? 'yes' : 'NO'
    const late = done.storezLate.filter((s) => s.worst === undefined || s.worst > 2000)
    console.log(`Done when (${name}): 0 answers 5xx to visitors: ${yes(done.visitors5xx === 0)} (${done.visitors5xx}); members' 503s all with Retry-After: ${yes(done.memberNoRetryAfter === 0)} (${done.memberNoRetryAfter} without); ` +
      `/readyz 200 throughout: ${yes(done.readyzFailed === 0)} (${done.readyzFailed} not 200); /storez right within 2 s of each promotion: ${yes(late.length === 0)} ` +
      `(worst per event: ${done.storezLate.map((s) => s.worst === undefined ? 'never' : `${s.worst} ms`).join(', ')}); 0 sign-ins lost: ${yes(done.lost === 0)} (${done.lost} of ${done.checked}); sign-outs that left the browser signed in: ${done.stillIn}`)
  } finally {
    for (const child of children.values()) {
      child.kill('SIGCONT')
      child.kill('SIGKILL')
    }
    rmSync(dir, { recursive: true, force: true })
    console.error(`the example servers' warn and error lines: ${serverLog}`)
  }
}

for (const name of TOPOLOGIES) await runTopology(name)
