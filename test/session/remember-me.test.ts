import t, { type Test } from 'tap'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifySecureSession from '@fastify/secure-session'
import { createHash, randomBytes } from 'node:crypto'
import schoolsResources, { anonymousShortCircuit, eventChannels, MemoryAttemptStore, MemoryTokenStore, type SignedOutEverywhereEvent, type SignInSucceededEvent, type TokenStore } from '../../lib/index.js'
import { resolveOptions } from '../../lib/options.js'
import { errorCodes } from '../../lib/errors.js'
import { RedisTokenStore } from '../../lib/stores/redis/index.js'
import { ROTATION_GRACE_MS, wantsRemember } from '../../lib/session/remember-me.js'
import { AsyncStore } from '../helpers/async-store.js'
import { BASE_URL, buildTestApp, SECRET, capturedLogs, CountingCatalog, postLogin, postSignOutForm, sessionCookie, TEACHER, TEACHER_MEMBER, teacherOnly, withCookies, type BuildOptions } from '../helpers/app.js'
import { REDIS_URL, connectedClient, deleteKeys, uniquePrefix } from '../helpers/redis.js'

// "Keep me signed in on this device" (issue 38, item 1): the box, the split selector/validator token, its
// rotation with a 60 s grace, a stolen copy, and how it meets sign-out, sign out everywhere and timeouts.

const MATHS = '/schools/resources/resources/maths/'
const DAYS_30 = 30 * 24 * 60 * 60 * 1000
const TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/

async function app (t: Test, opts: BuildOptions = {}) {
  const built = await buildTestApp(opts)
  t.teardown(() => built.app.close())
  return built
}

function listen<T> (t: Test, name: keyof typeof eventChannels): T[] {
  const seen: T[] = []
  const listener = (message: unknown) => { seen.push(message as T) }
  subscribe(eventChannels[name], listener)
  t.teardown(() => unsubscribe(eventChannels[name], listener))
  return seen
}

/** The remember cookie a response set (over http). */
function rememberCookie (res: LightMyRequestResponse, name = 'sr_remember') {
  return res.cookies.find((c) => c.name === name)
}

/** Signs the teacher in with the box ticked: the session cookie, and the remember cookie's `name=value`. */
async function signInRemembered (server: FastifyInstance, remember: unknown = '1') {
  const res = await postLogin(server, { email: TEACHER.email, password: TEACHER.password, remember })
  if (res.statusCode !== 303) throw new Error(`sign-in failed: ${res.statusCode}`)
  const token = rememberCookie(res)
  return { res, session: sessionCookie(res)!, remember: `sr_remember=${token!.value}`, value: token!.value }
}

interface Remembered { id: string | number, hash: string | null, previous?: { hash: string, rotatedAt: number }, expiresAt: number, member?: unknown, generation?: number, version?: string | number }

async function recordOf (store: TokenStore, value: string): Promise<Remembered | undefined> {
  const record = await store.get(`remember:${TOKEN.exec(value)![1]}`)
  return record === undefined ? undefined : JSON.parse(record.data) as Remembered
}

/** Rewrites the record behind `value` with `change` (as if time had passed). */
async function rewrite (store: TokenStore, value: string, change: (r: Remembered) => void): Promise<void> {
  const key = `remember:${TOKEN.exec(value)![1]}`
  const record = (await store.get(key))!
  const data = JSON.parse(record.data) as Remembered
  change(data)
  await store.set(key, { memberId: record.memberId, data: JSON.stringify(data) }, 60_000)
}

const get = (server: FastifyInstance, cookie: string, url = MATHS) => server.inject({ url, headers: { cookie } })

