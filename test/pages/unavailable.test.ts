import t from 'tap'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { errorCodes, storeErrorHandler } from '../../lib/index.js'
import { OUTAGE_SUMMARY_MS } from '../../lib/pages/unavailable.js'
import { IntervalLog, type Summarize } from '../../lib/interval-log.js'
import { AsyncStore } from '../helpers/async-store.js'
import { ManualClock } from '../helpers/manual-clock.js'
import { FakeRedis } from '../helpers/fake-redis.js'
import { OUTAGE_BREAKER, outageSignOutTests } from '../helpers/outage-sign-out.js'
import { buildTestApp, openLoginForm, postLogin, signIn, TEACHER } from '../helpers/app.js'

const { FST_SR_STORE_UNAVAILABLE } = errorCodes

/** Reads work; writes fail as a store that is full, read-only or gone would fail them. Counts the writes tried. */
class WritesFailStore extends AsyncStore {
  failing = false
  tried = 0

  override set (sessionId: string, session: unknown, callback: (err?: unknown) => void): void {
    if (!this.failing) return super.set(sessionId, session, callback)
    this.tried++
    setImmediate(() => callback(new FST_SR_STORE_UNAVAILABLE('SET failed')))
  }
}

async function build (session: Record<string, unknown> = {}) {
  const store = new WritesFailStore()
  const responses: number[] = []
  const built = await buildTestApp({
    session: { store, ...session },
    extend: (app) => {
      app.addHook('onResponse', async (_request, reply) => { responses.push(reply.statusCode) })
    }
  })
  return { ...built, store, responses }
}

t.test('a session that cannot be saved gets the 503 page once: no second try of the store, no fallback error', async (t) => {
  // With rolling sessions @fastify/session saves a member's session in onSend, after the page is made.
  const { app, store, responses } = await build({ rolling: true })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  store.failing = true
  responses.length = 0
  const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie, accept: 'text/html' } })
  t.equal(page.statusCode, 503)
  t.equal(page.headers['retry-after'], '5')
  t.equal(page.headers['cache-control'], 'no-store')
  t.equal(page.headers['set-cookie'], undefined)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, /<h1>Temporarily unavailable<\/h1>/)
  t.notMatch(page.body, /Mathematics/, 'not the page as if all were well')
  t.notMatch(page.body, /fastify-schools-resources: the store/, 'no internal message')
  t.match(page.headers['content-security-policy'], /default-src 'none'/, 'the security headers set before stay')
  t.equal(page.headers['content-length'], String(Buffer.byteLength(page.body)))
  t.equal(page.headers.connection, 'close', 'the client reconnects; a server shutting down is not held open')
  t.equal(store.tried, 1, 'the store was asked to save once')
  t.same(responses, [503], 'onResponse hooks still run')

  const json = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie, accept: 'application/json' } })
  t.equal(json.statusCode, 503)
  t.same(json.json(), { statusCode: 503, code: 'FST_SR_STORE_UNAVAILABLE', error: 'Service Unavailable', message: 'This part of the site is briefly unavailable. Please try again in a moment.' })
  t.equal(store.tried, 2)

  const head = await app.inject({ method: 'HEAD', url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(head.statusCode, 503)
  t.equal(head.body, '')
})

t.test('sign-in whose new session cannot be saved: 503, and the visitor is not signed in', async (t) => {
  const { app, store } = await build()
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  store.failing = true
  const res = await postLogin(app, { ...TEACHER, BackURL: '/schools/resources/resources/maths/' }, { form })
  t.equal(res.statusCode, 503)
  t.equal(res.headers.location, undefined, 'no redirect as if signed in')
  t.equal(res.headers['set-cookie'], undefined, 'no new session cookie')
  t.ok(store.tried >= 1)
  store.failing = false
  const after = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: form.cookie } })
  t.equal(after.statusCode, 302, 'still signed out')
})

