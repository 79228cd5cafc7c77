#!/usr/bin/env node
// node bench/instructions.mjs <anonymous|signed-in> <server ...> [--warm N] [--count N] [--extra name=dir]
// node bench/instructions.mjs split <file.callgrind ...> [--count N]
//
// Instructions per request, counted by valgrind's callgrind: repeatable on a VM where CPU time is not
// (the same binary, inputs and requests give about the same count, whatever else the machine does). Each
// server runs as the bench starts it (bench/lib/servers.mjs) under callgrind with counting off; after
// `--warm` requests (10,000) counting is turned on for `--count` requests (5,000), sent 4 at a time over
// keep-alive connections. Printed per request: the total and its split into V8's compilers (and its
// JavaScript parser), the garbage collector and the rest (the JavaScript, Node and the libraries). The
// compilers' share is large and varies under callgrind (V8 keeps compiling at this pace): compare the
// rest, and the collector, between builds. `split` prints the same for callgrind files already written
// (bench/profiles/instructions-*). Only user-space instructions are counted: not the kernel's share of a
// request (loopback TCP, epoll), nor what a cache miss costs. Needs valgrind (Debian's package); about 3
// minutes per server.
import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { benchServers, BASE_URL, logLevelOf } from './lib/servers.mjs'
import { parseExtra } from './lib/flags.mjs'
import { http, signIn } from './lib/checks.mjs'
import { removeOutputs, startServer, terminate } from './lib/processes.mjs'
import { COLLECTOR, COMPILERS } from './lib/v8-parts.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { warm: { type: 'string', default: '10000' }, count: { type: 'string', default: '5000' }, extra: { type: 'string', multiple: true, default: [] } }
})
const [scenario, ...names] = positionals
const warm = wholeNumber(values.warm, '--warm')
const count = wholeNumber(values.count, '--count')
if (scenario === 'split') {
  for (const file of names) printSplit(file, split(file))
  process.exit(0)
}
const extras = values.extra.map(parseExtra)
const known = benchServers({ root, eachVariant: true, extras })
const servers = names.map((name) => known.find((s) => s.name === name))
if (!['anonymous', 'signed-in'].includes(scenario) || names.length === 0 || servers.includes(undefined)) {
  console.error(`usage: node bench/instructions.mjs <anonymous|signed-in> <server ...> [--warm N] [--count N] [--extra name=dir]\n       node bench/instructions.mjs split <file.callgrind ...> [--count N]\nservers: ${known.map((s) => s.name).join(', ')}`)
  process.exit(2)
}
const dir = join(root, 'bench', 'profiles', `instructions-${scenario}-${Date.now()}`)
mkdirSync(dir, { recursive: true })

/** `n` GETs of the category page, 4 at a time; resolves to the count of each status. */
async function load (port, n, headers) {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })
  const statuses = {}
  let left = n
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (left-- > 0) {
      const { status } = await http(port, { headers, agent })
      statuses[status] = (statuses[status] ?? 0) + 1
    }
  }))
  agent.destroy()
  return statuses
}

function wholeNumber (value, flag) {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) {
    console.error(`${flag} must be a whole number of 1 or more, got ${value}`)
    process.exit(2)
  }
  return n
}

/** Instructions by part, from callgrind_annotate's per-function totals (no source annotation). */
function split (out) {
  const text = execFileSync('callgrind_annotate', ['--auto=no', '--threshold=100', out], { maxBuffer: 256 * 2 ** 20 }).toString()
  const parts = { total: 0, compiler: 0, gc: 0, rest: 0 }
  for (const line of text.split('\n')) {
    const m = /^\s*([\d,]+) \([\s\d.]+%\)\s+(.*)$/.exec(line)
    if (m === null || line.includes('PROGRAM TOTALS')) continue
    const ir = Number(m[1].replaceAll(',', ''))
    const part = COMPILERS.test(m[2]) ? 'compiler' : COLLECTOR.test(m[2]) ? 'gc' : 'rest'
    parts[part] += ir
    parts.total += ir
  }
  return parts
}

function printSplit (name, parts, statuses) {
  const per = (n) => Math.round(n / count).toLocaleString('en-US')
  const answers = statuses === undefined ? '' : `; answers ${JSON.stringify(statuses)}`
  console.log(`${name.padEnd(16)} ${per(parts.total)} instructions per request (compilers ${per(parts.compiler)}, collector ${per(parts.gc)}, rest ${per(parts.rest)})${answers}`)
}

for (const server of servers) {
  const out = join(dir, `${server.name}.callgrind`)
  // Callgrind starts Node about 50 times slower.
  const proc = await startServer(server, {
    wrapper: ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`],
    startMs: 300_000,
    env: { BASE_URL, LOG_LEVEL: logLevelOf(server, 'warn') }
  })
  let statuses
  try {
    const headers = scenario === 'signed-in' ? { cookie: await signIn(proc.port, server) } : {}
    await load(proc.port, warm, headers)
    execFileSync('callgrind_control', ['--instr=on', String(proc.pid)], { stdio: 'ignore' })
    statuses = await load(proc.port, count, headers)
    execFileSync('callgrind_control', ['--instr=off', String(proc.pid)], { stdio: 'ignore' })
  } finally {
    await terminate(proc, { killAfterMs: 60_000 })
  }
  printSplit(`${server.name} ${scenario}:`, split(out), statuses)
}
removeOutputs()
console.log(`callgrind files: ${dir}`)
