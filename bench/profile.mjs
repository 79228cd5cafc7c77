#!/usr/bin/env node
// node bench/profile.mjs <server> <anonymous|signed-in> [seconds]: runs one bench server under
// --cpu-prof with wrk against it, then prints the top functions by self time. Profiles in bench/profiles/.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { request } from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

const here = dirname(fileURLToPath(import.meta.url))
const [name = 'ours', scenario = 'anonymous', seconds = '5'] = process.argv.slice(2)
const dir = join(here, 'profiles', `${name}-${scenario}-${Date.now()}`)
mkdirSync(dir, { recursive: true })
const port = 4900
// Our server with Node's flags from `npm start`, as the bench runs it.
const startFlags = name === 'ours' ? JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')).scripts.start.split('&&').pop().trim().split(/\s+/).slice(1, -1) : []
const child = spawn('taskset', ['-c', '0', process.execPath, ...startFlags, '--cpu-prof', `--cpu-prof-dir=${dir}`, join(here, 'servers', `${name}.mjs`)], {
  stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  env: { ...process.env, PORT: String(port), LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' }
})
await new Promise((resolve) => child.on('message', (m) => m?.type === 'ready' && resolve()))
let cookie = ''
if (scenario === 'signed-in') {
  // As a browser signs in: the login form first (its CSRF token is tied to the form's session), then the post.
  const get = (path, headers = {}, method = 'GET', body) => new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let data = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { data += c })
      res.on('end', () => resolve({ headers: res.headers, body: data }))
    })
    req.on('error', reject)
    req.end(body)
  })
  const form = await get('/Security/login')
  const formCookie = form.headers['set-cookie'][0].split(';', 1)[0]
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)[1]
  const res = await get('/Security/login', { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie }, 'POST',
    `email=teacher%40example.org&password=correct+horse+battery+staple&_csrf=${encodeURIComponent(token)}`)
  cookie = res.headers['set-cookie'][0].split(';', 1)[0]
}
const argv = ['-c', '1', 'wrk', '-t1', '-c64', `-d${seconds}s`]
if (cookie !== '') argv.push('-H', `cookie: ${cookie}`)
argv.push(`http://127.0.0.1:${port}/schools/resources/resources/maths/`)
console.log(spawnSync('taskset', argv, { encoding: 'utf8' }).stdout.split('\n').filter((l) => /Requests\/sec|Latency/.test(l)).join('\n'))
child.kill('SIGTERM')
await new Promise((resolve) => child.on('exit', resolve))
await sleep(100)
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
const self = new Map()
const dt = new Map()
profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
let total = 0
for (const node of profile.nodes) {
  const t = dt.get(node.id) ?? 0
  total += t
  const { functionName, url, lineNumber } = node.callFrame
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*wt-bench\//, '')}:${lineNumber + 1}`
  self.set(key, (self.get(key) ?? 0) + t)
}
const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 30))
for (const [key, t] of top) console.log(`${(100 * t / total).toFixed(1).padStart(5)}%  ${key}`)
console.log(`profile: ${join(dir, file)}`)