t.test('rememberMe: the defaults, off, and each refusal of a bad value', async (t) => {
  const base = { catalog: new CountingCatalog(), authenticate: teacherOnly }
  t.same(resolveOptions(base).rememberMe, { maxAgeMs: DAYS_30, store: undefined }, '30 days, the app\'s in-process store')
  const store = new MemoryTokenStore()
  t.same(resolveOptions({ ...base, rememberMe: { maxAgeMs: 60_000, store } }).rememberMe, { maxAgeMs: 60_000, store })
  t.equal(resolveOptions({ ...base, rememberMe: false }).rememberMe, false)
  const getMember = () => null
  t.equal(resolveOptions({ catalog: base.catalog, signIn: false, getMember }).rememberMe, false, 'with getMember, left out is off')
  t.equal(resolveOptions({ catalog: base.catalog, signIn: false, getMember, rememberMe: false }).rememberMe, false)
  t.throws(() => resolveOptions({ catalog: base.catalog, signIn: false, getMember, rememberMe: {} } as never), { code: 'FST_SR_INVALID_OPTION', message: /"rememberMe": is for the section's own session; with getMember/ })
  for (const [rememberMe, name] of [
    [{ maxAgeMs: 59_999 }, 'rememberMe.maxAgeMs'], [{ maxAgeMs: 401 * 24 * 60 * 60 * 1000 }, 'rememberMe.maxAgeMs'], [{ maxAgeMs: '30d' }, 'rememberMe.maxAgeMs'],
    [{ maxAgeMs: 60_000.5 }, 'rememberMe.maxAgeMs'], [{ store: {} }, 'rememberMe.store'], [{ store: null }, 'rememberMe.store'], [{ days: 30 }, 'rememberMe.days'], [true, 'rememberMe']
  ] as const) {
    t.throws(() => resolveOptions({ ...base, rememberMe } as never), { code: 'FST_SR_INVALID_OPTION', message: new RegExp(`"${name.replace('.', '\\.')}"`) }, JSON.stringify(rememberMe))
  }
  t.throws(() => resolveOptions({ ...base, rememberMe: { store: {} as never } }), { message: /must implement get, set, take, deleteAll/ })
  t.throws(() => resolveOptions({ ...base, returnParam: 'remember' }), { code: 'FST_SR_INVALID_OPTION', message: /"returnParam".*remember/ })
  t.same([wantsRemember('1'), wantsRemember(1), wantsRemember(true), wantsRemember('on'), wantsRemember('true'), wantsRemember(undefined), wantsRemember(0)], [true, true, true, false, false, false, false])
})

t.test('the form\'s box: off by default, labelled, with its warning; none with rememberMe: false', async (t) => {
  const { app: server } = await app(t)
  const page = await server.inject('/Security/login')
  t.match(page.body, '<input id="remember" name="remember" type="checkbox" value="1" aria-describedby="remember-hint">')
  t.notMatch(page.body, /id="remember"[^>]*checked/, 'not ticked')
  t.match(page.body, '<label for="remember">Keep me signed in on this device</label>')
  t.match(page.body, /<p class="hint" id="remember-hint">Don&#39;t use this on a shared or public computer/)
  const { app: off } = await app(t, { plugin: { rememberMe: false } })
  t.notMatch((await off.inject('/Security/login')).body, 'remember', 'no box')
  const res = await postLogin(off, { email: TEACHER.email, password: TEACHER.password, remember: '1' })
  t.equal(res.statusCode, 303)
  t.equal(rememberCookie(res), undefined, 'the field does nothing when off')
})

t.test('unticked: no remember cookie; ticked: the cookie, and the store keeps a hash, never the validator', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const plain = await postLogin(server, { email: TEACHER.email, password: TEACHER.password })
  t.equal(plain.statusCode, 303)
  t.equal(plain.cookies.filter((c) => c.name.includes('remember')).length, 0, 'no cookie without the box')
  t.equal(tokens.size, 0)
  for (const remember of ['1', 1, true]) {
    const res = await postLogin(server, { email: TEACHER.email, password: TEACHER.password, remember })
    t.ok(rememberCookie(res), `remember: ${JSON.stringify(remember)}`)
  }
  const { res, value } = await signInRemembered(server)
  const cookie = rememberCookie(res)!
  t.match(cookie, { path: '/', httpOnly: true, sameSite: 'Lax', maxAge: DAYS_30 / 1000 })
  t.notOk(cookie.secure, 'not Secure over http')
  t.notOk(cookie.domain)
  const [, selector, validator] = TOKEN.exec(value)!
  t.equal(Buffer.from(selector, 'base64url').length, 16)
  t.equal(Buffer.from(validator, 'base64url').length, 32)
  const stored = await tokens.get(`remember:${selector}`)
  t.equal(stored?.memberId, 't-1')
  const data = JSON.parse(stored!.data) as Remembered
  t.equal(data.hash, createHash('sha256').update(validator).digest('hex'), 'the validator\'s SHA-256')
  t.notMatch(stored!.data, validator, 'never the validator')
  t.equal(data.id, 't-1', 'the id as given')
  t.same(data.member, TEACHER_MEMBER, 'without findMember, the member as the session keeps it')
  t.ok(Math.abs(data.expiresAt - (Date.now() + DAYS_30)) < 5000)
})

t.test('over https (a trusted proxy): the __Host- cookie, Secure', async (t) => {
  const { app: server } = await app(t, { fastify: { trustProxy: '127.0.0.1' } })
  const res = await postLogin(server, { email: TEACHER.email, password: TEACHER.password, remember: '1' }, { headers: { 'x-forwarded-proto': 'https' } })
  t.equal(res.statusCode, 303)
  const cookie = rememberCookie(res, '__Host-sr_remember')!
  t.match(cookie, { path: '/', httpOnly: true, secure: true, sameSite: 'Lax', maxAge: DAYS_30 / 1000 })
  t.equal(rememberCookie(res), undefined, 'no plain sr_remember')
  const back = await server.inject({ url: MATHS, headers: { cookie: `__Host-sr_remember=${cookie.value}`, 'x-forwarded-proto': 'https' } })
  t.equal(back.statusCode, 200, 'the https cookie signs in over https')
  const plain = await server.inject({ url: MATHS, headers: { cookie: `__Host-sr_remember=${cookie.value}` } })
  t.equal(plain.statusCode, 302, 'but not over http, where only sr_remember is read')
})

t.test('a browser that comes back without a session: signed in, the page served, a new token', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const events = listen<SignInSucceededEvent>(t, 'signInSucceeded')
  const { remember, value } = await signInRemembered(server)
  const before = await recordOf(tokens, value)
  store.sessions.clear()
  const res = await get(server, remember)
  t.equal(res.statusCode, 200, 'no redirect: the page')
  t.match(res.body, '<h1>Mathematics</h1>')
  t.match(events.at(-1), { memberId: 't-1', method: 'remembered', section: '/schools/resources/' })
  t.notMatch(JSON.stringify(events.at(-1), (k, v) => k === 'app' ? undefined : v), TOKEN.exec(value)![2], 'the event carries no token')
  const next = rememberCookie(res)!
  t.not(next.value, value, 'a new token')
  t.match(next, { path: '/', httpOnly: true, sameSite: 'Lax' })
  t.ok(next.maxAge! <= DAYS_30 / 1000 && next.maxAge! > DAYS_30 / 1000 - 10, 'its time left')
  t.equal((await recordOf(tokens, next.value))!.expiresAt, before!.expiresAt, 'the rotation keeps the device\'s expiry')
  const old = (await recordOf(tokens, value))!
  t.equal(old.hash, null, 'the old selector keeps no current validator')
  t.equal(old.previous?.hash, before!.hash, 'only the hash it had, for the grace')
  const session = sessionCookie(res)!
  t.ok(session, 'a session cookie')
  t.equal(store.sessions.size, 1, 'one session stored')
  t.equal((await get(server, session)).statusCode, 200, 'the new session works on its own')
  t.equal((await get(server, `sr_remember=${next.value}`)).statusCode, 200, 'and so does the new token')
})

t.test('the login page, the index and a host\'s members-only route sign a remembered device in', async (t) => {
  const { app: server, store } = await app(t, { extend: (a) => a.get('/members', { config: { membersOnly: true } }, async (request) => `members: ${request.schoolsMember?.name}`) })
  let { remember } = await signInRemembered(server)
  store.sessions.clear()
  const login = await get(server, remember, '/Security/login')
  t.match(login.body, 'You are signed in as <strong>Ada Teacher</strong>')
  remember = `sr_remember=${rememberCookie(login)!.value}`
  store.sessions.clear()
  const index = await get(server, remember, '/schools/resources/')
  t.match(index.body, 'Sign out')
  remember = `sr_remember=${rememberCookie(index)!.value}`
  store.sessions.clear()
  const host = await get(server, remember, '/members')
  t.equal(host.body, 'members: Ada Teacher')
})

t.test('two requests at once with one token: both signed in, nothing forgotten', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const seen = listen<SignedOutEverywhereEvent>(t, 'signedOutEverywhere')
  const { remember } = await signInRemembered(server)
  store.sessions.clear()
  const both = await Promise.all([get(server, remember), get(server, remember), get(server, remember, '/schools/resources/')])
  t.same(both.map((r) => r.statusCode), [200, 200, 200], 'all signed in')
  t.equal(seen.length, 0, 'no alarm')
  for (const res of both) {
    store.sessions.clear()
    t.equal((await get(server, `sr_remember=${rememberCookie(res)!.value}`)).statusCode, 200, 'whichever cookie the browser kept works')
  }
})

