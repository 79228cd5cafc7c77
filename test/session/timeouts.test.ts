import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySecureSession from '@fastify/secure-session'
import { randomBytes } from 'node:crypto'
import schoolsResources from '../../lib/index.js'
import { resolveOptions } from '../../lib/options.js'
import { seenStep, spokenDuration } from '../../lib/session/timeouts.js'
import { english, pageLanguage } from '../helpers/page-language.js'
import { BASE_URL, buildTestApp, CountingCatalog, postLogin, signIn, TEACHER, teacherOnly, withCookies, type BuildOptions } from '../helpers/app.js'
import type { AsyncStore } from '../helpers/async-store.js'

// The idle and absolute timeouts: times kept in the session, checked in the access guard of every
// members-only route (the host's too), the spec's redirect unchanged, the notice on the login page.

const MATHS = '/schools/resources/resources/maths/'
const MINUTE = 60 * 1000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Times { signedInAt: number, seenAt: number }

/** The times the one stored session holds (the test app's store keeps sessions as JSON). */
function storedTimes (store: AsyncStore): Times | undefined {
  const sessions = [...store.sessions.values()].map((json) => JSON.parse(json))
  return sessions.find((s) => s.member !== undefined)?.['member.times']
}

/** Moves the stored session's times back by `ms` (as if that much time had passed). */
function age (store: AsyncStore, ms: number, which: Array<keyof Times> = ['signedInAt', 'seenAt']): void {
  for (const [id, json] of store.sessions) {
    const session = JSON.parse(json)
    if (session['member.times'] === undefined) continue
    for (const key of which) session['member.times'][key] -= ms
    store.sessions.set(id, JSON.stringify(session))
  }
}

async function app (t: Test, opts: BuildOptions = {}) {
  const built = await buildTestApp(opts)
  t.teardown(() => built.app.close())
  return built
}