t.test('storeErrorHandler on a host route: store errors become the 503, others go on to the next handler', async (t) => {
  const { app } = await buildTestApp({
    extend: (app) => {
      app.register(async (host) => {
        host.setErrorHandler(storeErrorHandler)
        host.get('/host/down', async () => { throw new FST_SR_STORE_UNAVAILABLE('GET failed') })
        host.get('/host/bug', async () => { throw Object.assign(new Error('a bug'), { statusCode: 500 }) })
      })
    }
  })
  t.teardown(() => app.close())
  const down = await app.inject('/host/down')
  t.equal(down.statusCode, 503)
  t.equal(down.headers['retry-after'], '5')
  const bug = await app.inject('/host/bug')
  t.equal(bug.statusCode, 500)
  t.equal(bug.json().message, 'a bug')
})

// Finding 9 of issue 12: an outage wrote one warn line per 503. Now: the first in full, then a line per interval.

class FailingStore extends AsyncStore {
  down = false
  override get (sessionId: string, callback: (err: unknown, result?: any) => void): void {
    if (this.down) setImmediate(() => callback(new FST_SR_STORE_UNAVAILABLE('no answer from Redis within 2000 ms (GET)')))
    else super.get(sessionId, callback)
  }
}

t.test('a store outage logs its first 503 in full, then one summary line per interval', async (t) => {
  // The plugin as a host loads it, but its interval log on a clock this test moves: the real interval,
  // without waiting it out.
  const clock = new ManualClock()
  class ClockedIntervalLog extends IntervalLog {
    constructor (intervalMs: number, summarize: Summarize) { super(intervalMs, summarize, clock) }
  }
  const clocked = t.mockRequire<typeof import('../helpers/app.js')>('../helpers/app.js', {
    '../../lib/interval-log.js': { IntervalLog: ClockedIntervalLog }
  })
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const store = new FailingStore()
  const { app } = await clocked.buildTestApp({ fastify: { logger: { level: 'warn', stream } }, session: { store } })
  t.teardown(() => app.close())
  const cookie = await clocked.signIn(app)
  store.down = true
  const statuses = new Set<number>()
  for (let i = 0; i < 200; i++) statuses.add((await app.inject({ url: '/schools/resources/', headers: { cookie } })).statusCode)
  t.same([...statuses], [503], '200 answers, all 503')
  const outage = () => lines.filter((l) => String(l.msg).startsWith('store unavailable'))
  t.equal(outage().length, 1, 'one line so far, not 200')
  t.match(outage()[0], { level: 40, code: 'FST_SR_STORE_UNAVAILABLE', msg: 'store unavailable: answering 503' })
  clock.advance(OUTAGE_SUMMARY_MS - 1)
  t.equal(outage().length, 1, 'nothing before the interval is over')
  clock.advance(1)
  t.equal(outage().length, 2, 'then one summary')
  t.match(outage()[1], { level: 40, count: 199, msg: /^store unavailable: 199 more requests answered 503 in the last 5 s; the latest: .*no answer from Redis within 2000 ms \(GET\)/ })
  clock.advance(OUTAGE_SUMMARY_MS)
  t.equal(outage().length, 2, 'a quiet interval writes nothing and ends the summary')
  await app.inject({ url: '/schools/resources/', headers: { cookie } })
  t.equal(outage().length, 3, 'the next outage is logged in full again')
  t.equal(outage()[2].msg, 'store unavailable: answering 503')
})

// The sign-out during an outage (test/helpers/outage-sign-out.ts) in process: the Redis stores on a
// stand-in whose commands are never answered while it is down, so each ends in the stores' own timeout,
// as with a paused Redis (test/redis/outage-sign-out.test.ts).
outageSignOutTests(t, async () => {
  const redis = new FakeRedis()
  return {
    client: redis,
    async stop () { redis.hang = true },
    down: () => redis.hang,
    async back () {
      redis.hang = false
      await sleep(OUTAGE_BREAKER.openMs)
    }
  }
})
