import t from 'tap'
import { Writable } from 'node:stream'
import { errorCodes } from '../../lib/index.js'
import { OUTAGE_SUMMARY_MS } from '../../lib/pages/unavailable.js'
import { AsyncStore } from '../helpers/async-store.js'
import { buildTestApp, signIn } from '../helpers/app.js'

// Finding 9 of issue 12: an outage wrote one warn line per 503. Now: the first in full, then a line per interval.

class FailingStore extends AsyncStore {
  down = false
  override get (sessionId: string, callback: (err: unknown, result?: any) => void): void {
    if (this.down) setImmediate(() => callback(new errorCodes.FST_SR_STORE_UNAVAILABLE('no answer from Redis within 2000 ms (GET)')))
    else super.get(sessionId, callback)
  }
}

t.test('a store outage logs its first 503 in full, then one summary line per interval', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const store = new FailingStore()
  const { app } = await buildTestApp({ fastify: { logger: { level: 'warn', stream } }, session: { store } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  store.down = true
  const statuses = new Set<number>()
  for (let i = 0; i < 200; i++) statuses.add((await app.inject({ url: '/schools/resources/', headers: { cookie } })).statusCode)
  t.same([...statuses], [503], '200 answers, all 503')
  const outage = () => lines.filter((l) => String(l.msg).startsWith('store unavailable'))
  t.equal(outage().length, 1, 'one line so far, not 200')
  t.match(outage()[0], { level: 40, code: 'FST_SR_STORE_UNAVAILABLE', msg: 'store unavailable: answering 503' })
  await new Promise((resolve) => setTimeout(resolve, OUTAGE_SUMMARY_MS + 200))
  t.equal(outage().length, 2, 'then one summary')
  t.match(outage()[1], { level: 40, count: 199, msg: /^store unavailable: 199 more requests answered 503 in the last 5 s; the latest: .*no answer from Redis within 2000 ms \(GET\)/ })
  await new Promise((resolve) => setTimeout(resolve, OUTAGE_SUMMARY_MS + 200))
  t.equal(outage().length, 2, 'a quiet interval writes nothing and ends the summary')
  await app.inject({ url: '/schools/resources/', headers: { cookie } })
  t.equal(outage().length, 3, 'the next outage is logged in full again')
  t.equal(outage()[2].msg, 'store unavailable: answering 503')
})
