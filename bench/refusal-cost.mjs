#!/usr/bin/env node
// node bench/refusal-cost.mjs [rounds] [perRound]: the CPU one refused sign-in costs the server, per kind of
// refusal, over real http (keep-alive, 20 connections from a client in a worker thread): a wrong password
// (authenticate answers null at once, so no hash is counted), the per-address limit (429, before any
// check) and a full line of password checks (503). The figure is the server thread's own CPU time
// (/proc/self/task/<pid>/stat, user + system), not wall-clock, so that the client's worker and other
// processes on a shared, loaded machine count less; it has the clock-tick resolution of /proc (10 ms a
// round). It also prints what rendering the login page alone costs. REFUSAL_KIND=503 runs one kind,
// REFUSAL_DIST=<dir> another build (its lib/ under dir). Needs `npm run build` (it loads dist/).
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'

const dist = process.env.REFUSAL_DIST ?? '../dist'
const { default: schoolsResources, InMemoryCatalog, defaultViews } = isMainThread ? await import(`${dist}/lib/index.js`) : {}

const rounds = Number(process.argv[2] ?? 5)
const perRound = Number(process.argv[3] ?? 1000)
const kinds = (process.env.REFUSAL_KIND ?? '401,429,503').split(',')
const SECRET = 'a-bench-secret-that-is-at-least-32-characters-long'
const TICKS = 100 // USER_HZ: the clock ticks of /proc's CPU times on Linux
const payload = (token) => `email=user%40example.org&password=wrong&BackURL=%2Fschools%2Fresources%2F&_csrf=${encodeURIComponent(token)}`

async function build (kind) {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  let hold
  const held = new Promise((resolve) => { hold = resolve })
  await app.register(schoolsResources, {
    catalog: new InMemoryCatalog({ categories: [] }),
    baseUrl: 'https://www.example.org',
    // 503: the one check at once never ends, and nobody may wait; 401: every check fails at once.
    authenticate: kind === '503' ? () => held.then(() => null) : async () => null,
    lockout: false,
    loginRateLimit: kind === '429' ? { max: 1 } : false,
    passwordChecks: kind === '503' ? { concurrent: 1, waiting: 0 } : undefined
  })
  await app.ready()
  const form = await app.inject({ url: '/Security/login?BackURL=%2Fschools%2Fresources%2F' })
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)[1]
  const cookie = form.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
  const post = () => app.inject({
    method: 'POST',
    url: '/Security/login',
    remoteAddress: '127.0.0.1',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: payload(token)
  })
  // 429: the first failure spends the address's budget; 503: the first check takes the only turn.
  // (an inject is sent when awaited: then() sends it now)
  const first = post().then((res) => res)
  if (kind === '429') await first
  return { app, post, cookie, body: payload(token), close: async () => { hold(); await first; await app.close() } }
}

/** This thread's CPU time in µs (utime + stime of /proc/self/task/<tid>/stat), without the client's worker. */
function mainThreadCpuUs () {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / TICKS
}

if (!isMainThread) {
  // The client: `connections` keep-alive connections posting the form until `count` answers came back.
  const { port, count, connections, cookie, body } = workerData
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  let sent = 0
  const statuses = {}
  const one = () => new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/Security/login', agent, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
      res.resume().on('end', resolve)
    })
    req.on('error', reject)
    req.end(body)
  })
  await Promise.all(Array.from({ length: connections }, async () => { while (sent++ < count) await one() }))
  agent.destroy()
  parentPort.postMessage(statuses)
} else {
  // The login page alone (the built-in view and layout), as a refusal renders it.
  const ctx = { siteName: 'Schools resources', member: undefined, signIn: true, stylesheet: '/schools/resources/style.css', paths: { index: '/schools/resources/', login: '/Security/login', logout: '/Security/logout', category: (s) => s, file: (s) => s } }
  const render = (i) => String(defaultViews.layout(defaultViews.login({ backUrl: '/schools/resources/', email: `user${i}@example.org`, error: 'Sign-in is busy. Please try again in a moment.', csrfToken: `token-${i}` }, ctx), ctx))
  for (let i = 0; i < 5000; i++) render(i)
  const t0 = process.cpuUsage()
  for (let i = 0; i < 50000; i++) render(i)
  const used = process.cpuUsage(t0)
  console.log(`login page render alone: ${((used.user + used.system) / 50000).toFixed(1)} µs (50,000 renders)`)
  for (const kind of kinds) {
    const { app, post, close, cookie, body } = await build(kind)
    for (let i = 0; i < 300; i++) {
      const res = await post()
      if (String(res.statusCode) !== kind) throw new Error(`expected ${kind}, got ${res.statusCode}: ${res.body.slice(0, 200)}`)
    }
    await app.listen({ port: 0, host: '127.0.0.1' })
    const port = app.server.address().port
    const perRequest = []
    for (let r = 0; r < rounds; r++) {
      const before = mainThreadCpuUs()
      const statuses = await new Promise((resolve, reject) => {
        const worker = new Worker(new URL(import.meta.url), { workerData: { port, count: perRound, connections: 20, cookie, body } })
        worker.once('message', resolve).once('error', reject)
      })
      if (statuses[kind] !== perRound) throw new Error(`expected ${perRound} × ${kind}: ${JSON.stringify(statuses)}`)
      perRequest.push((mainThreadCpuUs() - before) / perRound)
    }
    perRequest.sort((a, b) => a - b)
    const last = await post()
    console.log(`${kind}: server CPU µs per refusal over http: min ${perRequest[0].toFixed(1)}, median ${perRequest[Math.floor(rounds / 2)].toFixed(1)} (${rounds} rounds × ${perRound}, 20 connections); body ${last.body.length} bytes`)
    await close()
  }
}
