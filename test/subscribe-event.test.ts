import t, { type Test } from 'tap'
import { channel } from 'node:diagnostics_channel'
import { eventChannels, errorCodes, subscribeEvent, type SectionEventName } from '../lib/index.js'
import { buildTestApp, capturedLogs, formToken, postLogin, signIn, signOut, withCookies, type BuildOptions } from './helpers/app.js'

// subscribeEvent (docs/events.md): a listener that throws loses its event, never the process. Node rethrows
// a raw subscriber's error as an uncaught exception, which would fail this file; so every test here that
// passes shows a host still serving.

const NAMES = Object.keys(eventChannels) as SectionEventName[]
const CODE = 'FST_SR_EVENT_LISTENER'
const MATHS = '/schools/resources/resources/maths/'
const MATHS_FILE = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'

async function build (t: Test, opts: BuildOptions = {}) {
  const log = capturedLogs()
  const built = await buildTestApp({ fastify: { logger: log.logger }, ...opts })
  t.teardown(() => built.app.close())
  return { ...built, log }
}

/** Subscribes `listener` to every channel until the test ends. */
function onEvery (t: Test, listener: (name: SectionEventName) => void | Promise<void>) {
  const stops = NAMES.map((name) => subscribeEvent(name, () => listener(name)))
  t.teardown(() => { for (const stop of stops) stop() })
}

/** A morning of every kind of event but the outage, twice over. */
async function morning (t: Test, app: Awaited<ReturnType<typeof build>>['app']) {
  for (let round = 0; round < 2; round++) {
    t.equal((await app.inject(MATHS)).statusCode, 302, 'a visitor gets the login redirect (redirectRefused)')
    t.equal((await postLogin(app, { email: 'teacher@example.org', password: 'wrong' })).statusCode, 401, 'a wrong password (signInFailed)')
    const cookie = await signIn(app)
    t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, 'a member reads a page')
    t.equal((await app.inject({ url: '/schools/resources/resources/staff-room/', headers: { cookie } })).statusCode, 403, 'accessRefused')
    t.equal((await app.inject({ url: MATHS_FILE, headers: { cookie } })).statusCode, 200, 'fileDownloaded')
    t.equal((await signOut(app, cookie)).statusCode, 303, 'signedOut')
  }
  const locked = await Promise.all([1, 2, 3].map((i) => postLogin(app, { email: 'someone@example.org', password: `wrong-${i}` })))
  t.ok(locked.some((res) => res.statusCode === 429), 'a lock (lockedOut)')
  await app.schoolsResources.signOutEverywhere('t-1', { by: 'admin' })
  t.pass('a leaver signed out everywhere (signedOutEverywhere)')
  const form = await app.inject('/Security/lostpassword')
  const asked = await app.inject({ method: 'POST', url: '/Security/lostpassword', headers: { cookie: withCookies(undefined, form) }, payload: { _csrf: formToken(form.body), email: '' } })
  t.equal(asked.statusCode, 400, 'a reset asked for with no address (passwordReset)')
}

// "Forgotten your password?", for its channel; nobody gets a link.
const passwordReset = { findMemberByEmail: async () => null, sendResetEmail: async () => {}, setPassword: async () => {} }

t.test('a listener that throws on every event: the host keeps serving, one warn line per channel', async (t) => {
  const { app, log } = await build(t, { plugin: { lockout: { maxAttempts: 2 }, passwordReset } })
  const thrown: string[] = []
  onEvery(t, (name) => {
    thrown.push(name)
    throw new Error(`disk full (${name})`)
  })
  // A well-behaved listener on the same channels still gets every event.
  const seen: string[] = []
  onEvery(t, (name) => { seen.push(name) })

  await morning(t, app)
  t.same(new Set(thrown), new Set(NAMES.filter((name) => name !== 'storeUnavailable')), 'every channel but the outage threw')
  t.same(seen, thrown, 'the other listener got each event')
  const lines = log.withCode(CODE)
  t.equal(lines.length, NAMES.length - 1, `one line per channel for ${thrown.length} throws`)
  const signInFailed = lines.find((line) => line.channel === eventChannels.signInFailed)!
  t.match(signInFailed.msg, /dropped.*catch its errors/)
  t.match(signInFailed.err, { message: 'disk full (signInFailed)' })
})

t.test('an async listener that rejects: the event is dropped, said once', async (t) => {
  const { app, log } = await build(t)
  let calls = 0
  const stop = subscribeEvent('redirectRefused', async (event) => {
    calls++
    t.equal(event.refusedLocation, '/schools/resources/', 'the listener gets the typed payload')
    throw new Error('sink closed')
  })
  t.teardown(stop)
  for (let i = 0; i < 3; i++) t.equal((await app.inject(MATHS)).statusCode, 302)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(calls, 3)
  t.equal(log.withCode(CODE).length, 1)
  t.match(log.withCode(CODE)[0], { channel: eventChannels.redirectRefused, err: { message: 'sink closed' } })
})

t.test('the unsubscribe function stops the listener, and may be called twice', async (t) => {
  const { app } = await build(t)
  let calls = 0
  const stop = subscribeEvent('redirectRefused', () => { calls++ })
  await app.inject(MATHS)
  stop()
  stop()
  await app.inject(MATHS)
  t.equal(calls, 1)
  t.notOk(channel(eventChannels.redirectRefused).hasSubscribers, 'nothing left subscribed')
})

t.test('a logger that throws too: the process warning says it', async (t) => {
  const { app } = await build(t)
  const logWarn = app.log.warn
  app.log.warn = () => { throw new Error('logger down') }
  t.teardown(() => { app.log.warn = logWarn })
  const stop = subscribeEvent('redirectRefused', () => { throw new Error('sink down') })
  t.teardown(stop)
  const warnings: Error[] = []
  const onWarning = (warning: Error & { code?: string }) => { if (warning.code === CODE) warnings.push(warning) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  t.equal((await app.inject(MATHS)).statusCode, 302)
  t.equal((await app.inject(MATHS)).statusCode, 302)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(warnings.length, 1)
  t.match(warnings[0].message, /fastify-schools-resources:redirect:refused.*dropped/)
})

t.test('a name that is no channel, or a listener that is no function: FST_SR_INVALID_OPTION', async (t) => {
  t.throws(() => subscribeEvent('signInFailure' as SectionEventName, () => {}), errorCodes.FST_SR_INVALID_OPTION)
  t.throws(() => subscribeEvent('toString' as SectionEventName, () => {}), /must be one of signInSucceeded/)
  t.throws(() => subscribeEvent('signedOut', 'log' as unknown as () => void), /subscribeEvent listener.*must be a function/)
})
