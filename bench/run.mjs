#!/usr/bin/env node
// npm run bench [-- --quick] [-- --rounds 3 --duration 8 --readme]
//
// Starts fresh server processes one after another, interleaved over rounds, checks every server's answers
// before (and after) loading it, and measures with wrk on loopback. See bench/README section in README.md.
import { spawn, spawnSync, execFileSync } from 'node:child_process'
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest, Agent } from 'node:http'
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const args = process.argv.slice(2)
const flag = (name) => args.includes(`--${name}`)
const value = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? fallback : args[i + 1]
}
const quick = flag('quick')
const ROUNDS = Number(value('rounds', quick ? 1 : 3))
const DURATION = Number(value('duration', quick ? 2 : 8))
const WARMUP = Number(value('warmup', quick ? 1 : 2))
const CONNECTIONS = Number(value('connections', 64))
const MEMORY_REQUESTS = Number(value('memory-requests', quick ? 50_000 : 1_000_000))
const ONLY = value('only', undefined)?.split(',')
const SKIP = new Set((value('skip', '') ?? '').split(',').filter(Boolean))
const OURS_LOG_LEVEL = value('log-level', 'warn')
const OUT = join(root, 'bench', 'results')

const BASE_URL = 'https://www.example.org'
const CATEGORY = '/schools/resources/resources/maths/'
const EXPECTED_LOCATION = `${BASE_URL}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`
const EXPECTED_CONFLICT = `Already directed to ${EXPECTED_LOCATION}; now trying to direct to /schools/resources/`
const EXPECTED_WARNING = `[FST_SR_REDIRECT_CONFLICT] UserWarning: ${EXPECTED_CONFLICT}`
// Node's flags as `npm start` runs the example server (`... && node <flags> dist/examples/server.js`).
function startFlags (packageJson) {
  return JSON.parse(readFileSync(packageJson, 'utf8')).scripts.start.split('&&').pop().trim().split(/\s+/).slice(1, -1)
}
const START_FLAGS = startFlags(join(root, 'package.json'))
// Where a build's warnings are to be found: a build whose `npm start` turns off Node's printing of them
// logs them as a summary; one that does not prints and logs each.
function warningOutputFor (flags) {
  return flags.includes('--disable-warning=FST_SR_REDIRECT_CONFLICT') ? 'log-summary' : 'stderr-and-log-each'
}
const CREDENTIALS = 'email=teacher%40example.org&password=correct+horse+battery+staple'
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim())

const SERVERS = [
  { name: 'limit', label: 'bare Fastify (limit)', file: 'limit.mjs', page: /<h1>maths<\/h1>/, sessions: false, cookieAware: false },
  { name: 'reference', label: 'Fastify + @fastify/session', file: 'reference.mjs', page: /<h1>maths<\/h1>/, sessions: true, cookieAware: true },
  { name: 'express', label: 'Express 5 + express-session', file: 'express.mjs', page: /<h1>maths<\/h1>/, sessions: true, cookieAware: true },
  // As `npm start` runs it: Node's flags from package.json (the redirect-conflict warning is raised for
  // every anonymous request but not printed by Node) and the example's conflict log (the first in full,
  // then a count per minute). warningOutput says where the runner finds every warning accounted for.
  { name: 'ours', label: 'fastify-schools-resources', file: 'ours.mjs', page: /<h1>Mathematics<\/h1>[\s\S]*Fraction wall[\s\S]*Signed in as <strong>Demo Teacher<\/strong>|Signed in as <strong>Demo Teacher<\/strong>[\s\S]*<h1>Mathematics<\/h1>[\s\S]*Fraction wall/, sessions: true, cookieAware: true, warns: true, warningOutput: warningOutputFor(START_FLAGS), execArgv: START_FLAGS }
]
if (flag('each-variant')) {
  // The same server with the plugin's defaults under a plain `node`: Node prints every warning to stderr
  // and the plugin logs every one at warn. What a line per anonymous visitor costs.
  SERVERS.push({ ...SERVERS.find((s) => s.name === 'ours'), name: 'ours-each', label: 'ours, every warning printed and logged', warningOutput: 'stderr-and-log-each', execArgv: [], env: { OURS_CONFLICT_LOG: 'each' } })
}
// --extra before=bench/builds/before: our example server from another build (a copy of package.json + dist/),
// measured in the same run and started as that build's own `npm start` starts it.
for (const extra of args.flatMap((a, i) => args[i - 1] === '--extra' ? [a] : [])) {
  const [name, dir] = extra.split('=')
  const flags = startFlags(join(dir, 'package.json'))
  SERVERS.push({ ...SERVERS.find((s) => s.name === 'ours'), name, label: `ours (${name})`, env: { OURS_DIST: dir }, execArgv: flags, warningOutput: warningOutputFor(flags) })
}
SERVERS.splice(0, SERVERS.length, ...SERVERS.filter((s) => ONLY === undefined || ONLY.includes(s.name)))
const ONLY_SCENARIOS = value('scenarios', undefined)?.split(',')
const SCENARIOS = [
  { name: 'anonymous', label: 'anonymous → 302 login redirect' },
  { name: 'signed-in', label: 'signed in → 200 category page' }
].filter((s) => ONLY_SCENARIOS === undefined || ONLY_SCENARIOS.includes(s.name))

