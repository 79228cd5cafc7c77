#!/usr/bin/env node
// The bench: our example server against bare Fastify, Fastify + @fastify/session and Express, checked
// before and after every measurement, loaded with wrk; writes docs/performance.md. See bench/README.md.
import { existsSync, readFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchServers } from './lib/servers.mjs'
import { pinning, pinRunner, removeOutputs } from './lib/processes.mjs'
import { wrkVersion } from './lib/wrk.mjs'
import { SCENARIOS, loginProbe, memoryFlood, runRounds } from './lib/scenarios.mjs'
import { sprayProbe } from './lib/spray.mjs'
import { median } from './lib/stats.mjs'
import { reportPaths, runData, writeReport } from './lib/report.mjs'
import { startFlags } from './lib/npm-start-flags.mjs'
import { log } from './lib/format.mjs'
import { HELP, parseFlags } from './lib/flags.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))

async function main () {
  const argv = process.argv.slice(2)
  let options
  try {
    options = parseFlags(argv)
  } catch (err) {
    console.error(`bench: ${err.message}\n${HELP}`)
    process.exit(2)
  }
  if (options.help) {
    console.log(HELP)
    return
  }
  const paths = reportPaths(root, options.name)
  if (options.fromJson !== undefined) {
    console.log(writeReport(JSON.parse(readFileSync(options.fromJson, 'utf8')), paths))
    return
  }
  const wrk = wrkVersion()
  if (wrk === undefined) throw new Error('wrk is not installed (Debian: apt-get install -y wrk)')
  if (!existsSync(join(root, 'dist', 'examples', 'app.js'))) throw new Error('dist/ is missing: run `npm run build` first (`npm run bench` does)')

  let servers = benchServers({ root, breakdown: !options.skip.has('breakdown'), extras: options.extras })
  if (options.only !== undefined) {
    const unknown = options.only.filter((name) => !servers.some((s) => s.name === name))
    if (unknown.length > 0) throw new Error(`--only: no server named ${unknown.join(', ')}`)
    servers = servers.filter((s) => options.only.includes(s.name))
  }
  const scenarios = SCENARIOS.filter((s) => options.scenarios === undefined || options.scenarios.includes(s.name))

  pinRunner()
  const started = new Date()
  const cpuModel = cpus()[0]?.model ?? 'unknown CPU'
  const machine = `${pinning.cores} × ${cpuModel}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, wrk ${wrk}`
  const pinned = pinning.pinned ? `servers pinned to CPU ${pinning.serverCpu} and wrk to CPU ${pinning.loadCpu} with taskset` : 'no CPU pinning (fewer than 2 CPUs or no taskset)'
  log(`machine: ${machine}; ${pinned}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`)
  log(`servers: ${servers.map((s) => s.name).join(', ')}`)

  const records = options.skip.has('throughput') ? [] : await runRounds(servers, scenarios, options)
  // The flood runs against our server and, for comparison, the limit (same tool, same counts).
  const memory = []
  if (!options.skip.has('memory')) {
    for (const name of ['ours', 'limit']) {
      const server = servers.find((s) => s.name === name)
      if (server !== undefined) memory.push(await memoryFlood(server, options))
    }
  }
  const ours = servers.find((s) => s.name === 'ours')
  const login = options.skip.has('login') || ours === undefined ? undefined : await loginProbe(ours, options)
  // The password spray against ours and every other build measured (--extra), one after the other.
  const spray = []
  if (!options.skip.has('spray')) {
    for (const server of servers.filter((s) => s.name === 'ours' || s.extra)) spray.push(await sprayProbe(server, options))
  }

  const loads = records.map((r) => r.load1)
  const others = records.map((r) => r.otherCores)
  const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`
  const meta = {
    date: started.toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    command: `node bench/run.mjs${argv.length > 0 ? ` ${argv.join(' ')}` : ''}`,
    quick: options.quick,
    machine,
    machineShort: `${pinning.cores} × ${cpuModel}, Node ${process.version}`,
    pinning: pinned,
    rounds: options.rounds,
    duration: options.duration,
    warmup: options.warmup,
    connections: options.connections,
    oursLogLevel: options.logLevel,
    startFlags: startFlags(root).join(' '),
    loadRange: loads.length === 0 ? 'n/a' : range(loads),
    otherCoresRange: others.length === 0 ? 'n/a' : `${range(others)} (median ${median(others).toFixed(2)})`
  }
  const markdown = writeReport(runData({ meta, servers, scenarios, records, memory, login, spray }), paths)
  console.log(`\n${markdown}\n`)
  log(`done in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s; wrote ${Object.values(paths).map((p) => p.slice(root.length)).join(', ')}`)
}

main().then(removeOutputs, (err) => {
  console.error(`bench: ${err.stack ?? err}`)
  removeOutputs()
  process.exit(1)
})
