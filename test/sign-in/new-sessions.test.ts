import t from 'tap'
import { MemoryAttemptStore } from '../../lib/stores/attempt-store.js'
import { NewSessions } from '../../lib/sign-in/new-sessions.js'
import { buildTestApp, openLoginForm, postLogin, TEACHER } from '../helpers/app.js'
import { errorCodes, eventChannels } from '../../lib/index.js'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { AsyncStore } from '../helpers/async-store.js'

const { FST_SR_STORE_UNAVAILABLE } = errorCodes

/** Session writes fail while `failing`: a session store down. */
class WritesFailStore extends AsyncStore {
  failing = false

  override set (sessionId: string, session: unknown, callback: (err?: unknown) => void): void {
    if (!this.failing) return super.set(sessionId, session, callback)
    setImmediate(() => callback(new FST_SR_STORE_UNAVAILABLE('SET failed')))
  }
}

// lockout.maxNewSessionsPerMinute: a member's sign-ins (each a new session for hours) are bounded per
// minute; past the bound, sign-in answers 429 with Retry-After. A class on one shared login stays within it.

t.test('100 parallel sign-ins to one shared login: every one 303, with the default bound', async (t) => {
  const { app, store } = await buildTestApp({ fastify: { trustProxy: '127.0.0.1' } })
  t.teardown(() => app.close())
  const forms = await Promise.all(Array.from({ length: 100 }, () => openLoginForm(app)))
  // A class set of devices behind the school's one address, all at once.
  const answers = await Promise.all(forms.map((form) => postLogin(app, TEACHER, { form })))
  t.same(answers.map((res) => res.statusCode), Array(100).fill(303))
  t.equal(store.sessions.size, 100, 'a session each')
})