// ---------------------------------------------------------------------------------------------------
// Machine, pinning

const nCpu = availableParallelism()
const hasTaskset = (() => { try { execFileSync('taskset', ['-V'], { stdio: 'ignore' }); return true } catch { return false } })()
const pinned = nCpu >= 2 && hasTaskset
const SERVER_CPU = '0'
const LOAD_CPU = String(nCpu - 1)
if (pinned) execFileSync('taskset', ['-a', '-p', '-c', LOAD_CPU, String(process.pid)], { stdio: 'ignore' })
const pin = (cpu, cmd, argv) => pinned ? ['taskset', ['-c', cpu, cmd, ...argv]] : [cmd, argv]
// `wrk -v` prints its version and exits with 1.
const wrkVersion = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
if (wrkVersion.error !== undefined) {
  console.error('bench: wrk is not installed (Debian: apt-get install wrk)')
  process.exit(2)
}
if (!existsSync(join(root, 'dist', 'examples', 'app.js'))) {
  console.error('bench: dist/ is missing; run it as `npm run bench`, which builds first')
  process.exit(2)
}

const log = (...a) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a)

// ---------------------------------------------------------------------------------------------------
// Processes

let nextPort = 4100
let tmpCount = 0
const tmp = join(tmpdir(), `fsr-bench-${process.pid}`)
mkdirSync(tmp, { recursive: true })

async function startServer (server, env = {}, { pinToCore = true } = {}) {
  const port = nextPort++
  const stderrPath = join(tmp, `${server.name}-${tmpCount}.stderr`)
  const stdoutPath = join(tmp, `${server.name}-${tmpCount++}.stdout`)
  const { openSync, closeSync } = await import('node:fs')
  const errFd = openSync(stderrPath, 'w')
  const outFd = openSync(stdoutPath, 'w')
  const nodeArgv = [...(server.execArgv ?? []), join(here, 'servers', server.file)]
  const [cmd, argv] = pinToCore ? pin(SERVER_CPU, process.execPath, nodeArgv) : [process.execPath, nodeArgv]
  const child = spawn(cmd, argv, {
    cwd: root,
    // stdout (pino's log lines) and stderr (Node's warnings) to files the runner counts the warnings in.
    stdio: ['ignore', outFd, errFd, 'ipc'],
    env: { ...process.env, PORT: String(port), BASE_URL, LOG_LEVEL: server.file === 'ours.mjs' ? OURS_LOG_LEVEL : 'warn', ...server.env, ...env }
  })
  closeSync(errFd)
  closeSync(outFd)
  const proc = { server, port, child, stderrPath, stdoutPath, pending: new Map(), nextId: 0 }
  child.on('message', (msg) => {
    if (msg?.type === 'stats') { proc.pending.get(msg.id)?.(msg); proc.pending.delete(msg.id) }
  })
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${server.name} did not start: ${readFileSync(stderrPath, 'utf8')}`)), 20_000)
    child.on('message', (msg) => { if (msg?.type === 'ready') { clearTimeout(timer); resolve() } })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${server.name} exited with ${code}: ${readFileSync(stderrPath, 'utf8')}`)) })
  })
  // `taskset` execs node, so the child's pid is the server's.
  proc.pid = child.pid
  return proc
}

function serverStats (proc) {
  const id = proc.nextId++
  return new Promise((resolve) => {
    proc.pending.set(id, resolve)
    proc.child.send({ type: 'stats', id })
  })
}

/** SIGTERM (our server closes the app, which writes its last conflict summary), SIGKILL after 10 s. */
async function stopServer (proc) {
  if (proc.child.exitCode === null) {
    const exited = new Promise((resolve) => proc.child.once('exit', resolve))
    proc.child.kill('SIGTERM')
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  rmSync(proc.stderrPath, { force: true })
  rmSync(proc.stdoutPath, { force: true })
}

/**
 * The redirect-conflict warnings the server's output accounts for: lines on stderr (Node's printer) or
 * log lines in full plus the counts of the summary lines (pino JSON on stdout).
 */
async function warningsAccountedFor (proc) {
  if (proc.server.warningOutput === 'stderr-and-log-each') {
    const printed = await countInFile(proc.stderrPath, '[FST_SR_REDIRECT_CONFLICT] UserWarning')
    const logged = await countInFile(proc.stdoutPath, '"code":"FST_SR_REDIRECT_CONFLICT"')
    return Math.min(printed, logged)
  }
  let total = 0
  for (const line of readFileSync(proc.stdoutPath, 'utf8').split('\n')) {
    if (!line.includes('"code":"FST_SR_REDIRECT_CONFLICT"')) continue
    const entry = JSON.parse(line)
    total += entry.count ?? 1
  }
  return total
}

/** Stops our server and checks that its output accounts for every warning it raised: none is lost. */
async function stopAndAccount (proc, raised, what) {
  if (proc.child.exitCode !== null) throw new Error(`${proc.server.name}: exited early`)
  const exited = new Promise((resolve) => proc.child.once('exit', resolve))
  proc.child.kill('SIGTERM')
  await exited
  const accounted = await warningsAccountedFor(proc)
  if (accounted !== raised) throw new Error(`${proc.server.name} (${what}): ${raised} warnings raised, ${accounted} in its output`)
  return accounted
}

/** Busy CPU seconds of the whole machine (all processes), from /proc/stat. */
function machineBusySeconds () {
  const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).map(Number)
  // user nice system idle iowait irq softirq steal
  return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / CLK_TCK
}