t.test('a rotated validator within 60 s signs in; later it is a stolen copy: every device and session of the member ends', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const seen = listen<SignedOutEverywhereEvent>(t, 'signedOutEverywhere')
  const visitor = await server.inject({ url: MATHS })
  const { remember, value } = await signInRemembered(server)
  const laptop = await signInRemembered(server)
  const otherSession = sessionCookie(await postLogin(server, { email: TEACHER.email, password: TEACHER.password }))!
  store.sessions.clear()
  const rotated = await get(server, remember)
  t.equal(rotated.statusCode, 200)
  const again = await get(server, remember)
  t.equal(again.statusCode, 200, 'the old validator again, within the grace: signed in')
  t.equal(seen.length, 0)

  const thirdSession = sessionCookie(await postLogin(server, { email: TEACHER.email, password: TEACHER.password }))!
  await rewrite(tokens, value, (r) => { r.previous!.rotatedAt -= ROTATION_GRACE_MS + 1 })
  const stolen = await get(server, remember)
  t.equal(stolen.statusCode, visitor.statusCode, 'the spec\'s redirect')
  t.equal(stolen.headers.location, visitor.headers.location)
  t.equal(stolen.body, visitor.body)
  t.match(rememberCookie(stolen), { value: '', path: '/' }, 'the cookie cleared')
  t.match(seen, [{ memberId: 't-1', requestedBy: 'stolen-remember-token', section: '/schools/resources/' }], 'the audit event')
  t.equal(tokens.size, 0, 'every remembered device of the member forgotten')
  t.equal((await get(server, laptop.remember)).statusCode, 302, 'the other device is signed out')
  t.equal((await get(server, `sr_remember=${rememberCookie(rotated)!.value}`)).statusCode, 302, 'so is the thief\'s new token')
  t.equal((await get(server, thirdSession)).statusCode, 302, 'and every session of the member')
  t.equal((await get(server, otherSession)).statusCode, 302)
})

