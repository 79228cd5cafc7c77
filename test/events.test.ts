import t, { type Test } from 'tap'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createHmac } from 'node:crypto'
import Fastify from 'fastify'
import { errorCodes, eventChannels, redirectOnce, type Member } from '../lib/index.js'
import { AsyncStore } from './helpers/async-store.js'
import {
  buildTestApp, formBody, openLoginForm, postLogin, sessionCookie, signIn, signOut, TEACHER, TEACHER_MEMBER, withCookies,
  type BuildOptions
} from './helpers/app.js'

// Each event of docs/events.md: fired once, with its documented fields, and nothing secret in it.

type Event = Record<string, unknown>
const SECTION = '/schools/resources/'
const MATHS_FILE = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'

/** The events published on `name` while the test runs. */
function listen (t: Test, name: string): Event[] {
  const seen: Event[] = []
  const listener = (message: unknown) => { seen.push(message as Event) }
  subscribe(name, listener)
  t.teardown(() => unsubscribe(name, listener))
  return seen
}

/** The event as a subscriber would log it (everything but the app object). */
const serialized = (event: Event) => JSON.stringify({ ...event, app: undefined })

/** Asserts the fields every event carries, and that none of `secrets` appears anywhere in it. */
function common (t: Test, event: Event, app: unknown, section: string | undefined, secrets: readonly string[]) {
  // The Fastify context that answered: the app's own or one of its children, with the app's server.
  t.equal((event.app as { server: unknown }).server, (app as { server: unknown }).server, 'names its app')
  t.equal(event.section, section, 'and its section')
  t.type(event.requestId, 'string')
  t.equal(event.clientAddress, '127.0.0.1')
  const text = serialized(event)
  for (const secret of secrets) t.notOk(text.includes(secret), `carries no ${secret.slice(0, 12)}…`)
}

const cookieValue = (cookie: string) => cookie.slice(cookie.indexOf('=') + 1)

async function build (t: Test, opts: BuildOptions = {}) {
  const built = await buildTestApp(opts)
  t.teardown(() => built.app.close())
  return built
}

t.test('sign-in succeeded: the member id, never the password or the session id', async (t) => {
  const seen = listen(t, eventChannels.signInSucceeded)
  const { app } = await build(t)
  const form = await openLoginForm(app)
  const res = await postLogin(app, TEACHER, { form })
  t.equal(res.statusCode, 303)
  t.equal(seen.length, 1)
  t.equal(seen[0].memberId, TEACHER_MEMBER.id)
  t.equal(seen[0].method, 'password')
  t.equal(seen[0].provider, undefined)
  common(t, seen[0], app, SECTION, [TEACHER.password, cookieValue(sessionCookie(res)!), form.token, TEACHER.email])
})

t.test('sign-in failed, wrong credentials: a keyed hash of the identifier tried, never the identifier', async (t) => {
  const seen = listen(t, eventChannels.signInFailed)
  const key = 'an-audit-key-of-at-least-32-characters!'
  const { app } = await build(t, { plugin: { auditKey: key } })
  const typed = '  Someone@Example.org '
  const form = await openLoginForm(app)
  t.equal((await postLogin(app, { email: typed, password: 'hunter2-guess' }, { form })).statusCode, 401)
  t.equal(seen.length, 1)
  t.equal(seen[0].reason, 'wrong-credentials')
  t.equal(seen[0].memberId, undefined)
  t.equal(seen[0].identifierHash, createHmac('sha256', key).update('someone@example.org').digest('base64url'), 'HMAC of the trimmed, lower-cased identifier')
  common(t, seen[0], app, SECTION, ['hunter2-guess', 'omeone@', form.token])

  // Without a key: one per process, so the same identifier hashes the same within it, and not as the key above.
  const other = await build(t)
  await postLogin(other.app, { email: 'someone@example.org', password: 'x' })
  await postLogin(other.app, { email: 'SOMEONE@example.org', password: 'y' })
  t.equal(seen.length, 3)
  t.equal(seen[1].identifierHash, seen[2].identifierHash)
  t.not(seen[1].identifierHash, seen[0].identifierHash)
})