/** CPU seconds (all threads) and memory of a process, from /proc. */
function procSample (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)[1])
  return { cpuSeconds, rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 }
}

// ---------------------------------------------------------------------------------------------------
// HTTP checks

function http (port, { method = 'GET', path = CATEGORY, headers = {}, body, agent = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      let data = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { data += c })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

function cookieOf (res) {
  const header = res.headers['set-cookie']?.find((c) => c.startsWith('sessionId=') || c.startsWith('connect.sid='))
  return header?.split(';', 1)[0]
}

/** Signs in as a browser does: opens the login form (our server's carries a CSRF token tied to its session), then posts it. */
async function signIn (port) {
  const form = await http(port, { path: '/Security/login' })
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1]
  const formCookie = cookieOf(form)
  const headers = { 'content-type': 'application/x-www-form-urlencoded', ...(formCookie === undefined ? {} : { cookie: formCookie }) }
  const body = token === undefined ? CREDENTIALS : `${CREDENTIALS}&_csrf=${encodeURIComponent(token)}`
  const res = await http(port, { method: 'POST', path: '/Security/login', headers, body })
  const cookie = cookieOf(res)
  if (res.status !== 303 || cookie === undefined) throw new Error(`sign-in answered ${res.status} without a session cookie`)
  return cookie
}

function countInFile (path, needle) {
  return new Promise((resolve, reject) => {
    let count = 0
    let carry = ''
    createReadStream(path, { encoding: 'utf8' })
      .on('data', (chunk) => {
        const text = carry + chunk
        let i = text.indexOf(needle)
        let last = 0
        while (i !== -1) { count++; last = i + needle.length; i = text.indexOf(needle, last) }
        carry = text.slice(Math.max(last, text.length - needle.length + 1))
      })
      .on('end', () => resolve(count))
      .on('error', reject)
  })
}

/** Refuses to go on unless the server gives the right answers: a load tool counts a wrong 302 as success. */
async function checkAnswers (proc) {
  const { server, port } = proc
  const fail = (what) => { throw new Error(`${server.name}: wrong answer: ${what}`) }
  const anon = await http(port)
  if (anon.status !== 302) fail(`anonymous status ${anon.status}, expected 302`)
  if (anon.headers.location !== EXPECTED_LOCATION) fail(`anonymous Location ${anon.headers.location}, expected ${EXPECTED_LOCATION}`)
  if (anon.headers['set-cookie'] !== undefined) fail(`anonymous redirect sets a cookie: ${anon.headers['set-cookie']}`)
  if (server.warns) {
    await sleep(50)
    if (server.warningOutput === 'stderr-and-log-each' && !readFileSync(proc.stderrPath, 'utf8').includes(EXPECTED_WARNING)) fail('the redirect-conflict warning is missing from stderr')
    // The first conflict of a process is logged in full (pino escapes nothing in it).
    if (!readFileSync(proc.stdoutPath, 'utf8').includes(`"msg":"${EXPECTED_CONFLICT}"`)) fail('the redirect-conflict warning is missing from the log')
    const { warnings } = await serverStats(proc)
    if (!(warnings >= 1)) fail('no redirect-conflict warning was raised')
  }
  if (server.cookieAware) {
    const bogus = await http(port, { headers: { cookie: 'sessionId=not-a-signed-id; connect.sid=not-a-signed-id' } })
    if (bogus.status !== 302 || bogus.headers.location !== EXPECTED_LOCATION) fail(`an invalid session cookie got ${bogus.status} ${bogus.headers.location}`)
  }
  const cookie = await signIn(port)
  proc.signIns = (proc.signIns ?? 0) + 1
  for (let i = 0; i < 2; i++) {
    const page = await http(port, { headers: { cookie } })
    if (page.status !== 200) fail(`signed-in status ${page.status}, expected 200`)
    if (!/^text\/html/.test(page.headers['content-type'] ?? '')) fail(`signed-in content-type ${page.headers['content-type']}`)
    if (!server.page.test(page.body)) fail(`signed-in page body does not match ${server.page}`)
  }
  if (server.sessions) {
    const { sessions } = await serverStats(proc)
    if (sessions !== proc.signIns) fail(`${sessions} sessions in the store after ${proc.signIns} sign-ins`)
  }
  return cookie
}

