// What the bench does with the servers: interleaved rounds of load per scenario, the anonymous flood
// (memory), and the login probe (scrypt's cost and the event loop while it runs).
import { loadavg } from 'node:os'
import { Agent } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { ANONYMOUS_REQUESTS_PER_CHECK, checkAnswers, checkSessions, checkWarningsRaised, http, signIn, stopAndAccount } from './checks.mjs'
import { BASE_URL, logLevelOf, runsIn } from './servers.mjs'
import { machineBusySeconds, processSample, serverStats, startServer, stopServer } from './processes.mjs'
import { wrk } from './wrk.mjs'
import { median } from './stats.mjs'
import { fmt, log } from './format.mjs'

export const SCENARIOS = [
  { name: 'anonymous', label: 'anonymous → 302 login redirect' },
  { name: 'signed-in', label: 'signed in → 200 category page' }
]

function start (server, settings, { env = {}, ...options } = {}) {
  return startServer(server, { ...options, env: { BASE_URL, LOG_LEVEL: logLevelOf(server, settings.logLevel), ...env } })
}

/**
 * Every server measured in every scenario it runs in, `settings.rounds` times, each time in a fresh
 * process; the order rotates each round so that no server always runs first or last.
 */
export async function runRounds (servers, scenarios, settings) {
  const records = []
  for (let round = 1; round <= settings.rounds; round++) {
    for (const scenario of scenarios) {
      const mine = servers.filter((s) => runsIn(s, scenario))
      const order = mine.map((_, i) => mine[(i + round - 1) % mine.length])
      for (const server of order) records.push(await measure(server, scenario, round, settings))
    }
  }
  return records
}

/** One fresh process: checks, warm-up, the measured run with CPU time from /proc, checks again. */
async function measure (server, scenario, round, settings) {
  const { duration, warmup, connections } = settings
  const proc = await start(server, settings)
  try {
    // Resident memory once started and idle, before any request (what a host pays per process).
    await sleep(200)
    const rssAfterStartMiB = processSample(proc.pid).rssMiB
    const cookie = await checkAnswers(proc)
    const headers = scenario.name === 'signed-in' ? { cookie } : {}
    const warm = await wrk(proc.port, { duration: warmup, connections, headers })
    const load1 = loadavg()[0]
    const before = processSample(proc.pid)
    const busyBefore = machineBusySeconds()
    const r = await wrk(proc.port, { duration, connections, headers })
    const busyAfter = machineBusySeconds()
    const after = processSample(proc.pid)
    await checkAnswers(proc)
    const cpuSeconds = after.cpuSeconds - before.cpuSeconds
    const rec = {
      round,
      scenario: scenario.name,
      server: server.name,
      rps: r.rps,
      cpuUsPerReq: cpuSeconds * 1e6 / r.requests,
      p50Ms: r.p50Us / 1000,
      p99Ms: r.p99Us / 1000,
      peakRssMiB: after.hwmMiB,
      rssAfterStartMiB,
      bytesPerResponse: r.bytesPerResponse,
      requests: r.requests,
      load1,
      // CPU used by everything but the server (wrk itself, and other people's work), in cores.
      otherCores: (busyAfter - busyBefore - cpuSeconds) / (r.durationUs / 1e6)
    }
    if (server.warns && scenario.name === 'anonymous') {
      rec.warnings = await checkWarningsRaised(proc, { served: warm.requests + r.requests + 2 * ANONYMOUS_REQUESTS_PER_CHECK, wrkRuns: 2, connections })
    }
    if (server.sessions && scenario.name === 'anonymous') await checkSessions(proc, 'after the anonymous run')
    if (server.warns) rec.warningsInOutput = await stopAndAccount(proc, `${scenario.name}, round ${round}`)
    log(`round ${round} ${scenario.name.padEnd(9)} ${server.name.padEnd(15)} ${fmt(rec.rps, 0).padStart(7)} req/s  ${fmt(rec.cpuUsPerReq, 1).padStart(6)} µs CPU/req  p99 ${fmt(rec.p99Ms, 2)} ms  peak RSS ${fmt(rec.peakRssMiB, 1)} MiB  load ${fmt(load1, 2)}  others ${fmt(rec.otherCores, 2)} cores`)
    return rec
  } finally {
    await stopServer(proc)
  }
}

/**
 * A flood of `settings.memoryRequests` anonymous requests against one process: the store must stay
 * empty, every warning must be raised and accounted for, and RSS is followed from /proc.
 */
