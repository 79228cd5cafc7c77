#!/usr/bin/env node
// node bench/time-split.mjs <anonymous|signed-in> <server ...> [--seconds N] [--extra name=dir] [--top N] [--call-graph]
//
// Where each server's CPU time per request goes, sampled by time: the counterpart of
// bench/instructions.mjs, which counts instructions and so cannot see what an instruction costs (a cache
// miss, the kernel). Each server runs as the bench starts it (bench/lib/servers.mjs, pinned to CPU 0) with
// V8 naming its compiled functions for perf (--perf-basic-prof); after sign-in (signed-in) and a 2 s
// warm-up, `perf record -e cpu-clock` samples all its threads, kernel included, while wrk loads it
// (`--seconds`, 8). Printed per request, in µs: the kernel, the JavaScript, regular expressions, V8's
// builtins (its inline caches among them), V8's compilers, its collector, the rest of V8, Node and libuv,
// and the C libraries; then the symbols whose time differs most between the last server and the first.
// The sampled total is printed beside the CPU time /proc gives for the same run, as a check.
// `--call-graph` records the callers too and keeps V8's map of its compiled functions (/tmp/perf-<pid>.map),
// so that `perf report -i <file> -g` can name them; remove the maps when done.
//
// cpu-clock is a software event, so this works on a VM without hardware counters (perf stat: "not
// supported"); it needs Debian's linux-perf and kernel.perf_event_paranoid <= 1 (or root). On such a VM
// a share of the kernel's samples lands on the instruction that re-enables interrupts
// (_raw_spin_unlock_irqrestore): read the kernel's line as a whole.
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { benchServers, BASE_URL, logLevelOf } from './lib/servers.mjs'
import { parseExtra } from './lib/flags.mjs'
import { signIn } from './lib/checks.mjs'
import { pinRunner, processSample, removeOutputs, startServer, terminate } from './lib/processes.mjs'
import { COLLECTOR, COMPILERS } from './lib/v8-parts.mjs'
import { wrk } from './lib/wrk.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const HZ = 1999
const PARTS = ['kernel', 'JavaScript', 'regular expressions', "V8's builtins", "V8's compilers", "V8's collector", 'V8, the rest', 'Node and libuv', 'C libraries']
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seconds: { type: 'string', default: '8' }, top: { type: 'string', default: '25' }, extra: { type: 'string', multiple: true, default: [] }, 'call-graph': { type: 'boolean', default: false } }
})
const [scenario, ...names] = positionals
const extras = values.extra.map(parseExtra)
const known = benchServers({ root, eachVariant: true, extras })
const servers = names.map((name) => known.find((s) => s.name === name))
const seconds = Number(values.seconds)
const callGraph = values['call-graph']
if (!['anonymous', 'signed-in'].includes(scenario) || names.length === 0 || servers.includes(undefined) || !(seconds >= 1)) {
  console.error(`usage: node bench/time-split.mjs <anonymous|signed-in> <server ...> [--seconds N] [--extra name=dir] [--top N] [--call-graph]\nservers: ${known.map((s) => s.name).join(', ')}`)
  process.exit(2)
}
const dir = join(root, 'bench', 'profiles', `time-split-${scenario}-${Date.now()}`)
mkdirSync(dir, { recursive: true })

/** The part of the process a sample's symbol belongs to. */
function partOf (dso, symbol) {
  if (dso === '[kernel.kallsyms]') return 'kernel'
  if (dso.startsWith('[JIT]')) return symbol.startsWith('RegExp') ? 'regular expressions' : 'JavaScript'
  if (symbol.startsWith('Builtins_')) return "V8's builtins"
  if (COMPILERS.test(symbol)) return "V8's compilers"
  if (COLLECTOR.test(symbol)) return "V8's collector"
  if (symbol.startsWith('v8::')) return 'V8, the rest'
  if (dso.startsWith('lib')) return 'C libraries'
  return 'Node and libuv'
}