t.test('past the bound: 429 with Retry-After and the form; counted across parallel sign-ins', async (t) => {
  const failed: Array<Record<string, unknown>> = []
  const listener = (event: unknown) => { failed.push(event as Record<string, unknown>) }
  subscribe(eventChannels.signInFailed, listener)
  t.teardown(() => unsubscribe(eventChannels.signInFailed, listener))
  const { app, store } = await buildTestApp({ plugin: { lockout: { maxNewSessionsPerMinute: 5 } } })
  t.teardown(() => app.close())
  const forms = await Promise.all(Array.from({ length: 8 }, () => openLoginForm(app)))
  const answers = await Promise.all(forms.map((form) => postLogin(app, TEACHER, { form })))
  t.same(answers.map((res) => res.statusCode).sort(), [303, 303, 303, 303, 303, 429, 429, 429], 'five sessions, three refused')
  t.equal(store.sessions.size, 5)
  const refused = answers.find((res) => res.statusCode === 429)!
  const retryAfter = Number(refused.headers['retry-after'])
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${retryAfter}`)
  t.match(refused.body, /Too many sign-ins to this account in the last minute\. Try again after \d\d:\d\d(?: [AP]M)? UTC\./)
  t.match(refused.body, /value="teacher@example.org"/, 'the form keeps the email')
  t.same(failed.map((e) => e.reason), ['too-many-sessions', 'too-many-sessions', 'too-many-sessions'])

  const json = await postLogin(app, TEACHER, { form: await openLoginForm(app), headers: { accept: 'application/json' } })
  t.equal(json.statusCode, 429)
  t.equal(json.json().code, 'FST_SR_SESSION_RATE_LIMITED')
  // Another member is not held by this one's bound.
  t.equal((await postLogin(app, { email: 'nobody@example.org', password: 'x' })).statusCode, 401)
})

t.test('the count lives a minute in the store, per member id; only sessions made count', async (t) => {
  let now = 1_000_000
  const store = new MemoryAttemptStore({ now: () => now })
  const sessions = new NewSessions(store, 2)
  const made = async (id: string | number, saved = true) => {
    const ticket = await sessions.take(id)
    if (ticket.until !== undefined) return ticket.until
    await ticket.settle(saved)
    return undefined
  }
  t.equal(await made('t-1'), undefined)
  t.equal(await made(7), undefined)
  t.equal(await made('t-1', false), undefined, 'a sign-in that made no session')
  t.equal(await made('t-1'), undefined, 'is given back: room for this one')
  t.same(await made('t-1'), new Date(1_060_000), 'the third in the minute: refused until it ends')
  t.equal((await store.get('sessions:t-1'))?.count, 2)
  now += 60_000
  t.equal(await made('t-1'), undefined, 'a new minute')

  // Places in flight fill the bound too: two admitted at once, a third refused for a moment.
  const first = await sessions.take('t-2')
  const second = await sessions.take('t-2')
  const third = await sessions.take('t-2')
  t.equal(first.until, undefined)
  t.equal(second.until, undefined)
  t.ok(third.until !== undefined && third.until.getTime() > Date.now() && third.until.getTime() <= Date.now() + 1000, 'refused for a second, nothing counted yet')
})

t.test('a store without reserve() counts every sign-in up front', async (t) => {
  const memory = new MemoryAttemptStore()
  const plain = { increment: memory.increment.bind(memory), hold: memory.hold.bind(memory), get: memory.get.bind(memory), reset: memory.reset.bind(memory) }
  const sessions = new NewSessions(plain, 1)
  const first = await sessions.take('m')
  t.equal(first.until, undefined)
  if (first.until === undefined) await first.settle(false)
  t.ok((await sessions.take('m')).until instanceof Date, 'counted though no session was made')
})

t.test('sign-ins answered 503 while the session store is down do not count against the member', async (t) => {
  const store = new WritesFailStore()
  const { app } = await buildTestApp({ session: { store }, plugin: { lockout: { maxNewSessionsPerMinute: 3 } } })
  t.teardown(() => app.close())
  const forms = await Promise.all(Array.from({ length: 6 }, () => openLoginForm(app)))
  store.failing = true
  // A class retrying through the outage, in parallel and one after another.
  const during = await Promise.all(forms.slice(0, 3).map((form) => postLogin(app, TEACHER, { form })))
  for (const form of forms.slice(3)) during.push(await postLogin(app, TEACHER, { form }))
  t.same(during.map((res) => res.statusCode), Array(6).fill(503))
  store.failing = false
  const after = await Promise.all(Array.from({ length: 4 }, () => openLoginForm(app)))
  const answers = await Promise.all(after.map((form) => postLogin(app, TEACHER, { form })))
  t.same(answers.map((res) => res.statusCode).sort(), [303, 303, 303, 429], 'the bound counts the three sessions made, not the outage')
})

t.test('a failure to count after the answer is logged, not thrown', async (t) => {
  let failIncrement = false
  class FlakyStore extends MemoryAttemptStore {
    override async increment (key: string, windowMs: number) {
      if (failIncrement && key.startsWith('sessions:')) throw new Error('store gone')
      return await super.increment(key, windowMs)
    }
  }
  const flaky = new FlakyStore()
  const lines: Array<Record<string, unknown>> = []
  const { app } = await buildTestApp({
    fastify: { logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } },
    plugin: { lockout: { store: flaky, maxNewSessionsPerMinute: 3 } }
  })
  t.teardown(() => app.close())
  failIncrement = true
  const res = await postLogin(app, TEACHER, { form: await openLoginForm(app) })
  t.equal(res.statusCode, 303, 'the member is signed in')
  await new Promise((resolve) => setImmediate(resolve))
  t.ok(lines.some((line) => line.msg === 'the bound on new sessions could not count this sign-in' && line.reason === 'store gone'))
})

t.test('lockout.maxNewSessionsPerMinute must be a positive whole number', async (t) => {
  await t.rejects(buildTestApp({ plugin: { lockout: { maxNewSessionsPerMinute: 0 } } }), { code: 'FST_SR_INVALID_OPTION', message: /lockout\.maxNewSessionsPerMinute/ })
})
