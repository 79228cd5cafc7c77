#!/usr/bin/env node
// node --expose-gc bench/waiting-memory.mjs [waiters]: the memory one sign-in waiting in the password line
// costs the server. The section with 2 checks at once and room for every waiter; authenticate is held, so
// 2 sign-ins run and the rest wait, each a real request on its own socket from a client in another
// process (its memory is not counted). Heap and RSS after a full GC, before and with the line full. Needs
// `npm run build` (it loads dist/).
import { spawn } from 'node:child_process'
import { Agent, request } from 'node:http'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'

const SECRET = 'a-bench-secret-that-is-at-least-32-characters-long'
const MiB = 2 ** 20

if (process.argv[2] === '--client') {
  // The client: `count` posts at once, each on a connection of its own; exits when all are answered.
  const [port, count, cookie, body] = [Number(process.argv[3]), Number(process.argv[4]), process.argv[5], process.argv[6]]
  const agent = new Agent({ keepAlive: false, maxSockets: count })
  const statuses = {}
  await Promise.all(Array.from({ length: count }, () => new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/Security/login', agent, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
      res.resume().on('end', resolve)
    })
    req.on('error', reject)
    req.end(body)
  })))
  console.log(JSON.stringify(statuses))
} else {
  if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc')
  // 200 by default: before any check has ended, the line's pace is its first guess (100 ms), so 2 checks
  // have room for 200 (MAX_WAIT_MS).
  const waiters = Number(process.argv[2] ?? 200)
  const { default: schoolsResources, InMemoryCatalog } = await import('../dist/lib/index.js')
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  let open
  const gate = new Promise((resolve) => { open = resolve })
  let running = 0
  let arrived = 0
  await app.register(schoolsResources, {
    catalog: new InMemoryCatalog({ categories: [] }),
    baseUrl: 'https://www.example.org',
    authenticate: async () => { running++; await gate; return null },
    lockout: false,
    loginRateLimit: false,
    passwordChecks: { concurrent: 2, waiting: waiters, perAddress: waiters + 2 }
  })
  app.addHook('preHandler', async (request) => { if (request.method === 'POST') arrived++ })
  await app.ready()
  const form = await app.inject({ url: '/Security/login' })
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)[1]
  const cookie = form.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
  const body = `email=user%40example.org&password=wrong&_csrf=${encodeURIComponent(token)}`
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = app.server.address().port

  const until = async (done) => { while (!done()) await new Promise((resolve) => setTimeout(resolve, 10)) }
  const sample = () => {
    globalThis.gc()
    const m = process.memoryUsage()
    return { heap: m.heapUsed, rss: m.rss }
  }
  // One post answered first, so that what a first request loads or compiles is not counted as the line's.
  const warm = spawn(process.execPath, [new URL(import.meta.url).pathname, '--client', String(port), '1', cookie, body], { stdio: ['ignore', 'pipe', 'inherit'] })
  const warmExit = new Promise((resolve) => warm.once('exit', resolve))
  await until(() => running === 1)
  const before = sample()
  const client = spawn(process.execPath, [new URL(import.meta.url).pathname, '--client', String(port), String(waiters + 1), cookie, body], { stdio: ['ignore', 'pipe', 'inherit'] })
  const clientExit = new Promise((resolve) => client.once('exit', resolve))
  let out = ''
  client.stdout.on('data', (chunk) => { out += chunk })
  // Every post has arrived: 2 check (the warm one and one more), the rest wait.
  await until(() => arrived === waiters + 2 && running === 2)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const full = sample()
  open()
  await clientExit
  await warmExit
  await app.close()
  const per = (key) => ((full[key] - before[key]) / waiters / 1024).toFixed(1)
  console.log(`${waiters} waiting sign-ins (answers ${out.trim()}): heap +${((full.heap - before.heap) / MiB).toFixed(1)} MiB, ${per('heap')} KiB each; RSS +${((full.rss - before.rss) / MiB).toFixed(1)} MiB, ${per('rss')} KiB each`)
}