// ---------------------------------------------------------------------------------------------------
// Load

function wrk (port, { duration, headers = {}, path = CATEGORY, maxRequests }) {
  const argv = ['-t1', `-c${CONNECTIONS}`, `-d${duration}s`, '--timeout', '5s', '-s', join(here, 'wrk-report.lua')]
  for (const [k, v] of Object.entries(headers)) argv.push('-H', `${k}: ${v}`)
  argv.push(`http://127.0.0.1:${port}${path}`)
  const [cmd, full] = pin(LOAD_CPU, 'wrk', argv)
  return new Promise((resolve, reject) => {
    const env = maxRequests === undefined ? process.env : { ...process.env, WRK_MAX_REQUESTS: String(maxRequests) }
    const child = spawn(cmd, full, { stdio: ['ignore', 'pipe', 'pipe'], env })
    let out = ''
    child.stdout.on('data', (c) => { out += c })
    child.stderr.on('data', (c) => { out += c })
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
      if (code !== 0 || line === undefined) return reject(new Error(`wrk failed (${code}): ${out}`))
      const r = JSON.parse(line.slice('BENCH_JSON '.length))
      const errors = r.connectErrors + r.readErrors + r.writeErrors + r.statusErrors + r.timeouts
      if (errors > 0) return reject(new Error(`wrk saw ${errors} errors: ${line}`))
      resolve({ ...r, rps: r.requests / (r.durationUs / 1e6) })
    })
  })
}

async function measure (server, scenario, round) {
  const proc = await startServer(server)
  try {
    const cookie = await checkAnswers(proc)
    const headers = scenario.name === 'signed-in' ? { cookie } : {}
    const warm = await wrk(proc.port, { duration: WARMUP, headers })
    const load = loadavg()[0]
    const before = procSample(proc.pid)
    const busy0 = machineBusySeconds()
    const r = await wrk(proc.port, { duration: DURATION, headers })
    const busy1 = machineBusySeconds()
    const after = procSample(proc.pid)
    await checkAnswers(proc)
    let warnings
    if (server.warns && scenario.name === 'anonymous') {
      // One warning per anonymous request: the check requests, the warm-up, the measured run, and
      // at most one per connection still in flight when wrk stopped.
      const served = warm.requests + r.requests + 4
      warnings = (await serverStats(proc)).warnings
      if (warnings < served || warnings > served + 2 * CONNECTIONS + 4) throw new Error(`${server.name}: ${warnings} warnings raised for ${served} anonymous requests`)
    }
    if (server.sessions && scenario.name === 'anonymous') {
      const { sessions } = await serverStats(proc)
      if (sessions !== proc.signIns) throw new Error(`${server.name}: ${sessions} sessions after the anonymous run, expected the ${proc.signIns} sign-ins of the checks`)
    }
    const rec = {
      round,
      scenario: scenario.name,
      server: server.name,
      rps: r.rps,
      cpuUsPerReq: (after.cpuSeconds - before.cpuSeconds) * 1e6 / r.requests,
      p50Ms: r.p50Us / 1000,
      p99Ms: r.p99Us / 1000,
      peakRssMiB: after.hwmMiB,
      requests: r.requests,
      warnings,
      load1: load,
      // CPU used by everything but the server (wrk itself, and other people's work), in cores.
      otherCores: (busy1 - busy0 - (after.cpuSeconds - before.cpuSeconds)) / (r.durationUs / 1e6)
    }
    if (server.warns) rec.warningsInOutput = await stopAndAccount(proc, (await serverStats(proc)).warnings, `${scenario.name}, round ${round}`)
    log(`round ${round} ${scenario.name.padEnd(9)} ${server.name.padEnd(9)} ${fmt(rec.rps, 0).padStart(7)} req/s  ${fmt(rec.cpuUsPerReq, 1).padStart(6)} µs CPU/req  p99 ${fmt(rec.p99Ms, 2)} ms  peak RSS ${fmt(rec.peakRssMiB, 1)} MiB  load ${fmt(load, 2)}  others ${fmt(rec.otherCores, 2)} cores`)
    return rec
  } finally {
    await stopServer(proc)
  }
}

// ---------------------------------------------------------------------------------------------------
// Memory: a flood of anonymous requests

