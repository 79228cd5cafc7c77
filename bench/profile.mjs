#!/usr/bin/env node
// node bench/profile.mjs [server] [anonymous|signed-in] [seconds]: runs one bench server (any name the
// bench knows, e.g. ours, ours-no-csrf, reference) under --cpu-prof with wrk against it, as the bench
// starts it, then prints the top functions by self time. Profiles go to bench/profiles/.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { benchServers, BASE_URL, logLevelOf } from './lib/servers.mjs'
import { pinRunner, removeOutputs, startServer, terminate } from './lib/processes.mjs'
import { signIn } from './lib/checks.mjs'
import { wrk } from './lib/wrk.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const [name = 'ours', scenario = 'anonymous', seconds = '5'] = process.argv.slice(2)
const server = benchServers({ root, eachVariant: true }).find((s) => s.name === name)
if (server === undefined || !['anonymous', 'signed-in'].includes(scenario)) {
  console.error('usage: node bench/profile.mjs [server] [anonymous|signed-in] [seconds]')
  process.exit(2)
}
const dir = join(root, 'bench', 'profiles', `${name}-${scenario}-${Date.now()}`)
mkdirSync(dir, { recursive: true })

pinRunner()
// The server's own flags (ours: those of `npm start`), plus the profiler's.
const proc = await startServer({ ...server, execArgv: [...(server.execArgv ?? []), '--cpu-prof', `--cpu-prof-dir=${dir}`] }, {
  env: { BASE_URL, LOG_LEVEL: process.env.LOG_LEVEL ?? logLevelOf(server, 'warn') }
})
try {
  const headers = scenario === 'signed-in' ? { cookie: await signIn(proc.port, server) } : {}
  const r = await wrk(proc.port, { duration: Number(seconds), connections: 64, headers })
  console.log(`${Math.round(r.rps)} req/s, p50 ${(r.p50Us / 1000).toFixed(2)} ms, p99 ${(r.p99Us / 1000).toFixed(2)} ms`)
} finally {
  // A clean exit on SIGTERM, so that Node writes the profile.
  await terminate(proc)
  removeOutputs()
}
await sleep(100)
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
const timeOf = new Map()
profile.samples.forEach((id, i) => timeOf.set(id, (timeOf.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const self = new Map()
let total = 0
for (const node of profile.nodes) {
  const t = timeOf.get(node.id) ?? 0
  total += t
  const { functionName, url, lineNumber } = node.callFrame
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(`file://${root}`, '')}:${lineNumber + 1}`
  self.set(key, (self.get(key) ?? 0) + t)
}
const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 30))
for (const [key, t] of top) console.log(`${(100 * t / total).toFixed(1).padStart(5)}%  ${key}`)
console.log(`profile: ${join(dir, file)}`)