t.test('a validator the selector never had is a stolen copy too', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const seen = listen<SignedOutEverywhereEvent>(t, 'signedOutEverywhere')
  const { value } = await signInRemembered(server)
  const guessed = `${TOKEN.exec(value)![1]}.${'A'.repeat(43)}`
  t.equal((await get(server, `sr_remember=${guessed}`)).statusCode, 302)
  t.equal(seen.length, 1)
  t.equal(tokens.size, 0)
})

t.test('a forged, expired or unknown token: the spec\'s redirect, the cookie cleared, nothing stored', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const seen = listen<SignedOutEverywhereEvent>(t, 'signedOutEverywhere')
  const visitor = await server.inject({ url: MATHS })
  const { value } = await signInRemembered(server)
  const expired = await signInRemembered(server)
  await rewrite(tokens, expired.value, (r) => { r.expiresAt = Date.now() - 1 })
  const corrupt = await signInRemembered(server)
  await rewrite(tokens, corrupt.value, (r) => { r.hash = 'not a hash' })
  store.sessions.clear()
  const unknown = `${'B'.repeat(22)}.${TOKEN.exec(value)![2]}`
  for (const [name, cookie] of [['forged', 'sr_remember=%3Cscript%3E'], ['short', `sr_remember=${value.slice(0, -1)}`], ['unknown', `sr_remember=${unknown}`],
    ['expired', expired.remember], ['not ours', corrupt.remember]] as const) {
    const res = await get(server, cookie)
    t.equal(res.statusCode, 302, name)
    t.equal(res.headers.location, visitor.headers.location, `${name}: the Location unchanged`)
    t.equal(res.body, visitor.body)
    t.match(rememberCookie(res), { value: '', path: '/' }, `${name}: cleared`)
    t.equal(sessionCookie(res), undefined, `${name}: no session cookie`)
    t.equal(store.sessions.size, 0, `${name}: nothing stored`)
  }
  t.equal(seen.length, 0, 'none of them is an alarm')
})

t.test('sign-out forgets this device; the logout form\'s everywhere=1 and the host API forget every one', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const laptop = await signInRemembered(server)
  const phone = await signInRemembered(server)
  const cookie = `${laptop.session}; ${laptop.remember}`
  const page = await get(server, cookie, '/schools/resources/')
  const out = await postSignOutForm(server, withCookies(cookie, page), page)
  t.equal(out.statusCode, 303)
  t.match(rememberCookie(out), { value: '', path: '/' })
  t.equal(await recordOf(tokens, laptop.value), undefined, 'this device forgotten')
  t.ok(await recordOf(tokens, phone.value), 'the phone still remembered')
  store.sessions.clear()
  t.equal((await get(server, laptop.remember)).statusCode, 302)

  const phoneCookie = `${phone.session}; ${phone.remember}`
  const tablet = await signInRemembered(server)
  const phonePage = await get(server, phoneCookie, '/schools/resources/')
  const everywhere = await postSignOutForm(server, withCookies(phoneCookie, phonePage), phonePage, { everywhere: '1' })
  t.equal(everywhere.statusCode, 303)
  t.equal(tokens.size, 0, 'everywhere=1: every device forgotten')
  t.equal((await get(server, tablet.remember)).statusCode, 302)

  const desk = await signInRemembered(server)
  store.sessions.clear()
  await server.schoolsResources.signOutEverywhere('t-1', { by: 'admin' })
  t.equal(tokens.size, 0, 'the host API: every device forgotten')
  t.equal((await get(server, desk.remember)).statusCode, 302)
})

t.test('a token made before a sign-out everywhere is worthless, even if its record survived', async (t) => {
  const tokens = new MemoryTokenStore()
  const generations = new MemoryAttemptStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens }, signOutEverywhere: { store: generations } } })
  const { remember } = await signInRemembered(server)
  store.sessions.clear()
  await generations.increment('generation:t-1', 60_000)
  const res = await get(server, remember)
  t.equal(res.statusCode, 302)
  t.match(rememberCookie(res), { value: '' })
  t.equal(tokens.size, 0, 'dropped')
})

