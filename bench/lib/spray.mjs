// The password spray (issue 19): wrong passwords for many usernames from many addresses, as fast as the
// attackers' connections allow, while a member downloads a protected file and real members sign in.
// Every address is on loopback (127.0.0.0/8, chosen with localAddress); nothing leaves the machine.
import { Agent } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'
import { checkAnswers, http as send } from './checks.mjs'
import { BASE_URL } from './servers.mjs'
import { loadavg } from 'node:os'
import { machineBusySeconds, pinRunner, processSample, serverStats, startServer, stopServer, unpinRunner } from './processes.mjs'
import { log } from './format.mjs'

// The demo's PDF (examples/demo-catalog.ts): files/<category>/<resource id>/<file name>.
const DOWNLOAD = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'
const CREDENTIALS = 'email=teacher%40example.org&password=correct+horse+battery+staple'

/** The login form's CSRF token and cookies, as a browser at `localAddress` gets them. */
async function loginForm (port, localAddress) {
  const form = await send(port, { path: '/Security/login', localAddress })
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1]
  if (token === undefined) throw new Error(`spray: no CSRF token in the login form (${form.status})`)
  return { token, cookie: (form.headers['set-cookie'] ?? []).map((c) => c.split(';', 1)[0]).join('; ') }
}

/** The answer, or `{ status: 'error' }` when the server dropped the connection (a request timed out there). */
function attempt (port, options) {
  return send(port, options).catch((err) => ({ status: `error (${err.code ?? err.message})`, headers: {}, body: '' }))
}

function percentiles (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted[sorted.length - 1] }
}

function countOf (statuses) {
  const counts = {}
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1
  return counts
}

/**
 * A member's download, one at a time on a kept-alive connection, until `stop` is aborted: the latency a
 * member sees (the file is read through libuv's thread pool, which the hashes share).
 */
async function downloads (port, cookie, stop) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const latencies = []
  const statuses = []
  try {
    while (!stop.aborted) {
      const t0 = process.hrtime.bigint()
      const res = await attempt(port, { path: DOWNLOAD, headers: { cookie }, agent })
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
      if (typeof res.status === 'number' && (res.status !== 200 || res.headers['content-type'] !== 'application/pdf')) throw new Error(`spray: the member's download answered ${res.status} ${res.headers['content-type']}`)
      statuses.push(res.status)
      await sleep(20)
    }
  } finally {
    agent.destroy()
  }
  return { ...percentiles(latencies), statuses: countOf(statuses) }
}

/** Real sign-ins with the right password, each from an address of its own (127.0.1.x), one every ~250 ms. */
async function realSignIns (port, stop, firstHost) {
  const latencies = []
  const statuses = []
  let host = firstHost
  while (!stop.aborted) {
    const localAddress = `127.0.1.${host++ % 250 + 1}`
    const t0 = process.hrtime.bigint()
    const form = await loginForm(port, localAddress).catch(() => undefined)
    const res = form === undefined
      ? { status: 'error (login form)' }
      : await attempt(port, {
        method: 'POST',
        path: '/Security/login',
        localAddress,
        headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https', 'x-bench-probe': '1' },
        body: `${CREDENTIALS}&_csrf=${encodeURIComponent(form.token)}`
      })
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
    statuses.push(res.status)
    await sleep(250)
  }
  return { ...percentiles(latencies), statuses: countOf(statuses), next: host }
}

/**
 * `attempts` wrong passwords over `usernames` usernames from `addresses` addresses (127.0.0.10 on),
 * `perAddress` connections each, every address with its own login form (the CSRF check passes: a spray
 * that fails it costs nothing). Resolves to the statuses and the time it took.
 */