t.test('only an email address is hashed: a password typed into the email field never enters the log', async (t) => {
  const failed = listen(t, eventChannels.signInFailed)
  const locked = listen(t, eventChannels.lockedOut)
  const { app } = await build(t, { plugin: { auditKey: 'an-audit-key-of-at-least-32-characters!', lockout: { maxAttempts: 2 } } })
  const statuses = []
  for (const typed of ['hunter2', 'Tr0ub4dor&3', 'not an@address.org', 'teacher@example', 'a@b.c', `${'x'.repeat(320)}@example.org`]) {
    statuses.push((await postLogin(app, { email: typed, password: 'x' })).statusCode)
  }
  t.same(statuses, [401, 401, 401, 401, 401, 400], 'refused (the last as over-long)')
  t.same(failed.map((e) => e.identifierHash), [undefined, undefined, undefined, undefined, undefined, undefined], 'nothing that is no address is hashed')
  t.same(locked.map((e) => e.identifierHash), [], 'no lock yet')
  // The same non-address twice locks its username; the lock's event names no hash either.
  await postLogin(app, { email: 'hunter2', password: 'y' })
  t.equal(locked.length, 1)
  t.equal(locked[0].identifierHash, undefined)
  await postLogin(app, { email: 'Ms.Smith+staff@school.example.org', password: 'x' })
  t.type(failed.at(-1)!.identifierHash, 'string', 'an address is')
})

t.test('a lockout: the failure that completes it, the locked-out event, then locked-out refusals', async (t) => {
  const failed = listen(t, eventChannels.signInFailed)
  const locked = listen(t, eventChannels.lockedOut)
  const { app } = await build(t, { plugin: { lockout: { maxAttempts: 2 } } })
  const statuses = []
  for (let i = 0; i < 3; i++) statuses.push((await postLogin(app, { email: TEACHER.email, password: `wrong-${i}` })).statusCode)
  t.same(statuses, [401, 429, 429])
  t.same(failed.map((e) => e.reason), ['wrong-credentials', 'wrong-credentials', 'locked-out'])
  t.equal(locked.length, 1, 'one locked-out event, when the lock begins')
  t.ok(locked[0].until instanceof Date && (locked[0].until as Date).getTime() > Date.now())
  t.equal(locked[0].identifierHash, failed[0].identifierHash)
  common(t, locked[0], app, SECTION, ['wrong-1', TEACHER.email])
})

t.test('the per-address limit: rate-limited refusals, and no account is locked out', async (t) => {
  const failed = listen(t, eventChannels.signInFailed)
  const locked = listen(t, eventChannels.lockedOut)
  const { app } = await build(t, { plugin: { lockout: false, loginRateLimit: { max: 2 } } })
  for (let i = 0; i < 3; i++) await postLogin(app, { email: `guess-${i}@example.org`, password: 'wrong' })
  t.same(failed.map((e) => e.reason), ['wrong-credentials', 'wrong-credentials', 'rate-limited'])
  t.equal(locked.length, 0)
})