t.test('findMember: a member it no longer finds loses every remembered device; a changed session version the token', async (t) => {
  const tokens = new MemoryTokenStore()
  let found: { sessionVersion?: number } | null = { sessionVersion: 1 }
  const findMember = async (id: string | number) => found === null ? null : { ...TEACHER_MEMBER, id, ...found }
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens }, findMember, findMemberCache: { ttlMs: 0 } } })
  const one = await signInRemembered(server)
  const two = await signInRemembered(server)
  t.same((await recordOf(tokens, one.value))!.member, undefined, 'with findMember, no copy of the member')
  store.sessions.clear()
  const same = await get(server, one.remember)
  t.equal(same.statusCode, 200, 'the same version: signed in')
  t.equal((await recordOf(tokens, rememberCookie(same)!.value))!.version, 1, 'the new token keeps it')
  store.sessions.clear()
  found = { sessionVersion: 2 }
  const changed = await get(server, `sr_remember=${rememberCookie(same)!.value}`)
  t.equal(changed.statusCode, 302, 'another session version: the token is worthless')
  t.equal(await recordOf(tokens, rememberCookie(same)!.value), undefined)
  found = { sessionVersion: 1 }
  const three = await signInRemembered(server)
  found = null
  t.equal((await get(server, two.remember)).statusCode, 302, 'not found')
  t.equal(tokens.size, 0, 'every device forgotten')

  found = { sessionVersion: 1 }
  const four = await signInRemembered(server)
  t.ok(three)
  found = null
  t.equal((await get(server, four.session)).statusCode, 302, 'a session whose member is gone')
  t.equal(tokens.size, 0, 'forgets the devices too')
})

t.test('after an idle timeout a remembered device signs in again silently', async (t) => {
  const events = listen<SignInSucceededEvent>(t, 'signInSucceeded')
  const { app: server, store } = await app(t, { plugin: { timeouts: { idleMs: 60_000 } } })
  const { session, remember } = await signInRemembered(server)
  await server.inject({ method: 'PUT', url: '/nowhere' })
  for (const [id, json] of store.sessions) {
    const data = JSON.parse(json)
    data['member.times'].seenAt -= 61_000
    data.language = 'cy'
    store.sessions.set(id, JSON.stringify(data))
  }
  const [oldId] = [...store.sessions.keys()].slice(-1)
  const res = await get(server, `${session}; ${remember}`)
  t.equal(res.statusCode, 200, 'the page, no redirect')
  t.equal(res.cookies.find((c) => c.name === 'sr_notice'), undefined, 'no notice')
  t.equal(events.at(-1)?.method, 'remembered')
  t.notOk(store.sessions.has(oldId), 'the timed-out session is gone')
  const fresh = JSON.parse([...store.sessions.values()].at(-1)!)
  t.equal(fresh.language, undefined, 'nothing of it kept')
  t.ok(Date.now() - fresh['member.times'].signedInAt < 5000, 'a new session, its times from now')

  const { session: s2 } = await signInRemembered(server)
  for (const [id, json] of store.sessions) {
    const data = JSON.parse(json)
    data['member.times'].seenAt -= 61_000
    store.sessions.set(id, JSON.stringify(data))
  }
  const sessionsBefore = store.sessions.size
  const forged = await get(server, `${s2}; sr_remember=${'C'.repeat(22)}.${'D'.repeat(43)}`)
  t.equal(forged.statusCode, 302, 'with a bad token the timeout stands')
  t.equal(forged.cookies.find((c) => c.name === 'sr_notice')?.value, 'idle', 'and says so')
  t.equal(store.sessions.size, sessionsBefore - 1, 'the timed-out session ended')
})

t.test('a store outage while checking a token: the 503 page, nobody signed out, the cookie kept', async (t) => {
  const tokens = new MemoryTokenStore()
  let down = false
  const flaky: TokenStore = {
    get: async (key) => { if (down) throw new errorCodes.FST_SR_STORE_UNAVAILABLE('test outage'); return tokens.get(key) },
    set: (key, value, ttl) => tokens.set(key, value, ttl),
    take: (key) => tokens.take(key),
    deleteAll: (id) => tokens.deleteAll(id)
  }
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: flaky } } })
  const { remember } = await signInRemembered(server)
  store.sessions.clear()
  down = true
  const res = await get(server, remember)
  t.equal(res.statusCode, 503)
  t.equal(rememberCookie(res), undefined, 'the cookie is not cleared')
  t.equal(tokens.size, 1, 'nothing forgotten')
  down = false
  t.equal((await get(server, remember)).statusCode, 200, 'once the store is back, signed in')
})

t.test('the anonymous short-circuit lets a remembered device through', async (t) => {
  const server = Fastify()
  t.teardown(() => server.close())
  const sessions = new AsyncStore()
  await server.register(fastifyCookie)
  await server.register(anonymousShortCircuit)
  await server.register(fastifySession, { secret: SECRET, store: sessions, saveUninitialized: false, cookie: { secure: false } })
  await server.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL })
  const { remember } = await signInRemembered(server)
  sessions.sessions.clear()
  t.equal((await get(server, remember)).statusCode, 200, 'signed in, not short-circuited')
  t.equal((await get(server, 'other=1')).statusCode, 302, 'a visitor still is')
  const https = await server.inject({ url: MATHS, headers: { cookie: '__Host-sr_remember=x' } })
  t.equal(https.statusCode, 302, 'an https cookie over http: through, then the section\'s own redirect')
  t.match(rememberCookie(https), undefined)
})