async function spray (port, { attempts, usernames, addresses, perAddress }) {
  const forms = await Promise.all(Array.from({ length: addresses }, (_, i) => loginForm(port, `127.0.0.${10 + i}`)))
  let next = 0
  const statuses = []
  const t0 = Date.now()
  const worker = async (a) => {
    const localAddress = `127.0.0.${10 + a}`
    const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress })
    try {
      while (next < attempts) {
        const i = next++
        const body = `email=${encodeURIComponent(`user${i % usernames}@example.org`)}&password=wrong-${i}&_csrf=${encodeURIComponent(forms[a].token)}`
        const res = await attempt(port, { method: 'POST', path: '/Security/login', agent, localAddress, headers: { cookie: forms[a].cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' }, body })
        statuses.push(res.status)
      }
    } finally {
      agent.destroy()
    }
  }
  await Promise.all(Array.from({ length: addresses * perAddress }, (_, w) => worker(w % addresses)))
  const seconds = (Date.now() - t0) / 1000
  return { attempts: statuses.length, seconds, perSecond: statuses.length / seconds, statuses: countOf(statuses) }
}

function inWorker (port, shape) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { port, shape } })
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`spray: the worker exited (${code})`)))
  })
}

if (!isMainThread && workerData?.shape !== undefined) {
  parentPort.postMessage(await spray(workerData.port, workerData.shape))
}

/**
 * Our server with the example's own sign-in limits (OURS_LIMITS=example; the other scenarios turn the
 * per-address limit off): a quiet baseline of downloads and real sign-ins, then the same during the spray.
 */
export async function sprayProbe (server, settings) {
  // --spray-waiting: the line's length for this run (the example keeps the section's default otherwise).
  const waiting = settings.sprayWaiting === undefined ? {} : { OURS_PASSWORD_WAITING: String(settings.sprayWaiting) }
  const proc = await startServer(server, { pinToCore: false, env: { BASE_URL, LOG_LEVEL: 'warn', OURS_LIMITS: 'example', OURS_MEASURE_LOOP: '1', ...waiting } })
  const perAddress = settings.sprayConnections
  const shape = settings.quick
    ? { attempts: 1000, usernames: 100, addresses: 10, perAddress }
    : { attempts: 5000, usernames: 500, addresses: 50, perAddress }
  // Nothing pinned: the server's hashes use the thread pool's cores, and the spray's worker thread must
  // not share one core with the probes' clocks.
  unpinRunner()
  try {
    const cookie = await checkAnswers(proc)
    const quiet = new AbortController()
    setTimeout(() => quiet.abort(), settings.quick ? 2000 : 5000)
    const [baselineDownload, baselineSignIn] = await Promise.all([downloads(proc.port, cookie, quiet.signal), realSignIns(proc.port, quiet.signal, 0)])
    // Resets the server's event-loop delay histogram: what it reports next is the spray's.
    await serverStats(proc)
    const during = new AbortController()
    // The spray has a thread of its own, so that its callbacks do not delay the probes' clocks.
    const clientCpu0 = process.cpuUsage()
    const serverCpu0 = processSample(proc.pid).cpuSeconds
    const machine0 = machineBusySeconds()
    const t0 = process.hrtime.bigint()
    const sprayed = inWorker(proc.port, shape).finally(() => during.abort())
    const [download, signIn, attack] = await Promise.all([downloads(proc.port, cookie, during.signal), realSignIns(proc.port, during.signal, baselineSignIn.next), sprayed])
    const wallS = Number(process.hrtime.bigint() - t0) / 1e9
    const clientCpu = process.cpuUsage(clientCpu0)
    // Cores used during the spray: the bench's own process (the spray's worker and the probes) and the server.
    const cores = { client: (clientCpu.user + clientCpu.system) / 1e6 / wallS, server: (processSample(proc.pid).cpuSeconds - serverCpu0) / wallS }
    // Everything else on the machine (other people's work) during the spray.
    cores.others = (machineBusySeconds() - machine0) / wallS - cores.client - cores.server
    const { eldP99Ms, eldMaxMs, serverDownload, serverSignIn } = await serverStats(proc)
    delete baselineSignIn.next
    delete signIn.next
    const rec = { server: server.name, shape, passwordWaiting: settings.sprayWaiting ?? 'default', baseline: { download: baselineDownload, signIn: baselineSignIn }, spray: attack, download, signIn, eventLoopDelayMs: { p99: eldP99Ms, max: eldMaxMs }, serverSide: { download: serverDownload, signIn: serverSignIn }, cores, loadAverage: loadavg()[0] }
    log('spray', JSON.stringify(rec))
    return rec
  } finally {
    pinRunner()
    await stopServer(proc)
  }
}