t.test('refusals before the password: csrf, missing credentials, an insecure connection, busy', async (t) => {
  const failed = listen(t, eventChannels.signInFailed)
  const { app } = await build(t)
  const form = await openLoginForm(app)
  // A cross-site post: no token. Its identifier is hashed too.
  const body = formBody({ email: TEACHER.email, password: TEACHER.password })
  t.equal((await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie: form.cookie, ...body.headers }, payload: body.payload })).statusCode, 403)
  t.equal((await postLogin(app, { email: TEACHER.email, password: '' })).statusCode, 400)
  t.same(failed.map((e) => e.reason), ['csrf', 'missing-credentials'])
  t.type(failed[0].identifierHash, 'string')
  common(t, failed[0], app, SECTION, [TEACHER.password, TEACHER.email, form.token])

  // A sign-out with a stale form is no sign-in failure.
  const cookie = await signIn(app)
  t.equal((await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie }, payload: { _csrf: 'stale' } })).statusCode, 403)
  t.equal(failed.length, 2)

  const insecure = await build(t, { session: { cookie: { secure: true } } })
  t.equal((await postLogin(insecure.app, { email: '', password: 'x' })).statusCode, 500)
  t.equal(failed[2].reason, 'insecure-connection')
  t.equal(failed[2].identifierHash, undefined, 'nothing typed, nothing hashed')

  // One password checked at once, one waiting: the third sign-in at once is busy.
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  const slow = async (): Promise<Member | null> => { await gate; return null }
  const busy = await build(t, { plugin: { authenticate: slow, passwordChecks: { concurrent: 1, waiting: 1, perAddress: 2 } } })
  const forms = await Promise.all([1, 2, 3].map(() => openLoginForm(busy.app)))
  const answers = forms.map((f, i) => postLogin(busy.app, { email: `x${i}@example.org`, password: 'x' }, { form: f }))
  while (!failed.some((e) => e.reason === 'busy')) await new Promise((resolve) => setImmediate(resolve))
  release()
  t.same((await Promise.all(answers)).map((r) => r.statusCode).sort(), [401, 401, 503])
  t.same(failed.slice(3).map((e) => e.reason).sort(), ['busy', 'wrong-credentials', 'wrong-credentials'])
})

t.test('signed out: the member id, never the session id or the token', async (t) => {
  const seen = listen(t, eventChannels.signedOut)
  const { app } = await build(t)
  const cookie = await signIn(app)
  t.equal((await signOut(app, cookie)).statusCode, 303)
  t.equal(seen.length, 1)
  t.equal(seen[0].memberId, TEACHER_MEMBER.id)
  common(t, seen[0], app, SECTION, [cookieValue(cookie), TEACHER.password])
})

t.test('signed out by a browser that was not signed in: the event names no member', async (t) => {
  const seen = listen(t, eventChannels.signedOut)
  const { app } = await build(t)
  // A visitor's login form carries a token for its own CSRF cookie: a sign-out posted with it is valid.
  const form = await openLoginForm(app)
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: form.cookie }, payload: { _csrf: form.token } })
  t.equal(out.statusCode, 303)
  t.equal(seen.length, 1)
  t.equal(seen[0].memberId, undefined)
  common(t, seen[0], app, SECTION, [form.token])
})

t.test('access refused: the member, what was refused and the path without its query', async (t) => {
  const seen = listen(t, eventChannels.accessRefused)
  const { app } = await build(t)
  const cookie = await signIn(app)
  const res = await app.inject({ url: '/schools/resources/resources/staff-room/?q=report', headers: { cookie } })
  t.equal(res.statusCode, 403)
  t.equal(seen.length, 1)
  t.equal(seen[0].memberId, TEACHER_MEMBER.id)
  t.equal(seen[0].title, 'Staff room')
  t.equal(seen[0].path, '/schools/resources/resources/staff-room/')
  common(t, seen[0], app, SECTION, [cookieValue(cookie), formTokenIn(res.body)])
  await app.inject({ url: '/schools/resources/resources/staff-room/', headers: { cookie } })
  t.equal(seen[1].path, '/schools/resources/resources/staff-room/')
})

function formTokenIn (html: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(html)![1]
}

t.test('file downloaded: one per 200 or 206 answer, none for a 304 or a HEAD', async (t) => {
  const seen = listen(t, eventChannels.fileDownloaded)
  const { app } = await build(t)
  const cookie = await signIn(app)
  const full = await app.inject({ url: MATHS_FILE, headers: { cookie } })
  t.equal(full.statusCode, 200)
  t.equal((await app.inject({ url: MATHS_FILE, headers: { cookie, range: 'bytes=0-9' } })).statusCode, 206)
  t.equal((await app.inject({ url: MATHS_FILE, headers: { cookie, 'if-none-match': String(full.headers.etag) } })).statusCode, 304)
  t.equal((await app.inject({ method: 'HEAD', url: MATHS_FILE, headers: { cookie } })).statusCode, 200)
  t.equal((await app.inject({ url: '/schools/resources/files/maths/maths-fractions-wall/other.pdf', headers: { cookie } })).statusCode, 404)
  t.same(seen.map((e) => e.status), [200, 206])
  t.match(seen[0], { memberId: TEACHER_MEMBER.id, category: 'maths', resource: 'maths-fractions-wall', file: 'fraction-wall.pdf' })
  common(t, seen[0], app, SECTION, [cookieValue(cookie)])
})