t.test('start-up: getMember with rememberMe fails; a shared lockout store and an in-process token store warn once', async (t) => {
  await t.rejects(buildTestApp({ plugin: { signIn: false, getMember: () => null, rememberMe: { maxAgeMs: 60_000 } } as never }), { code: 'FST_SR_INVALID_OPTION' })
  const shared = { increment: async () => ({ count: 1, resetAt: new Date() }), hold: async () => {}, get: async () => undefined, reset: async () => {} }
  const logs = capturedLogs()
  const { app: server } = await app(t, { fastify: { logger: logs.logger }, plugin: { lockout: { store: shared as never, deviceSecret: 'a'.repeat(32) }, loginRateLimit: false } })
  t.ok(server)
  t.match(logs.withCode('FST_SR_REMEMBER_STORE_NOT_SHARED'), [{ msg: /rememberMe\.store is the in-process default.*new RedisTokenStore\(client\)/ }])
  const quiet = capturedLogs()
  await app(t, { fastify: { logger: quiet.logger }, plugin: { lockout: { store: shared as never, deviceSecret: 'a'.repeat(32) }, loginRateLimit: false, rememberMe: { store: ownStore(new MemoryTokenStore()) } } })
  t.equal(quiet.withCode('FST_SR_REMEMBER_STORE_NOT_SHARED').length, 0, 'a store of the host\'s own: no warning')
})

/** A host's own TokenStore (here over a MemoryTokenStore). */
function ownStore (inner: TokenStore): TokenStore {
  return { get: (key) => inner.get(key), set: (key, value, ttl) => inner.set(key, value, ttl), take: (key) => inner.take(key), deleteAll: (id) => inner.deleteAll(id) }
}

t.test('sections sharing one sign-in share the default token store, and must agree on rememberMe', async (t) => {
  const { app: server, store } = await app(t, {
    before: async (host) => {
      await host.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL, prefix: '/staff/resources' })
    }
  })
  const { remember } = await signInRemembered(server)
  store.sessions.clear()
  const staff = await get(server, remember, '/staff/resources/')
  t.match(staff.body, 'Sign out', 'a device remembered at the shared sign-in is known to the other section')
  await t.rejects(buildTestApp({
    before: async (host) => {
      await host.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL, prefix: '/staff/resources', rememberMe: false })
    }
  }), { code: 'FST_SR_SHARED_SIGN_IN' })
})

t.test('records this section did not write, and odd cookies, are no token', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const { value } = await signInRemembered(server)
  const key = `remember:${TOKEN.exec(value)![1]}`
  const good = (await tokens.get(key))!
  const data = JSON.parse(good.data) as Remembered
  store.sessions.clear()
  for (const [name, raw] of [['not JSON', '{'], ['null', 'null'], ['no id', JSON.stringify({ ...data, id: null })], ['no expiry', JSON.stringify({ ...data, expiresAt: 'soon' })],
    ['a bad previous', JSON.stringify({ ...data, previous: { hash: 'x', rotatedAt: 1 } })], ['a bad member', JSON.stringify({ ...data, member: { id: 't-1' } })]] as const) {
    await tokens.set(key, { memberId: 't-1', data: raw }, 60_000)
    const res = await get(server, `sr_remember=${value}`)
    t.equal(res.statusCode, 302, name)
    t.match(rememberCookie(res), { value: '' })
  }
  t.equal((await get(server, 'sr_remember=')).statusCode, 302, 'an empty cookie is none')
  await tokens.set(key, { memberId: '5', data: JSON.stringify({ ...data, id: 5 }) }, 60_000)
  t.equal((await get(server, `sr_remember=${value}`)).statusCode, 200, 'an id that is a number, as the host gave it')
  const page = await get(server, '', '/schools/resources/')
  t.equal(rememberCookie(page), undefined, 'no cookie: nothing cleared')
})

t.test('a record from before sign out everywhere was on counts as generation 0', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens } } })
  const { remember, value } = await signInRemembered(server)
  await rewrite(tokens, value, (r) => { delete r.generation })
  store.sessions.clear()
  t.equal((await get(server, remember)).statusCode, 200)
})

t.test('with signOutEverywhere: false a stolen copy still forgets every device and says so', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: tokens }, signOutEverywhere: false } })
  const { value } = await signInRemembered(server)
  t.equal((await recordOf(tokens, value))!.generation, undefined, 'no generation kept')
  store.sessions.clear()
  const guessed = `sr_remember=${TOKEN.exec(value)![1]}.${'E'.repeat(43)}`
  t.equal((await get(server, guessed)).statusCode, 302, 'nobody listening: no event built')
  const other = await signInRemembered(server)
  const seen = listen<SignedOutEverywhereEvent>(t, 'signedOutEverywhere')
  t.equal((await get(server, `sr_remember=${TOKEN.exec(other.value)![1]}.${'E'.repeat(43)}`)).statusCode, 302)
  t.match(seen, [{ memberId: 't-1', requestedBy: 'stolen-remember-token', section: '/schools/resources/' }])
  t.equal(tokens.size, 0)
})

