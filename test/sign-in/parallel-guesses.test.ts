import t, { type Test } from 'tap'
import { request as httpRequest, Agent } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { AttemptStore, Credentials } from '../../lib/index.js'
import { RedisAttemptStore } from '../../lib/stores/redis/index.js'
import { demoDirectory } from '../../examples/demo-member.js'
import { TEACHER, buildTestApp, openLoginForm } from '../helpers/app.js'
import { REDIS_URL, connectedClient, deleteKeys, uniquePrefix } from '../helpers/redis.js'

// Finding 1 of issue 12: sign-in read the lock, checked the password and only then counted the failure, so
// every request of a burst had its password checked. Here a burst of truly parallel sign-ins, each on its
// own socket, is held at a host hook until all of them have arrived, then let through at once.

const BURST = 60
const MAX_ATTEMPTS = 10

interface Answer { status: number, location: string | undefined }

function post (origin: string, agent: Agent, cookie: string, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/Security/login`, {
      method: 'POST',
      agent,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) }
    }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function burst (t: Test, store: AttemptStore | undefined) {
  const real = (await demoDirectory(TEACHER)).authenticate
  let checked = 0
  const authenticate = async (credentials: Credentials) => {
    checked++
    return real(credentials)
  }
  // The barrier: every sign-in waits here until the whole burst is in, each on a socket of its own.
  const sockets = new Set<unknown>()
  let arrived = 0
  let release: () => void = () => {}
  const allIn = new Promise<void>((resolve) => { release = resolve })
  const { app } = await buildTestApp({
    plugin: { authenticate, lockout: { maxAttempts: MAX_ATTEMPTS, ...(store === undefined ? {} : { store }) }, loginRateLimit: { max: 10_000 } },
    extend: (host: FastifyInstance) => {
      host.addHook('onRequest', async (request) => {
        if (request.method !== 'POST') return
        sockets.add(request.raw.socket)
        if (++arrived === BURST) release()
        await allIn
      })
    }
  })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  const agent = new Agent({ keepAlive: false, maxSockets: BURST })
  t.teardown(() => agent.destroy())

  const body = (password: string) => new URLSearchParams({ _csrf: form.token, email: TEACHER.email, password }).toString()
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => post(origin, agent, form.cookie, body(`wrong-${i}`))))
  t.equal(sockets.size, BURST, `${BURST} sign-ins in flight at once, each on its own socket`)
  t.equal(checked, MAX_ATTEMPTS, `passwords checked in a burst of ${BURST}: ${checked}, at most maxAttempts`)
  const statuses = answers.map((a) => a.status)
  t.equal(statuses.filter((s) => s === 401).length, MAX_ATTEMPTS - 1, 'the failures before the lock are 401s')
  t.equal(statuses.filter((s) => s === 429).length, BURST - MAX_ATTEMPTS + 1, 'the rest are refused as locked')

  arrived = -Infinity // the barrier is open from now on
  const right = await post(origin, agent, form.cookie, body(TEACHER.password))
  t.equal(right.status, 429, 'the right password, sent after the burst, is refused')
  t.equal(checked, MAX_ATTEMPTS, 'and not even checked')
}

t.test('a parallel burst gets at most maxAttempts passwords checked (memory store)', async (t) => {
  await burst(t, undefined)
})

t.test('a parallel burst gets at most maxAttempts passwords checked (Redis store)', { skip: REDIS_URL === undefined && 'REDIS_URL is not set' }, async (t) => {
  const client = await connectedClient(t, REDIS_URL!)
  const prefix = uniquePrefix('parallel-guesses')
  t.teardown(() => deleteKeys(client, prefix))
  await burst(t, new RedisAttemptStore(client, { prefix }))
})
