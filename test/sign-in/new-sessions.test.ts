import t from 'tap'
import { MemoryAttemptStore } from '../../lib/stores/attempt-store.js'
import { NewSessions } from '../../lib/sign-in/new-sessions.js'
import { buildTestApp, openLoginForm, postLogin, TEACHER } from '../helpers/app.js'
import { eventChannels } from '../../lib/index.js'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'

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
  t.match(refused.body, /Too many sign-ins to this account in the last minute\. Try again after \d\d:\d\d UTC\./)
  t.match(refused.body, /value="teacher@example.org"/, 'the form keeps the email')
  t.same(failed.map((e) => e.reason), ['too-many-sessions', 'too-many-sessions', 'too-many-sessions'])

  const json = await postLogin(app, TEACHER, { form: await openLoginForm(app), headers: { accept: 'application/json' } })
  t.equal(json.statusCode, 429)
  t.equal(json.json().code, 'FST_SR_SESSION_RATE_LIMITED')
  // Another member is not held by this one's bound.
  t.equal((await postLogin(app, { email: 'nobody@example.org', password: 'x' })).statusCode, 401)
})

t.test('the count lives a minute in the store, per member id', async (t) => {
  let now = 1_000_000
  const sessions = new NewSessions(new MemoryAttemptStore({ now: () => now }), 2)
  t.equal(await sessions.take('t-1'), undefined)
  t.equal(await sessions.take(7), undefined)
  t.equal(await sessions.take('t-1'), undefined)
  t.same(await sessions.take('t-1'), new Date(1_060_000), 'the third in the minute: refused until it ends')
  now += 60_000
  t.equal(await sessions.take('t-1'), undefined, 'a new minute')
})

t.test('lockout.maxNewSessionsPerMinute must be a positive whole number', async (t) => {
  await t.rejects(buildTestApp({ plugin: { lockout: { maxNewSessionsPerMinute: 0 } } }), { code: 'FST_SR_INVALID_OPTION', message: /lockout\.maxNewSessionsPerMinute/ })
})