t.test('findMember without session versions; a store error forgetting a gone member\'s devices is logged', async (t) => {
  const tokens = new MemoryTokenStore()
  let gone = false
  let failing = false
  const flaky: TokenStore = { ...ownStore(tokens), deleteAll: async (id) => { if (failing) throw new errorCodes.FST_SR_STORE_UNAVAILABLE('test outage'); return tokens.deleteAll(id) } }
  const logs = capturedLogs()
  const findMember = async (id: string | number) => gone ? null : { ...TEACHER_MEMBER, id }
  const { app: server, store } = await app(t, { fastify: { logger: logs.logger }, plugin: { rememberMe: { store: flaky }, findMember, findMemberCache: { ttlMs: 0 } } })
  const { session, remember, value } = await signInRemembered(server)
  t.equal((await recordOf(tokens, value))!.member, undefined)
  const sessionOnly = sessionCookie(await postLogin(server, { email: TEACHER.email, password: TEACHER.password }))!
  const kept = [...store.sessions.entries()]
  store.sessions.clear()
  t.equal((await get(server, remember)).statusCode, 200, 'signed in: no version on either side')
  for (const [id, json] of kept) store.sessions.set(id, json)
  gone = true
  failing = true
  t.equal((await get(server, sessionOnly)).statusCode, 302, 'a gone member: a visitor, whatever the store says')
  t.match(logs.withCode('FST_SR_STORE_UNAVAILABLE'), [{ msg: /remembered devices of a member no longer found could not be forgotten/ }])
  t.ok(session)
})

t.test('a session that cannot be kept (a Secure cookie over http): the token is kept for a request that can', async (t) => {
  const tokens = new MemoryTokenStore()
  const { app: server } = await app(t, { fastify: { trustProxy: '127.0.0.1' }, session: { cookie: { secure: true } }, plugin: { rememberMe: { store: tokens } } })
  const res = await postLogin(server, { email: TEACHER.email, password: TEACHER.password, remember: '1' }, { headers: { 'x-forwarded-proto': 'https' } })
  const token = rememberCookie(res, '__Host-sr_remember')!.value
  const plain = await server.inject({ url: MATHS, headers: { cookie: `sr_remember=${token}` } })
  t.equal(plain.statusCode, 302, 'over http: a visitor')
  t.equal(rememberCookie(plain), undefined, 'the cookie is not cleared')
  t.ok(await recordOf(tokens, token), 'nor the token forgotten')
})

t.test('with rememberMe: false, findMember\'s null ends the session alone; sign-out without a cookie clears none', async (t) => {
  let gone = false
  const { app: server } = await app(t, { plugin: { rememberMe: false, findMember: async (id: string | number) => gone ? null : { ...TEACHER_MEMBER, id }, findMemberCache: { ttlMs: 0 } } })
  const session = sessionCookie(await postLogin(server, { email: TEACHER.email, password: TEACHER.password }))!
  gone = true
  t.equal((await get(server, session)).statusCode, 302)
  const { app: on } = await app(t)
  const cookie = sessionCookie(await postLogin(on, { email: TEACHER.email, password: TEACHER.password }))!
  const page = await get(on, cookie, '/schools/resources/')
  const out = await postSignOutForm(on, withCookies(cookie, page), page)
  t.equal(out.statusCode, 303)
  t.equal(rememberCookie(out), undefined)
})

t.test('sign-out with a cookie that is no token clears it', async (t) => {
  const { app: server } = await app(t)
  const { session } = await signInRemembered(server)
  const cookie = `${session}; sr_remember=forged`
  const page = await get(server, cookie, '/schools/resources/')
  const out = await postSignOutForm(server, withCookies(cookie, page), page)
  t.equal(out.statusCode, 303)
  t.match(rememberCookie(out), { value: '' })
})

t.test('a sign-out while the token store is down still expires the remember cookie', async (t) => {
  const tokens = new MemoryTokenStore()
  let down = false
  const flaky: TokenStore = { ...ownStore(tokens), take: async (key) => { if (down) throw new errorCodes.FST_SR_STORE_UNAVAILABLE('test outage'); return tokens.take(key) } }
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: flaky } } })
  const laptop = await signInRemembered(server)
  const cookie = `${laptop.session}; ${laptop.remember}`
  const page = await get(server, cookie, '/schools/resources/')
  down = true
  const out = await postSignOutForm(server, withCookies(cookie, page), page)
  t.equal(out.statusCode, 503)
  t.match(rememberCookie(out), { value: '', maxAge: 0 }, 'this browser no longer carries the token')
  t.match(out.cookies.find((c) => c.name === 'sessionId'), { value: '' })
  down = false
  store.sessions.clear()
  t.equal((await get(server, laptop.remember)).statusCode, 200, 'a browser that kept it would be signed in again: hence the expiry')
})