async function memoryRun (server) {
  const proc = await startServer(server)
  try {
    await checkAnswers(proc)
    // The first 10,000 with the same tool and concurrency as the rest of the flood.
    const first = (await wrk(proc.port, { duration: 5, maxRequests: 10_000 })).requests
    await sleep(200)
    const afterFirst = procSample(proc.pid)
    const heapAfterFirst = server.warns ? await serverStats(proc) : {}
    let total = first + 4 // and the checks' anonymous requests
    let maxRss = afterFirst.rssMiB
    const samples = []
    const sampler = setInterval(() => {
      const s = procSample(proc.pid)
      maxRss = Math.max(maxRss, s.rssMiB)
      samples.push(s.rssMiB)
    }, 500)
    while (total < MEMORY_REQUESTS) {
      const r = await wrk(proc.port, { duration: Math.min(10, Math.max(1, Math.ceil((MEMORY_REQUESTS - total) / 30_000))) })
      total += r.requests
    }
    clearInterval(sampler)
    const end = procSample(proc.pid)
    const heapEnd = server.warns ? await serverStats(proc) : {}
    const sessions = server.sessions ? (await serverStats(proc)).sessions : proc.signIns ?? 0
    // Raised (counted by a 'warning' listener in the server), then found in its output after it closed.
    const warnings = server.warns ? (await serverStats(proc)).warnings : undefined
    const warningsInOutput = server.warns ? await stopAndAccount(proc, warnings, 'flood') : undefined
    const rec = {
      server: server.name,
      requests: total,
      warnings,
      warningsInOutput,
      sessionsInStore: sessions - proc.signIns, // the checks' sign-ins
      rssAfter10kMiB: afterFirst.rssMiB,
      hwmAfter10kMiB: afterFirst.hwmMiB,
      maxSampledRssMiB: maxRss,
      peakRssMiB: end.hwmMiB,
      finalRssMiB: end.rssMiB,
      growthMiB: end.hwmMiB - afterFirst.rssMiB,
      heapAfter10k: { used: heapAfterFirst.heapUsedMiB, total: heapAfterFirst.heapTotalMiB, external: heapAfterFirst.externalMiB },
      heapEnd: { used: heapEnd.heapUsedMiB, total: heapEnd.heapTotalMiB, external: heapEnd.externalMiB }
    }
    log('memory', JSON.stringify(rec))
    if (rec.sessionsInStore !== 0) throw new Error(`memory: ${rec.sessionsInStore} sessions left in the store`)
    if (server.warns && !(warnings >= total)) throw new Error(`memory: ${warnings} warnings for ${total} requests`)
    return rec
  } finally {
    await stopServer(proc)
  }
}

// ---------------------------------------------------------------------------------------------------
// Login: cost per login, and the event loop while logins run