/** µs per request by symbol, from perf's per-symbol sample counts. */
function symbolTimes (file, requests) {
  const text = execFileSync('perf', ['report', '-i', file, '--stdio', '--no-children', '--sort', 'dso,sym', '-F', 'sample,dso,sym'], { maxBuffer: 256 * 2 ** 20, stdio: ['ignore', 'pipe', 'ignore'] }).toString()
  const times = new Map()
  for (const line of text.split('\n')) {
    // V8's compiled code is the DSO "[JIT] tid N" (older perf: "perf-<pid>.map").
    const m = /^\s*(\d+)\s+(\[JIT\] tid \d+|\S+)\s+\[[.k]\]\s+(.*?)\s*$/.exec(line)
    if (m === null) continue
    // A JIT symbol carries V8's tier mark (*, ~, ^, +) and a quote for an inlined name, and the path of
    // its file: one name per function, whichever checkout (an --extra build) it ran from.
    const symbol = m[3].replace(/^JS:[*~^+]?'?/, 'JS:').replace(/\S*\/(node_modules|dist)\//, '$1/')
    const key = `${m[2].startsWith('[JIT]') || /^perf-\d+\.map$/.test(m[2]) ? '[JIT]' : m[2]}\t${symbol}`
    times.set(key, (times.get(key) ?? 0) + Number(m[1]) * 1e6 / HZ / requests)
  }
  return times
}

// perf itself, before any server starts: without it (or without the right to sample) nothing below works.
try {
  execFileSync('perf', ['record', '-q', '-e', 'cpu-clock', '-o', '/dev/null', 'true'], { stdio: 'pipe' })
} catch (err) {
  console.error(`perf record -e cpu-clock does not work here (${String(err.stderr ?? err.message).trim().split('\n')[0]}): install Debian's linux-perf, and run as root or with kernel.perf_event_paranoid <= 1`)
  process.exit(2)
}

/** Samples `pid` while `during()` runs; resolves to what `during` resolved to, or rejects with perf's own words. */
async function sampled (pid, file, during) {
  const perf = spawn('perf', ['record', ...(callGraph ? ['-g'] : []), '-q', '-e', 'cpu-clock', '-F', String(HZ), '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  perf.stderr.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise((resolve, reject) => { perf.once('exit', resolve); perf.once('error', reject) })
  let early = false
  exited.then(() => { early = true }, () => { early = true })
  // perf needs a moment to attach to every thread before the measured run starts.
  await new Promise((resolve) => setTimeout(resolve, 300))
  if (early) throw new Error(`perf record stopped before the run: ${stderr.trim()}`)
  try {
    return await during()
  } finally {
    perf.kill('SIGINT')
    await exited.catch(() => {})
  }
}

const results = []
pinRunner()
// The servers' output files go however the run ends.
process.once('exit', removeOutputs)
for (const server of servers) {
  const data = join(dir, `${server.name}.perf`)
  // --perf-basic-prof also turns on V8's own log, which nothing here reads.
  const v8Log = join(dir, `${server.name}-v8.log`)
  const proc = await startServer({ ...server, execArgv: [...(server.execArgv ?? []), '--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${v8Log}`] }, {
    env: { BASE_URL, LOG_LEVEL: logLevelOf(server, 'warn') }
  })
  let run
  let times
  try {
    const headers = scenario === 'signed-in' ? { cookie: await signIn(proc.port, server) } : {}
    await wrk(proc.port, { duration: 2, connections: 64, headers })
    run = await sampled(proc.pid, data, async () => {
      const before = processSample(proc.pid)
      const r = await wrk(proc.port, { duration: seconds, connections: 64, headers })
      const after = processSample(proc.pid)
      return { requests: r.requests, statusErrors: r.statusErrors, procUs: (after.cpuSeconds - before.cpuSeconds) * 1e6 / r.requests }
    })
    times = symbolTimes(data, run.requests)
  } finally {
    await terminate(proc)
    // perf report has read the map of V8's compiled functions; it and V8's log are of no further use.
    if (callGraph && times !== undefined) console.log(`${server.name}: V8's map kept for perf report -g: /tmp/perf-${proc.pid}.map`)
    else rmSync(`/tmp/perf-${proc.pid}.map`, { force: true })
    rmSync(v8Log, { force: true })
  }
  const parts = Object.fromEntries(PARTS.map((p) => [p, 0]))
  for (const [key, us] of times) {
    const [dso, symbol] = key.split('\t')
    parts[partOf(dso, symbol)] += us
  }
  const total = [...times.values()].reduce((a, b) => a + b, 0)
  results.push({ name: server.name, times, parts, sampled: total, ...run })
  console.log(`${server.name}: ${run.requests.toLocaleString('en-US')} requests (${run.statusErrors} not 2xx/3xx), sampled ${total.toFixed(1)} µs per request, /proc ${run.procUs.toFixed(1)} µs`)
}

const width = Math.max(10, ...results.map((r) => r.name.length))
console.log(`\nµs per request (${scenario})\n${''.padEnd(22)}${results.map((r) => r.name.padStart(width + 2)).join('')}`)
for (const part of [...PARTS, 'sampled']) {
  console.log(`${part.padEnd(22)}${results.map((r) => (part === 'sampled' ? r.sampled : r.parts[part]).toFixed(1).padStart(width + 2)).join('')}`)
}
if (results.length > 1) {
  const first = results[0]
  const last = results.at(-1)
  const keys = new Set([...first.times.keys(), ...last.times.keys()])
  const diff = (k) => (last.times.get(k) ?? 0) - (first.times.get(k) ?? 0)
  console.log(`\nlargest differences, ${last.name} − ${first.name} (µs per request):`)
  for (const k of [...keys].sort((a, b) => Math.abs(diff(b)) - Math.abs(diff(a))).slice(0, Number(values.top))) {
    console.log(`${diff(k).toFixed(2).padStart(7)}  ${k.split('\t')[1].slice(0, 120)}`)
  }
}
console.log(`perf files: ${dir}`)
