#!/usr/bin/env node
// node --expose-gc bench/session-memory.mjs [sign-ins] [--json]: heap per session kept in @fastify/session's
// MemoryStore (the example's store without REDIS_URL), in-process: the example app (dist/, `npm run build`
// first), real sign-ins through its login form (scrypt each, so about 0.2 s apiece), the heap after a full
// GC before and after. --json: a store over the same Map that keeps each session as its JSON, as the
// Redis store does. Prints one JSON line; docs/performance.md has the figures.
import fastifySession from '@fastify/session'

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc')
const { buildApp } = await import('../dist/examples/app.js')
const sessions = new Map()
const asJson = process.argv.includes('--json')

/** @fastify/session's MemoryStore, keeping each session's JSON instead of its Session object. */
class JsonMemoryStore {
  set (id, session, done) { sessions.set(id, JSON.stringify(session)); done() }
  get (id, done) {
    const json = sessions.get(id)
    done(null, json === undefined ? null : JSON.parse(json))
  }

  destroy (id, done) { sessions.delete(id); done() }
}
const app = await buildApp({
  baseUrl: 'https://www.example.org',
  trustProxy: true,
  sessionSecret: 'bench-secret-bench-secret-bench-secret-0123',
  demoEmail: 'teacher@example.org',
  demoPassword: 'correct horse battery staple',
  sessionStore: asJson ? new JsonMemoryStore() : new fastifySession.MemoryStore(sessions),
  // One address signs in over and over: the limits would refuse it.
  sectionOptions: { loginRateLimit: false, lockout: false },
  logger: false
})
await app.ready()
const https = { 'x-forwarded-proto': 'https' }
const cookiesOf = (res) => res.cookies.map((c) => `${c.name}=${c.value}`).join('; ')

async function signIn () {
  const form = await app.inject({ url: '/Security/login', headers: https })
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)[1]
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { ...https, 'content-type': 'application/x-www-form-urlencoded', cookie: cookiesOf(form) },
    payload: `email=teacher%40example.org&password=correct+horse+battery+staple&_csrf=${encodeURIComponent(token)}`
  })
  if (res.statusCode !== 303) throw new Error(`sign-in answered ${res.statusCode}`)
}

const heap = () => {
  globalThis.gc()
  globalThis.gc()
  return process.memoryUsage().heapUsed
}
await signIn()
const stored = [...sessions.values()][0]
const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200)
const before = heap()
for (let i = 0; i < n; i++) await signIn()
const after = heap()
console.log(JSON.stringify({
  signIns: n,
  sessionsInStore: sessions.size,
  heapPerSessionBytes: Math.round((after - before) / n),
  storedAs: stored.constructor.name,
  // What the MemoryStore keeps beside the session's fields: @fastify/session's Session instance, whose
  // symbols include the request it was made for.
  storedSymbols: Object.getOwnPropertySymbols(stored).map((s) => s.description),
  jsonBytes: asJson ? stored.length : JSON.stringify(stored).length
}))
await app.close()