async function loginRun () {
  const server = SERVERS.find((s) => s.name === 'ours')
  // Not pinned: the hashes run on libuv's thread pool, which is meant to use the other cores; pinned to
  // the event loop's own core they would only measure CPU sharing.
  const proc = await startServer(server, {}, { pinToCore: false })
  try {
    await checkAnswers(proc)
    const n = quick ? 5 : 20
    const before = procSample(proc.pid)
    const latencies = []
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint()
      await signIn(proc.port)
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
    }
    const after = procSample(proc.pid)
    const seconds = quick ? 2 : 5
    // A probe: one anonymous request at a time on a kept-alive connection, so its latency shows how
    // long the event loop makes a request wait (a saturating load would measure queueing instead).
    async function probe () {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 })
      const latencies = []
      const end = Date.now() + seconds * 1000
      while (Date.now() < end) {
        const t0 = process.hrtime.bigint()
        const res = await http(proc.port, { agent })
        if (res.status !== 302) throw new Error(`probe: ${res.status}`)
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
      }
      agent.destroy()
      latencies.sort((a, b) => a - b)
      return { count: latencies.length, p50Ms: latencies[latencies.length >> 1], p99Ms: latencies[Math.floor(latencies.length * 0.99)], maxMs: latencies[latencies.length - 1] }
    }
    await serverStats(proc) // resets the server's event-loop delay histogram
    const baseline = await probe()
    const eldBaseline = await serverStats(proc)
    let logins = 0
    let stop = false
    const loops = Array.from({ length: 4 }, async () => {
      while (!stop) { await signIn(proc.port); logins++ }
    })
    await sleep(100)
    await serverStats(proc)
    const during = await probe()
    const eldDuring = await serverStats(proc)
    stop = true
    await Promise.all(loops)
    const rec = {
      loginsTimed: n,
      loginMedianMs: median(latencies),
      loginCpuMsPerLogin: (after.cpuSeconds - before.cpuSeconds) * 1000 / n,
      concurrentLogins: 4,
      loginsDuringProbe: logins,
      loginsPerSecondDuringProbe: logins / (seconds + 0.1),
      probeBaseline: baseline,
      probeDuringLogins: during,
      eventLoopDelayP99MsBaseline: eldBaseline.eldP99Ms,
      eventLoopDelayMaxMsBaseline: eldBaseline.eldMaxMs,
      eventLoopDelayP99MsDuringLogins: eldDuring.eldP99Ms,
      eventLoopDelayMaxMsDuringLogins: eldDuring.eldMaxMs
    }
    log('login', JSON.stringify(rec))
    return rec
  } finally {
    await stopServer(proc)
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}
function fmt (x, digits) {
  return x === undefined || Number.isNaN(x) ? 'n/a' : x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

function summarise (records) {
  const rows = []
  for (const scenario of SCENARIOS) {
    for (const server of SERVERS) {
      const mine = records.filter((r) => r.scenario === scenario.name && r.server === server.name)
      if (mine.length === 0) continue
      // Ratios are taken within a round (same conditions), then the median over rounds.
      const ratioTo = (peer) => {
        const ratios = mine.map((r) => {
          const other = records.find((o) => o.round === r.round && o.scenario === r.scenario && o.server === peer)
          return other === undefined ? NaN : r.rps / other.rps
        }).filter((x) => !Number.isNaN(x))
        return ratios.length === 0 ? undefined : median(ratios)
      }
      // Capacity if the server's core were saturated: the limit's CPU per request over ours, per round.
      const cpuRatios = mine.map((r) => {
        const other = records.find((o) => o.round === r.round && o.scenario === r.scenario && o.server === 'limit')
        return other === undefined ? NaN : other.cpuUsPerReq / r.cpuUsPerReq
      }).filter((x) => !Number.isNaN(x))
      const cpuVsExpress = mine.map((r) => {
        const other = records.find((o) => o.round === r.round && o.scenario === r.scenario && o.server === 'express')
        return other === undefined ? NaN : other.cpuUsPerReq / r.cpuUsPerReq
      }).filter((x) => !Number.isNaN(x))
      rows.push({
        scenario: scenario.name,
        vsExpressCpu: cpuVsExpress.length === 0 ? undefined : median(cpuVsExpress),
        vsLimitCpu: cpuRatios.length === 0 ? undefined : median(cpuRatios),
        server: server.name,
        rounds: mine.length,
        rps: median(mine.map((r) => r.rps)),
        cpuUsPerReq: median(mine.map((r) => r.cpuUsPerReq)),
        p99Ms: median(mine.map((r) => r.p99Ms)),
        peakRssMiB: median(mine.map((r) => r.peakRssMiB)),
        vsLimit: ratioTo('limit'),
        vsExpress: ratioTo('express'),
        rpsPerRound: mine.map((r) => Math.round(r.rps))
      })
    }
  }
  return rows
}

function markdown (meta, rows, memory, login) {
  const label = (name) => SERVERS.find((s) => s.name === name)?.label ?? name
  const lines = []
  lines.push(`Run ${meta.date} on ${meta.machine}; ${meta.pinning}. ${meta.rounds} interleaved rounds, ${meta.duration} s measured per server and scenario after a ${meta.warmup} s warm-up, wrk -t1 -c${meta.connections}. Load average (1 min) at the start of each measured run: ${meta.loadRange}; CPU used by everything but the measured server during a run (wrk plus other people's work on this shared machine): ${meta.otherCoresRange} cores. Our server runs as \`npm start\` runs it (\`node ${meta.startFlags}\`) and logs at \`${meta.oursLogLevel}\`, the Fastify peers at \`warn\`; every server's stdout and stderr go to files, in which the runner finds every redirect-conflict warning the server raised. Medians over the rounds; ratios are per round (same conditions), then the median. "× limit (CPU/req)" is the limit's server CPU per request divided by the server's: the throughput ratio the servers would reach with their core to themselves, less sensitive to other work on the machine than req/s.`)
  lines.push('')
  for (const scenario of SCENARIOS) {
    lines.push(`**${scenario.label}**`)
    lines.push('')
    lines.push('| server | req/s | CPU µs/req | p99 ms | peak RSS MiB | × limit (req/s) | × limit (CPU/req) | × Express (req/s) | × Express (CPU/req) | req/s per round |')
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|')
    for (const r of rows.filter((x) => x.scenario === scenario.name)) {
      lines.push(`| ${label(r.server)} | ${fmt(r.rps, 0)} | ${fmt(r.cpuUsPerReq, 1)} | ${fmt(r.p99Ms, 2)} | ${fmt(r.peakRssMiB, 1)} | ${fmt(r.vsLimit, 2)} | ${fmt(r.vsLimitCpu, 2)} | ${fmt(r.vsExpress, 2)} | ${fmt(r.vsExpressCpu, 2)} | ${r.rpsPerRound.join(', ')} |`)
    }
    lines.push('')
  }
  for (const m of memory ?? []) {
    const who = m.server === 'ours' ? 'our example server' : `${label(m.server)} for comparison`
    const extra = m.server === 'ours' ? `, ${fmt(m.warnings, 0)} redirect-conflict warnings raised, all ${fmt(m.warningsInOutput, 0)} accounted for in the log (the first in full, then a count a minute), **${m.sessionsInStore} sessions** left in the store` : ''
    lines.push(`**Anonymous flood**, ${who} (one process, wrk -c${meta.connections}): ${fmt(m.requests, 0)} anonymous requests${extra}. RSS after the first 10,000: ${fmt(m.rssAfter10kMiB, 1)} MiB; peak RSS (VmHWM) at the end: ${fmt(m.peakRssMiB, 1)} MiB (**+${fmt(m.growthMiB, 1)} MiB**); RSS at the end ${fmt(m.finalRssMiB, 1)} MiB.`)
    lines.push('')
  }
  if (login !== undefined) {
    lines.push(`**Login** (scrypt N=16384, r=8, p=1, on libuv's thread pool): ${fmt(login.loginMedianMs, 1)} ms per login (median of ${login.loginsTimed}, one at a time), ${fmt(login.loginCpuMsPerLogin, 1)} ms of server CPU per login. Event loop while logins run: with ${login.concurrentLogins} clients signing in continuously (${fmt(login.loginsPerSecondDuringProbe, 1)} logins/s; server not pinned for this part), a probe sending one anonymous request at a time got ${fmt(login.probeDuringLogins.count, 0)} answers, p50 ${fmt(login.probeDuringLogins.p50Ms, 2)} ms, p99 ${fmt(login.probeDuringLogins.p99Ms, 2)} ms, max ${fmt(login.probeDuringLogins.maxMs, 1)} ms (without logins: ${fmt(login.probeBaseline.count, 0)} answers, p50 ${fmt(login.probeBaseline.p50Ms, 2)} ms, p99 ${fmt(login.probeBaseline.p99Ms, 2)} ms, max ${fmt(login.probeBaseline.maxMs, 1)} ms); server event-loop delay (monitorEventLoopDelay at 1 ms resolution, so 1 ms is the floor) p99 ${fmt(login.eventLoopDelayP99MsDuringLogins, 1)} ms, max ${fmt(login.eventLoopDelayMaxMsDuringLogins, 1)} ms (without logins ${fmt(login.eventLoopDelayP99MsBaseline, 1)} / ${fmt(login.eventLoopDelayMaxMsBaseline, 1)} ms). A hash computed on the event loop would stall every request for the whole ${fmt(login.loginCpuMsPerLogin, 0)} ms.`)
  }
  return lines.join('\n')
}

function svgChart (meta, rows) {
  const W = 860
  const left = 60
  const top = 60
  const plotH = 190
  const colors = { limit: '#4d4d4d', reference: '#5b8bd9', express: '#d98b5b', ours: '#3a9a5b' }
  const color = (name) => colors[name] ?? '#9ac9a8'
  // The servers in the run, in table order, laid out in legend rows that fit the width.
  const shown = SERVERS.filter((s) => rows.some((r) => r.server === s.name))
  const legend = []
  let lx = 20
  let row = 0
  for (const s of shown) {
    const width = 30 + s.label.length * 6
    if (lx + width > W - 10) { lx = 20; row++ }
    legend.push({ s, x: lx, row })
    lx += width
  }
  const H = top + plotH + 40 + (row + 1) * 18
  const max = Math.max(1, ...rows.map((r) => Math.max(r.vsLimit ?? 0, r.vsLimitCpu ?? 0)))
  const y = (v) => top + plotH - (v / max) * plotH
  const groupW = (W - left - 20) / SCENARIOS.length
  const barW = Math.min(48, (groupW - 80) / Math.max(1, shown.length))
  const parts = []
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`)
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`)
  parts.push(`<text x="${left}" y="18" font-size="14" font-weight="bold">Against bare Fastify: bars = capacity from server CPU per request, ticks = measured req/s</text>`)
  parts.push(`<text x="${left}" y="34" fill="#555">${meta.date}, ${escapeXml(meta.machineShort)}; medians of per-round ratios</text>`)
  for (const v of [0, 0.25, 0.5, 0.75, 1].filter((t) => t <= max)) {
    parts.push(`<line x1="${left}" x2="${W - 20}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}×</text>`)
  }
  const targets = { anonymous: 0.85, 'signed-in': 0.45 }
  SCENARIOS.forEach((scenario, g) => {
    const x0 = left + g * groupW + 20
    const mine = rows.filter((r) => r.scenario === scenario.name)
    mine.forEach((r, i) => {
      const x = x0 + i * (barW + 6)
      const v = r.vsLimitCpu ?? 0
      const t = r.vsLimit ?? 0
      parts.push(`<rect x="${x}" y="${y(v)}" width="${barW}" height="${top + plotH - y(v)}" fill="${color(r.server)}"><title>${r.server}: ${v.toFixed(2)}× by CPU per request, ${t.toFixed(2)}× by req/s (${Math.round(r.rps)} req/s)</title></rect>`)
      parts.push(`<text x="${x + barW / 2}" y="${top + plotH - 4}" text-anchor="middle" fill="#fff" font-weight="bold">${v.toFixed(2)}</text>`)
      parts.push(`<line x1="${x - 2}" x2="${x + barW + 2}" y1="${y(t)}" y2="${y(t)}" stroke="#000" stroke-width="2"/><text x="${x + barW / 2}" y="${y(t) - 4}" text-anchor="middle" font-size="10">${t.toFixed(2)}</text>`)
    })
    const tx1 = x0 - 6
    const tx2 = x0 + mine.length * (barW + 6)
    parts.push(`<line x1="${tx1}" x2="${tx2}" y1="${y(targets[scenario.name])}" y2="${y(targets[scenario.name])}" stroke="#c00" stroke-dasharray="4 3"/>`)
    parts.push(`<text x="${tx2 + 2}" y="${y(targets[scenario.name]) + 4}" fill="#c00" font-size="10">target ${targets[scenario.name]}</text>`)
    parts.push(`<text x="${x0 + (mine.length * (barW + 6)) / 2}" y="${top + plotH + 18}" text-anchor="middle">${escapeXml(scenario.label)}</text>`)
  })
  for (const { s, x, row: r } of legend) {
    const ly = top + plotH + 34 + r * 18
    parts.push(`<rect x="${x}" y="${ly}" width="12" height="12" fill="${color(s.name)}"/><text x="${x + 16}" y="${ly + 10}" font-size="11">${escapeXml(s.label)}</text>`)
  }
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}