export async function memoryFlood (server, settings) {
  const { connections, memoryRequests } = settings
  const proc = await start(server, settings)
  try {
    await checkAnswers(proc)
    // The first 10,000 with the same tool and concurrency as the rest of the flood.
    const first = (await wrk(proc.port, { duration: 5, connections, maxRequests: 10_000 })).requests
    await sleep(200)
    const afterFirst = processSample(proc.pid)
    const heapAfterFirst = server.warns ? await serverStats(proc) : {}
    let total = first + ANONYMOUS_REQUESTS_PER_CHECK
    let maxRss = afterFirst.rssMiB
    const sampler = setInterval(() => { maxRss = Math.max(maxRss, processSample(proc.pid).rssMiB) }, 500)
    try {
      while (total < memoryRequests) {
        // Runs of at most 10 s, shorter near the end (sized for 30,000 requests a second), so that the
        // flood stops near its count.
        const seconds = Math.min(10, Math.max(1, Math.ceil((memoryRequests - total) / 30_000)))
        total += (await wrk(proc.port, { duration: seconds, connections })).requests
      }
    } finally {
      clearInterval(sampler)
    }
    const end = processSample(proc.pid)
    const stats = server.sessions || server.warns ? await serverStats(proc) : {}
    const rec = {
      server: server.name,
      requests: total,
      // Raised (counted by a 'warning' listener in the server), then found in its output after it closed.
      warnings: stats.warnings,
      warningsInOutput: server.warns ? await stopAndAccount(proc, 'flood') : undefined,
      sessionsInStore: server.sessions ? stats.sessions - proc.signIns : 0,
      rssAfter10kMiB: afterFirst.rssMiB,
      hwmAfter10kMiB: afterFirst.hwmMiB,
      maxSampledRssMiB: maxRss,
      peakRssMiB: end.hwmMiB,
      finalRssMiB: end.rssMiB,
      growthMiB: end.hwmMiB - afterFirst.rssMiB,
      heapAfter10k: { used: heapAfterFirst.heapUsedMiB, total: heapAfterFirst.heapTotalMiB, external: heapAfterFirst.externalMiB },
      heapEnd: { used: stats.heapUsedMiB, total: stats.heapTotalMiB, external: stats.externalMiB }
    }
    log('memory', JSON.stringify(rec))
    if (rec.sessionsInStore !== 0) throw new Error(`memory: ${rec.sessionsInStore} sessions left in the store`)
    if (server.warns && !(rec.warnings >= total)) throw new Error(`memory: ${rec.warnings} warnings for ${total} requests`)
    return rec
  } finally {
    await stopServer(proc)
  }
}

/**
 * Sign-in's cost (scrypt) one login at a time, then a probe sending one anonymous request at a time,
 * without and with 4 clients signing in continuously: whether the hashes hold up the event loop.
 */
export async function loginProbe (server, settings) {
  // Not pinned: the hashes run on libuv's thread pool, which is meant to use the other cores; pinned to
  // the event loop's own core they would only measure CPU sharing.
  const proc = await start(server, settings, { pinToCore: false, env: { OURS_MEASURE_LOOP: '1' } })
  try {
    await checkAnswers(proc)
    const n = settings.quick ? 5 : 20
    const before = processSample(proc.pid)
    const latencies = []
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint()
      await signIn(proc.port, server, { landing: false })
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
    }
    const after = processSample(proc.pid)
    const seconds = settings.quick ? 2 : 5
    await serverStats(proc) // resets the server's event-loop delay histogram
    const baseline = await probe(proc.port, seconds)
    const eldBaseline = await serverStats(proc)
    let logins = 0
    const stop = new AbortController()
    const loops = Array.from({ length: 4 }, async () => {
      while (!stop.signal.aborted) {
        await signIn(proc.port, server, { landing: false })
        logins++
      }
    })
    await sleep(100)
    await serverStats(proc)
    const during = await probe(proc.port, seconds)
    const eldDuring = await serverStats(proc)
    stop.abort()
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

/**
 * One anonymous request at a time on a kept-alive connection for `seconds`: its latency shows how long
 * the event loop makes a request wait (a saturating load would measure queueing instead).
 */
async function probe (port, seconds) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const latencies = []
  const end = Date.now() + seconds * 1000
  try {
    while (Date.now() < end) {
      const t0 = process.hrtime.bigint()
      const res = await http(port, { agent })
      if (res.status !== 302) throw new Error(`probe: ${res.status}`)
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
    }
  } finally {
    agent.destroy()
  }
  latencies.sort((a, b) => a - b)
  return { count: latencies.length, p50Ms: latencies[latencies.length >> 1], p99Ms: latencies[Math.floor(latencies.length * 0.99)], maxMs: latencies[latencies.length - 1] }
}