t.test('redirect refused: the section\'s, and a host\'s own', async (t) => {
  const seen = listen(t, eventChannels.redirectRefused)
  const { app } = await build(t)
  await app.inject('/schools/resources/resources/maths/')
  t.equal(seen.length, 1)
  t.equal(seen[0].refusedLocation, SECTION)
  t.match(seen[0].existingLocation, /\/Security\/login\?BackURL=/)
  t.equal(seen[0].expected, true, 'the access guard\'s own refusal, on every anonymous visit')
  common(t, seen[0], app, SECTION, [])

  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(redirectOnce)
  host.get('/go', async (_request, reply) => { reply.redirectOnce('/a'); reply.redirectOnce('/b'); return reply })
  await host.inject('/go')
  t.equal(seen.length, 2)
  t.match(seen[1], { section: undefined, existingLocation: '/a', refusedLocation: '/b', expected: false })

  // A host route that redirects a visitor after the section's guard answered: not the guard's own.
  const guarded = await build(t, {
    extend: (app) => {
      app.addHook('onSend', async (_request, reply) => { reply.redirectOnce('/elsewhere') })
    }
  })
  await guarded.app.inject('/schools/resources/resources/maths/')
  t.same(seen.slice(2).map((e) => [e.refusedLocation, e.expected]).sort(), [['/elsewhere', false], [SECTION, true]])
})

/** A session store that is down for reads: every request with a session cookie meets the outage. */
class DownStore extends AsyncStore {
  down: (() => Error) | undefined

  override get (sessionId: string, callback: (err: unknown, result?: unknown) => void): void {
    if (this.down === undefined) return super.get(sessionId, callback)
    const error = this.down()
    setImmediate(() => callback(error))
  }
}

t.test('store unavailable: once per outage, however many requests meet it at once', async (t) => {
  const seen = listen(t, eventChannels.storeUnavailable)
  const store = new DownStore()
  const { app } = await build(t, { session: { store } })
  const cookie = await signIn(app)
  store.down = () => new errorCodes.FST_SR_STORE_UNAVAILABLE('GET failed for sess:secret-key')
  const answers = await Promise.all(Array.from({ length: 20 }, () => app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })))
  t.ok(answers.every((a) => a.statusCode === 503))
  t.equal(seen.length, 1, 'one event for 20 parallel requests')
  t.equal(seen[0].code, 'FST_SR_STORE_UNAVAILABLE')
  common(t, seen[0], app, undefined, [cookieValue(cookie), 'secret-key'])

  // A client's own error class (node-redis names none): the class names it.
  class ClientClosedError extends Error {}
  const other = new DownStore()
  const second = await build(t, { session: { store: other } })
  const otherCookie = await signIn(second.app)
  other.down = () => new ClientClosedError('The client is closed')
  t.equal((await second.app.inject({ url: SECTION, headers: { cookie: withCookies(otherCookie, await second.app.inject(SECTION)) } })).statusCode, 503)
  t.equal(seen.length, 2)
  t.equal(seen[1].code, 'ClientClosedError')
})

t.test('nobody listening: nothing is published', async (t) => {
  const { app } = await build(t)
  // No subscriber here: the channels report none, so no payload is built (events.ts publishes only then).
  for (const name of Object.values(eventChannels)) {
    const { channel } = await import('node:diagnostics_channel')
    t.notOk(channel(name).hasSubscribers, name)
  }
  t.equal((await postLogin(app, { email: 'x@example.org', password: 'y' })).statusCode, 401)
})