t.test('timeouts: the defaults, and each refusal of a bad value', async (t) => {
  const base = { catalog: new CountingCatalog(), authenticate: teacherOnly }
  t.same(resolveOptions(base).timeouts, { idleMs: 60 * MINUTE, absoluteMs: 12 * 60 * MINUTE }, '60 minutes idle, 12 hours in all')
  t.same(resolveOptions({ ...base, timeouts: { idleMs: 3000 } }).timeouts, { idleMs: 3000, absoluteMs: 12 * 60 * MINUTE })
  t.same(resolveOptions({ ...base, timeouts: { idleMs: false } }).timeouts, { idleMs: false, absoluteMs: 12 * 60 * MINUTE }, 'one limit off')
  t.equal(resolveOptions({ ...base, timeouts: false }).timeouts, false, 'both off')
  const getMember = () => null
  t.equal(resolveOptions({ catalog: base.catalog, signIn: false, getMember }).timeouts, false, 'with getMember, left out is off')
  t.equal(resolveOptions({ catalog: base.catalog, signIn: false, getMember, timeouts: false }).timeouts, false)
  t.throws(() => resolveOptions({ catalog: base.catalog, signIn: false, getMember, timeouts: {} } as never), { code: 'FST_SR_INVALID_OPTION', message: /"timeouts": is for the section's own session; with getMember/ })
  for (const [timeouts, name] of [
    [{ idleMs: 0 }, 'timeouts.idleMs'], [{ idleMs: 999 }, 'timeouts.idleMs'], [{ idleMs: 1.5e3 + 0.5 }, 'timeouts.idleMs'], [{ idleMs: '60m' }, 'timeouts.idleMs'],
    [{ absoluteMs: -1 }, 'timeouts.absoluteMs'], [{ absoluteMs: true }, 'timeouts.absoluteMs'], [{ idle: 3000 }, 'timeouts.idle'], ['1h', 'timeouts'], [[], 'timeouts']
  ] as const) {
    t.throws(() => resolveOptions({ ...base, timeouts } as never), { code: 'FST_SR_INVALID_OPTION', message: new RegExp(`"${name.replace('.', '\\.')}"`) }, JSON.stringify(timeouts))
  }
  t.throws(() => resolveOptions({ ...base, timeouts: { idleMs: 10 } }), { message: /1000 or more .* or false to turn it off/ })
  t.throws(() => resolveOptions({ ...base, keepSessionData: ['member.times'] }), { code: 'FST_SR_INVALID_OPTION', message: /must not list "member.times": the session's times start again at sign-in/ })
})

t.test('sign-in starts the times; a request writes the last-seen time only once a step has passed', async (t) => {
  const { app: server, store } = await app(t)
  const before = Date.now()
  const cookie = await signIn(server)
  const times = storedTimes(store)!
  t.ok(times.signedInAt >= before && times.signedInAt <= Date.now(), 'signed in now')
  t.equal(times.seenAt, times.signedInAt)
  t.equal((await server.inject({ url: MATHS, headers: { cookie } })).statusCode, 200)
  t.same(storedTimes(store), times, 'a request within the step writes nothing')
  age(store, 61 * 1000)
  const aged = storedTimes(store)!
  t.equal((await server.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, '61 s later, well within the idle limit')
  const seen = storedTimes(store)!
  t.equal(seen.signedInAt, aged.signedInAt, 'the sign-in time stays')
  t.ok(seen.seenAt >= Date.now() - 1000, 'the last-seen time moved to now')
  t.equal(seenStep(60 * MINUTE), MINUTE, 'once a minute')
  t.equal(seenStep(3000), 300, 'or a tenth of a short idle limit')
  t.equal(seenStep(5), 1)
})

t.test('an idle session gets the spec\'s redirect, byte for byte, and the login page says why, once', async (t) => {
  const { app: server, store } = await app(t)
  const visitor = await server.inject({ url: MATHS })
  const cookie = await signIn(server)
  age(store, 60 * MINUTE, ['seenAt'])
  const res = await server.inject({ url: MATHS, headers: { cookie } })
  t.equal(res.statusCode, visitor.statusCode, 'the redirect')
  t.equal(res.headers.location, visitor.headers.location, 'to the same address')
  t.equal(res.body, visitor.body, 'with the same body')
  t.equal(res.headers['cache-control'], visitor.headers['cache-control'])
  const notice = res.cookies.find((c) => c.name === 'sr_notice')
  t.match(notice, { value: 'idle', path: '/Security/login', maxAge: 60, httpOnly: true, sameSite: 'Lax' }, 'the reason travels in a short cookie')
  t.notOk(notice?.secure, 'not Secure over http')
  t.equal(visitor.cookies.length, 0, 'a visitor gets no cookie')
  t.equal(storedTimes(store), undefined, 'the session is gone from the store')
  t.equal((await server.inject({ url: MATHS, headers: { cookie } })).statusCode, 302, 'and stays signed out')

  const login = await server.inject({ url: '/Security/login', headers: { cookie: `sr_notice=${notice!.value}` } })
  t.match(login.body, '<p class="notice" role="status">You were signed out after 60 minutes without activity. Sign in again to go on.</p>')
  t.notMatch(login.body, 'role="alert"', 'a notice, not an error')
  t.match(login.cookies.find((c) => c.name === 'sr_notice'), { value: '', path: '/Security/login' }, 'the login page clears the cookie')
  const again = await server.inject({ url: '/Security/login' })
  t.notMatch(again.body, 'signed out after', 'without the cookie, no notice')
  const forged = await server.inject({ url: '/Security/login', headers: { cookie: 'sr_notice=%3Cscript%3E' } })
  t.notMatch(forged.body, 'signed out', 'a value that is no reason shows nothing')
  t.notMatch(forged.body, '<script>')
  t.match(forged.cookies.find((c) => c.name === 'sr_notice'), { value: '' }, 'and is cleared too')
})

t.test('the absolute limit ends an active session; its notice says so', async (t) => {
  const { app: server, store } = await app(t, { plugin: { timeouts: { idleMs: false, absoluteMs: 2 * 60 * MINUTE } } })
  const cookie = await signIn(server)
  age(store, 2 * 60 * MINUTE - 5000)
  t.equal((await server.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, 'just before the limit, long idle: no idle limit')
  age(store, 5000, ['signedInAt'])
  const res = await server.inject({ url: MATHS, headers: { cookie } })
  t.equal(res.statusCode, 302)
  const notice = res.cookies.find((c) => c.name === 'sr_notice')
  t.equal(notice?.value, 'absolute')
  const login = await server.inject({ url: '/Security/login', headers: { cookie: 'sr_notice=absolute' } })
  t.match(login.body, 'You were signed out 2 hours after signing in.')
  const idle = await server.inject({ url: '/Security/login', headers: { cookie: 'sr_notice=idle' } })
  t.notMatch(idle.body, 'signed out', 'no idle notice where the idle limit is off')
})

t.test('the host\'s members-only routes and the section index enforce them too', async (t) => {
  const { app: server, store } = await app(t, { extend: (a) => a.get('/members', { config: { membersOnly: true } }, async () => 'members') })
  const cookie = await signIn(server)
  t.equal((await server.inject({ url: '/members', headers: { cookie } })).body, 'members')
  age(store, 61 * MINUTE)
  const res = await server.inject({ url: '/members', headers: { cookie } })
  t.equal(res.statusCode, 302, 'a host route: the login redirect')
  t.equal(res.headers.location, `${BASE_URL}/Security/login?BackURL=%2Fmembers`)
  t.equal(res.cookies.find((c) => c.name === 'sr_notice')?.value, 'idle')

  const cookie2 = await signIn(server)
  age(store, 61 * MINUTE)
  const index = await server.inject({ url: '/schools/resources/', headers: { cookie: cookie2 } })
  t.equal(index.statusCode, 200, 'the index is open to everyone')
  t.notMatch(index.body, TEACHER_NAME, 'but as a visitor\'s')
  t.equal(index.cookies.find((c) => c.name === 'sr_notice')?.value, 'idle', 'with the notice for the login page')
})
const TEACHER_NAME = 'Ada Teacher'

t.test('a session from before the upgrade gets its times at its first request; timeouts: false keeps none', async (t) => {
  const { app: server, store } = await app(t)
  const cookie = await signIn(server)
  for (const [id, json] of store.sessions) {
    const session = JSON.parse(json)
    delete session['member.times']
    store.sessions.set(id, JSON.stringify(session))
  }
  const before = Date.now()
  t.equal((await server.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, 'nobody signed out by the upgrade')
  t.ok(storedTimes(store)!.signedInAt >= before, 'its times start now')
  for (const odd of ['soon', null, { signedInAt: 'x', seenAt: 1 }, { signedInAt: 1 }]) {
    for (const [id, json] of store.sessions) store.sessions.set(id, JSON.stringify({ ...JSON.parse(json), 'member.times': odd }))
    t.equal((await server.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, `times that are not times (${JSON.stringify(odd)}) start again`)
    t.ok(storedTimes(store)!.seenAt >= before)
  }

  const { app: off, store: offStore } = await app(t, { plugin: { timeouts: false } })
  const offCookie = await signIn(off)
  t.equal(storedTimes(offStore), undefined, 'no times kept')
  t.equal((await off.inject({ url: MATHS, headers: { cookie: offCookie } })).statusCode, 200)
  t.equal(storedTimes(offStore), undefined)
})

t.test('real time: activity keeps a session alive, a pause ends it', async (t) => {
  const { app: server } = await app(t, { plugin: { timeouts: { idleMs: 1000 } } })
  const cookie = await signIn(server)
  for (let i = 0; i < 5; i++) {
    await sleep(400)
    t.equal((await server.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, `a request ${(i + 1) * 400} ms in`)
  }
  await sleep(1100)
  const res = await server.inject({ url: MATHS, headers: { cookie } })
  t.equal(res.statusCode, 302, 'a second without one: signed out')
  const login = await server.inject({ url: '/Security/login', headers: { cookie: 'sr_notice=idle' } })
  t.match(login.body, 'You were signed out after 1 second without activity.')
})

t.test('@fastify/secure-session: the times travel in its cookie', async (t) => {
  const server: FastifyInstance = Fastify()
  t.teardown(() => server.close())
  await server.register(fastifyCookie)
  await server.register(fastifySecureSession, { key: randomBytes(32), cookie: { path: '/', httpOnly: true, sameSite: 'lax' } })
  await server.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL, timeouts: { idleMs: 1000 } })
  const signedIn = await postLogin(server, { email: TEACHER.email, password: TEACHER.password })
  t.equal(signedIn.statusCode, 303)
  const cookie = withCookies('', signedIn, true)
  t.equal((await server.inject({ url: MATHS, headers: { cookie } })).statusCode, 200)
  await sleep(1100)
  const res = await server.inject({ url: MATHS, headers: { cookie } })
  t.equal(res.statusCode, 302, 'idle past the limit: the redirect')
  t.equal(res.cookies.find((c) => c.name === 'sr_notice')?.value, 'idle')
  t.equal(res.cookies.find((c) => c.name === 'session')?.value, '', 'and the session cookie cleared')
})

t.test('a notice\'s duration in words', async (t) => {
  const spoken = (ms: number, language = english) => {
    const { key, values } = spokenDuration(ms)
    return language.t(key, values)
  }
  t.equal(spoken(60 * MINUTE), '60 minutes', 'the default idle limit as a school says it')
  t.equal(spoken(2 * 60 * MINUTE), '2 hours')
  t.equal(spoken(12 * 60 * MINUTE), '12 hours')
  t.equal(spoken(90 * MINUTE), '90 minutes')
  t.equal(spoken(MINUTE), '1 minute')
  t.equal(spoken(30 * MINUTE), '30 minutes')
  t.equal(spoken(3000), '3 seconds')
  t.equal(spoken(1000), '1 second')
  t.equal(spoken(MINUTE, pageLanguage('fr')), '1 minute', 'French: one')
  t.equal(spoken(2 * 60 * MINUTE, pageLanguage('de')), '2 Stunden', 'German: other')
  t.equal(spoken(2 * MINUTE, pageLanguage('cy')), 'dwy funud', 'Welsh: two, in words (munud is feminine)')
})