function escapeXml (s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

// ---------------------------------------------------------------------------------------------------

/** --from-json bench/results/results.json: renders the Markdown, chart and README section again from a saved run. */
function renderOnly (path) {
  const saved = JSON.parse(readFileSync(path, 'utf8'))
  return { ...saved, rows: summarise(saved.records) }
}

function writeOutputs ({ meta, rows, records, memory, login }) {
  const md = markdown(meta, rows, memory, login)
  mkdirSync(OUT, { recursive: true })
  // --name before-after: bench/results/before-after.{md,json,svg} instead of results.*
  const suffix = value('name', undefined) === undefined ? (quick ? '-quick' : '') : ''
  const base = value('name', 'results')
  writeFileSync(join(OUT, `${base}${suffix}.json`), JSON.stringify({ meta, rows, records, memory, login }, null, 2) + '\n')
  writeFileSync(join(OUT, `${base}${suffix}.md`), md + '\n')
  if (rows.length > 0) writeFileSync(join(OUT, `${base === 'results' ? 'chart' : `${base}-chart`}${suffix}.svg`), svgChart(meta, rows))
  if (flag('readme') && !quick) {
    const readmePath = join(root, 'README.md')
    const readme = readFileSync(readmePath, 'utf8')
    const start = '<!-- bench:start -->'
    const end = '<!-- bench:end -->'
    const i = readme.indexOf(start)
    const j = readme.indexOf(end)
    if (i !== -1 && j > i) writeFileSync(readmePath, readme.slice(0, i + start.length) + '\n' + md + '\n' + readme.slice(j))
  }
  return md
}

async function main () {
  if (value('from-json', undefined) !== undefined) {
    console.log(writeOutputs(renderOnly(value('from-json'))))
    return
  }
  const started = new Date()
  const cpuModel = cpus()[0]?.model ?? 'unknown CPU'
  const machine = `${nCpu} × ${cpuModel}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, wrk ${wrkVersion.stdout.split(' ')[1] ?? ''}`.trim()
  log(`machine: ${machine}; ${pinned ? `servers pinned to CPU ${SERVER_CPU}, wrk and this runner to CPU ${LOAD_CPU}` : 'no pinning'}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`)
  const records = []
  if (!SKIP.has('throughput')) {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        // Rotate the order each round so that no server always runs first or last.
        const order = SERVERS.map((_, i) => SERVERS[(i + round - 1) % SERVERS.length])
        for (const server of order) records.push(await measure(server, scenario, round))
      }
    }
  }
  // The flood runs against our server and, for comparison, against the limit (same tool, same counts).
  const memory = []
  if (!SKIP.has('memory')) {
    for (const name of ['ours', 'limit']) {
      const server = SERVERS.find((s) => s.name === name)
      if (server !== undefined) memory.push(await memoryRun(server))
    }
  }
  const login = SKIP.has('login') || !SERVERS.some((s) => s.name === 'ours') ? undefined : await loginRun()
  const loads = records.map((r) => r.load1)
  const others = records.map((r) => r.otherCores)
  const meta = {
    date: started.toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    machine,
    machineShort: `${nCpu} × ${cpuModel}, Node ${process.version}`,
    pinning: pinned ? `servers pinned to CPU ${SERVER_CPU} and wrk to CPU ${LOAD_CPU} with taskset` : 'no CPU pinning (fewer than 2 CPUs or no taskset)',
    rounds: ROUNDS,
    duration: DURATION,
    warmup: WARMUP,
    connections: CONNECTIONS,
    oursLogLevel: OURS_LOG_LEVEL,
    startFlags: START_FLAGS.join(' '),
    loadRange: loads.length === 0 ? 'n/a' : `${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`,
    otherCoresRange: others.length === 0 ? 'n/a' : `${Math.min(...others).toFixed(2)}–${Math.max(...others).toFixed(2)} (median ${median(others).toFixed(2)})`,
    command: `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`
  }
  const rows = summarise(records)
  const md = writeOutputs({ meta, rows, records, memory, login })
  console.log('\n' + md)
  log(`done in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s; results in bench/results/`)
}

main().then(() => rmSync(tmp, { recursive: true, force: true }), (err) => {
  console.error(`bench: ${err.stack ?? err}`)
  rmSync(tmp, { recursive: true, force: true })
  process.exit(1)
})