t.test('a sign-out while the session store is down expires the remember cookie too (none with rememberMe false)', async (t) => {
  for (const rememberMe of [undefined, false] as const) {
    const { app: server, store } = await app(t, { plugin: rememberMe === false ? { rememberMe } : {} })
    const res = await postLogin(server, { email: TEACHER.email, password: TEACHER.password, remember: '1' })
    const remembered = rememberCookie(res)
    const cookie = `${sessionCookie(res)!}${remembered === undefined ? '' : `; sr_remember=${remembered.value}`}`
    const page = await get(server, cookie, '/schools/resources/')
    store.get = (_id, callback) => { setImmediate(() => { callback(new errorCodes.FST_SR_STORE_UNAVAILABLE('test outage')) }) }
    const out = await postSignOutForm(server, withCookies(cookie, page), page)
    t.equal(out.statusCode, 503)
    t.match(out.cookies.find((c) => c.name === 'sessionId'), { value: '' })
    if (rememberMe === false) t.equal(rememberCookie(out), undefined, 'no remember cookie to expire')
    else t.match(rememberCookie(out), { value: '', maxAge: 0 }, 'this browser no longer carries the token')
  }
})

t.test('a sign out everywhere while a remembered device is being signed in: that session ends too', async (t) => {
  const tokens = new MemoryTokenStore()
  let everywhere: (() => Promise<void>) | undefined
  // The sign out everywhere lands between the token's checks and the new session (as the new token is written).
  const racing: TokenStore = {
    ...ownStore(tokens),
    set: async (key, value, ttl) => {
      const now = everywhere
      everywhere = undefined
      await now?.()
      return tokens.set(key, value, ttl)
    }
  }
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: racing } } })
  const { remember } = await signInRemembered(server)
  store.sessions.clear()
  everywhere = () => server.schoolsResources.signOutEverywhere('t-1', { by: 'admin' })
  const res = await get(server, remember)
  t.equal(everywhere, undefined, 'the sign out everywhere ran during the remembered sign-in')
  const session = sessionCookie(res)
  if (res.statusCode === 200) t.equal((await get(server, session!)).statusCode, 302, 'the session it made is of the old generation: ended')
  else t.equal(res.statusCode, 302)
})

t.test('a session version changed while a remembered device is being signed in: that session ends too', async (t) => {
  const tokens = new MemoryTokenStore()
  let version = 1
  let bump = false
  const racing: TokenStore = {
    ...ownStore(tokens),
    set: async (key, value, ttl) => {
      if (bump) version++
      bump = false
      return tokens.set(key, value, ttl)
    }
  }
  const findMember = async (id: string | number) => ({ ...TEACHER_MEMBER, id, sessionVersion: version })
  const { app: server, store } = await app(t, { plugin: { rememberMe: { store: racing }, findMember, findMemberCache: { ttlMs: 0 } } })
  const { remember } = await signInRemembered(server)
  store.sessions.clear()
  bump = true
  const res = await get(server, remember)
  t.equal(version, 2, 'the version changed during the remembered sign-in')
  const session = sessionCookie(res)
  if (res.statusCode === 200) t.equal((await get(server, session!)).statusCode, 302, 'the session it made is of the old version: ended')
  else t.equal(res.statusCode, 302)
})

t.test('with @fastify/secure-session: the session is the cookie, and a remembered device gets a new one', async (t) => {
  const server = Fastify()
  t.teardown(() => server.close())
  await server.register(fastifyCookie)
  await server.register(fastifySecureSession, { key: randomBytes(32), cookie: { path: '/', httpOnly: true, sameSite: 'lax' } })
  await server.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL })
  const signedIn = await postLogin(server, { email: TEACHER.email, password: TEACHER.password, remember: '1' })
  const token = rememberCookie(signedIn)!.value
  const res = await get(server, `sr_remember=${token}`)
  t.equal(res.statusCode, 200)
  const session = withCookies('', res, true).split('; ').find((c) => c.startsWith('session='))!
  t.ok(session, 'a session cookie')
  t.equal((await get(server, session)).statusCode, 200, 'which works on its own')
})

if (REDIS_URL !== undefined) {
  t.test('with RedisTokenStore (real Redis): remembered across a restart of the server', async (t) => {
    const client = await connectedClient(t, REDIS_URL!)
    const prefix = uniquePrefix('remember')
    t.teardown(() => deleteKeys(client, prefix))
    const tokens = new RedisTokenStore(client, { prefix })
    const first = await buildTestApp({ plugin: { rememberMe: { store: tokens } } })
    const { remember, value } = await signInRemembered(first.app)
    t.notMatch(String(await client.sendCommand(['GET', `${prefix}token:remember:${TOKEN.exec(value)![1]}`])), TOKEN.exec(value)![2], 'Redis holds no validator')
    await first.app.close()
    const { app: second } = await app(t, { session: { store: new AsyncStore() }, plugin: { rememberMe: { store: tokens } } })
    const res = await get(second, remember)
    t.equal(res.statusCode, 200, 'a new instance, a new session store: signed in from the token')
    const next = `sr_remember=${rememberCookie(res)!.value}`
    await Promise.all([get(second, remember), get(second, remember)])
    const { app: third } = await app(t, { plugin: { rememberMe: { store: tokens } } })
    t.equal((await get(third, next)).statusCode, 200)
    await third.schoolsResources.signOutEverywhere('t-1')
    t.equal((await get(second, next)).statusCode, 302, 'sign out everywhere on one instance forgets the device on all')
  })
}
