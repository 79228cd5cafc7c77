// Issue 36, item 1: one sign-in tail, many proofs. reply.signInMember is what the section's own sign-in
// does after the password is right, for a host's own callback (signIn off or on).
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { eventChannels, InMemoryCatalog, type FastifySchoolsResourcesOptions, type FoundMember, type Member, type SignInSucceededEvent } from '../../lib/index.js'
import { AsyncStore } from '../helpers/async-store.js'
import { BASE_URL, SECRET, TEACHER_MEMBER, capturedLogs, sessionCookie, signIn } from '../helpers/app.js'
import { buildTestApp } from '../helpers/app.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'

declare module 'fastify' {
  interface Session {
    /** A host's own data, which sign-in keeps. */
    basket?: string[]
    /** Another of the host's, for keepSessionData as a list. */
    language?: string
  }
}

const MATHS = '/schools/resources/resources/maths/'
const INDEX = '/schools/resources/'

interface Host { app: FastifyInstance, store: AsyncStore, logs: ReturnType<typeof capturedLogs> }

/**
 * A host that proves who the member is itself (as its OAuth callback would) and ends in reply.signInMember:
 * `GET /my/callback?who=…&back=…&method=…` signs in whoever `members` names.
 */
async function host (t: Test, plugin: Partial<FastifySchoolsResourcesOptions> = {}, members: Record<string, unknown> = { ada: TEACHER_MEMBER }): Promise<Host> {
  const logs = capturedLogs()
  const store = new AsyncStore()
  const app = Fastify({ logger: logs.logger })
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, store, saveUninitialized: false, cookie: { secure: false } })
  app.get('/my/basket', async (request) => {
    request.session.set('basket', ['fraction-wall'])
    return 'kept'
  })
  app.get('/my/language', async (request) => {
    request.session.set('language', 'cy')
    return 'kept'
  })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, signIn: false, baseUrl: BASE_URL, ...plugin } as FastifySchoolsResourcesOptions)
  app.get('/my/callback', async (request, reply) => {
    const { who, back, method, provider } = request.query as Record<string, string | undefined>
    return reply.signInMember(members[who ?? ''] as Member, { backUrl: back, method: method ?? 'google-oauth', provider })
  })
  await app.ready()
  t.teardown(() => app.close())
  return { app, store, logs }
}

function listen (t: Test): SignInSucceededEvent[] {
  const seen: SignInSucceededEvent[] = []
  const listener = (message: unknown) => { seen.push(message as SignInSucceededEvent) }
  subscribe(eventChannels.signInSucceeded, listener)
  t.teardown(() => unsubscribe(eventChannels.signInSucceeded, listener))
  return seen
}

function storedSessions (store: AsyncStore): Array<Record<string, unknown>> {
  return [...store.sessions.values()].map((json) => JSON.parse(json))
}

t.test('a host\'s own callback signs in as the section does: 303 to the checked BackURL, the member stored, the event', async (t) => {
  const seen = listen(t)
  const { app, store } = await host(t)
  const res = await app.inject(`/my/callback?who=ada&back=${encodeURIComponent(MATHS)}&method=google-oauth&provider=google`)
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${BASE_URL}${MATHS}`, 'absolute, to the page asked for')
  t.equal(res.headers['cache-control'], 'no-store')
  const cookie = sessionCookie(res)
  t.ok(cookie)
  t.same(storedSessions(store).map((s) => s.member), [TEACHER_MEMBER])
  const page = await app.inject({ url: MATHS, headers: { cookie: cookie! } })
  t.equal(page.statusCode, 200, 'signed in: the category page')
  t.equal(seen.length, 1)
  t.equal(seen[0].memberId, TEACHER_MEMBER.id)
  t.equal(seen[0].method, 'google-oauth')
  t.equal(seen[0].provider, 'google')
  t.equal(seen[0].section, INDEX)
})

t.test('a return address that leaves the site, or none, ends on the section index', async (t) => {
  const { app } = await host(t)
  for (const back of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)', undefined]) {
    const res = await app.inject(`/my/callback?who=ada${back === undefined ? '' : `&back=${encodeURIComponent(back)}`}`)
    t.equal(res.statusCode, 303, String(back))
    t.equal(res.headers.location, `${BASE_URL}${INDEX}`, String(back))
  }
})

t.test('a new session id keeps the host\'s data; another member\'s data is not kept', async (t) => {
  const bob: Member = { id: 'b-2', name: 'Bob' }
  const { app, store } = await host(t, {}, { ada: TEACHER_MEMBER, bob })
  const basket = await app.inject('/my/basket')
  const before = sessionCookie(basket)!
  const res = await app.inject({ url: '/my/callback?who=ada', headers: { cookie: before } })
  const after = sessionCookie(res)!
  t.not(after, before, 'a new session id (no fixation)')
  t.equal(store.sessions.size, 1, 'the old session left the store')
  t.same(storedSessions(store)[0].basket, ['fraction-wall'], 'the host\'s data came along')
  const other = await app.inject({ url: '/my/callback?who=bob', headers: { cookie: after } })
  t.equal(other.statusCode, 303)
  const sessions = storedSessions(store)
  t.equal(sessions.length, 1)
  t.same(sessions[0].member, bob)
  t.equal(sessions[0].basket, undefined, 'Ada\'s basket is not Bob\'s')
})

t.test('keepSessionData: false starts a clean session', async (t) => {
  const { app, store } = await host(t, { keepSessionData: false })
  const basket = await app.inject('/my/basket')
  await app.inject({ url: '/my/callback?who=ada', headers: { cookie: sessionCookie(basket)! } })
  t.same(Object.keys(storedSessions(store)[0]).filter((k) => k !== 'cookie'), ['member', 'member.times', 'member.generation'], 'the member, the times and the generation sign-in starts')
})

t.test('keepSessionData as a list keeps only the keys named, as the password form does', async (t) => {
  const { app, store } = await host(t, { keepSessionData: ['language'] })
  const basket = await app.inject('/my/basket')
  const language = await app.inject({ url: '/my/language', headers: { cookie: sessionCookie(basket)! } })
  t.same(Object.keys(storedSessions(store)[0]).filter((k) => k !== 'cookie').sort(), ['basket', 'language'], 'both in the session before')
  const res = await app.inject({ url: '/my/callback?who=ada', headers: { cookie: sessionCookie(language) ?? sessionCookie(basket)! } })
  t.equal(res.statusCode, 303)
  const [session] = storedSessions(store)
  t.equal(store.sessions.size, 1)
  t.same(Object.keys(session).filter((k) => k !== 'cookie').sort(), ['language', 'member', 'member.generation', 'member.times'], 'the basket is left behind')
  t.equal(session.language, 'cy')
})

t.test('the provider a member signed in through is the section\'s own key: never kept, set again', async (t) => {
  const { app, store } = await host(t)
  const first = await app.inject('/my/callback?who=ada&provider=google')
  t.equal(storedSessions(store)[0]['member.provider'], 'google')
  // The same member again, through a way that names no provider: the old one must not linger (sign-out reads it).
  const again = await app.inject({ url: '/my/callback?who=ada&method=magic-link', headers: { cookie: sessionCookie(first)! } })
  t.equal(again.statusCode, 303)
  t.equal(store.sessions.size, 1)
  t.same(storedSessions(store)[0].member, TEACHER_MEMBER)
  t.equal(storedSessions(store)[0]['member.provider'], undefined)
})

t.test('past lockout.maxNewSessionsPerMinute: 429 FST_SR_SESSION_RATE_LIMITED with Retry-After, the event, no session', async (t) => {
  const failed: Array<Record<string, unknown>> = []
  const listener = (message: unknown) => { failed.push(message as Record<string, unknown>) }
  subscribe(eventChannels.signInFailed, listener)
  t.teardown(() => unsubscribe(eventChannels.signInFailed, listener))
  const { app, store } = await host(t, { lockout: { maxNewSessionsPerMinute: 2 } })
  const answers = []
  for (let i = 0; i < 3; i++) answers.push(await app.inject('/my/callback?who=ada&provider=google'))
  t.same(answers.map((res) => res.statusCode), [303, 303, 429])
  const refused = answers[2]
  t.equal(refused.json().code, 'FST_SR_SESSION_RATE_LIMITED', 'the host\'s error handler (Fastify\'s here) gets the error')
  t.match(refused.json().message, /Too many sign-ins to this account in the last minute\. Try again after \d\d:\d\d UTC\./)
  const retryAfter = Number(refused.headers['retry-after'])
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${retryAfter}`)
  t.equal(refused.headers['set-cookie'], undefined, 'no session cookie')
  t.equal(store.sessions.size, 2, 'no third session')
  t.match(failed, [{ reason: 'too-many-sessions', provider: 'google', identifierHash: undefined, section: INDEX }])
  t.equal(failed.length, 1)
  // Another member is not held by this one's bound.
  const { app: other } = await host(t, { lockout: { maxNewSessionsPerMinute: 1 } }, { ada: TEACHER_MEMBER, bob: { id: 'b-2', name: 'Bob' } })
  t.same([await other.inject('/my/callback?who=ada'), await other.inject('/my/callback?who=bob'), await other.inject('/my/callback?who=ada')].map((res) => res.statusCode), [303, 303, 429])
})

t.test('lockout: false leaves new sessions unbounded', async (t) => {
  const { app, store } = await host(t, { lockout: false })
  const codes = []
  for (let i = 0; i < 130; i++) codes.push((await app.inject('/my/callback?who=ada')).statusCode)
  t.same(codes, Array(130).fill(303), 'more than the default 120 a minute')
  t.equal(store.sessions.size, 130)
})

t.test('not a member: FST_SR_INVALID_MEMBER, nobody signed in, the fix in the log once', async (t) => {
  const { app, store, logs } = await host(t, {}, { odd: { id: 'x', username: 'odd' }, nothing: null })
  for (const who of ['odd', 'odd', 'nothing']) {
    const res = await app.inject(`/my/callback?who=${who}`)
    t.equal(res.statusCode, 500)
    t.equal(res.json().code, 'FST_SR_INVALID_MEMBER')
    t.equal(res.headers['set-cookie'], undefined)
  }
  t.equal(store.sessions.size, 0)
  const lines = logs.withCode('FST_SR_INVALID_MEMBER')
  t.equal(lines.length, 2, 'once per kind of value')
  t.match(lines[0].msg, /signInMember gave/)
})

t.test('method: a word of a-z, 0-9 and -, else a TypeError at the call', async (t) => {
  const { app, store } = await host(t)
  for (const method of ['Google', 'a b', '', 'x'.repeat(33), 'oauth_2']) {
    const res = await app.inject(`/my/callback?who=ada&method=${encodeURIComponent(method)}`)
    t.equal(res.statusCode, 500, method)
    t.match(res.json(), { code: 'FST_SR_INVALID_SIGN_IN_OPTIONS', message: /method must be a word/ })
  }
  const res = await app.inject(`/my/callback?who=ada&provider=${encodeURIComponent('Not Ok')}`)
  t.equal(res.statusCode, 500, 'provider: the same form')
  t.equal(store.sessions.size, 0)
  for (const method of ['password', 'oidc', 'remembered', 'password-reset', 'x'.repeat(32)]) {
    t.equal((await app.inject(`/my/callback?who=ada&method=${method}`)).statusCode, 303, method)
  }
})

t.test('no options: a TypeError that says what to give', async (t) => {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, signIn: false, baseUrl: BASE_URL })
  app.get('/cb', async (_request, reply) => (reply.signInMember as (m: Member) => Promise<unknown>)(TEACHER_MEMBER))
  app.get('/cb42', async (_request, reply) => reply.signInMember(TEACHER_MEMBER, { method: 42 as unknown as string }))
  t.teardown(() => app.close())
  const res = await app.inject('/cb')
  t.equal(res.statusCode, 500)
  t.match(res.json(), { code: 'FST_SR_INVALID_SIGN_IN_OPTIONS', message: /needs its options, with method/ })
  t.match((await app.inject('/cb42')).json().message, /method must be a word .*; got number/)
})

t.test('with findMember the session keeps the id and the version findMember gives now, not its cache', async (t) => {
  let version = 1
  const findMember = async (id: string | number): Promise<FoundMember | null> => id === TEACHER_MEMBER.id ? { ...TEACHER_MEMBER, sessionVersion: version } : null
  const { app, store } = await host(t, { findMember, findMemberCache: { ttlMs: 60_000 } }, { ada: TEACHER_MEMBER, ghost: { id: 'g-0', name: 'Ghost' } })
  const first = await app.inject('/my/callback?who=ada')
  t.equal((await app.inject({ url: MATHS, headers: { cookie: sessionCookie(first)! } })).statusCode, 200, 'the cache now holds version 1')
  version = 2
  const second = await app.inject('/my/callback?who=ada')
  const held = storedSessions(store).map((s) => s.member)
  t.same(held, [{ id: TEACHER_MEMBER.id, sessionVersion: 1 }, { id: TEACHER_MEMBER.id, sessionVersion: 2 }])
  t.equal((await app.inject({ url: MATHS, headers: { cookie: sessionCookie(second)! } })).statusCode, 200, 'the fresh version let in')
  const ghost = await app.inject('/my/callback?who=ghost')
  t.equal(ghost.statusCode, 500, 'findMember does not find the member signed in: a host mistake')
  t.equal(ghost.json().code, 'FST_SR_INVALID_MEMBER')
})

t.test('a Secure session cookie over plain http: refused (FST_SR_INSECURE_SIGN_IN), nothing stored', async (t) => {
  const store = new AsyncStore()
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, store, saveUninitialized: false, cookie: { secure: true } })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, signIn: false, baseUrl: BASE_URL })
  app.get('/cb', async (_request, reply) => reply.signInMember(TEACHER_MEMBER, { method: 'sso' }))
  t.teardown(() => app.close())
  const res = await app.inject('/cb')
  t.equal(res.statusCode, 500)
  t.equal(res.json().code, 'FST_SR_INSECURE_SIGN_IN')
  t.equal(store.sessions.size, 0)
})

t.test('decorated whenever the section reads members from its session; not with getMember', async (t) => {
  const own = await buildTestApp()
  t.teardown(() => own.app.close())
  t.ok(own.app.hasReplyDecorator('signInMember'), 'signIn on')
  const app = Fastify()
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, signIn: false, getMember: () => null })
  t.teardown(() => app.close())
  t.notOk(app.hasReplyDecorator('signInMember'), 'the host owns sign-in and who is signed in')
  const both = await buildTestApp({ plugin: { getMember: () => null } })
  t.teardown(() => both.app.close())
  t.notOk(both.app.hasReplyDecorator('signInMember'), 'signIn on with getMember: who is signed in is the host\'s')
  t.equal((await both.app.inject('/Security/login')).statusCode, 200)
})

t.test('with the section\'s sign-in on, the host\'s callback and the password form share the tail and the CSRF renewal', async (t) => {
  const seen = listen(t)
  const { app } = await buildTestApp({
    extend: (app) => app.get('/my/callback', async (_request, reply) => reply.signInMember(TEACHER_MEMBER, { method: 'oidc', provider: 'school', backUrl: MATHS }))
  })
  t.teardown(() => app.close())
  const login = await app.inject('/Security/login')
  const csrf = login.cookies.find((c) => c.name === '__Host-_csrf')!
  const res = await app.inject({ url: '/my/callback', cookies: { [csrf.name]: csrf.value } })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${BASE_URL}${MATHS}`)
  const dropped = res.cookies.find((c) => c.name === '__Host-_csrf')
  t.equal(dropped?.value, '', 'the CSRF cookie is renewed (dropped; the next page makes a new one)')
  await signIn(app)
  t.same(seen.map((e) => [e.method, e.provider]), [['oidc', 'school'], ['password', undefined]])
})

t.test('two sections in one context share reply.signInMember: the first one\'s sign-in', async (t) => {
  const store = new AsyncStore()
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, store, saveUninitialized: false, cookie: { secure: false } })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, signIn: false, baseUrl: BASE_URL })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, signIn: false, baseUrl: BASE_URL, prefix: '/other', sessionKey: 'pupil' })
  app.get('/cb', async (_request, reply) => reply.signInMember(TEACHER_MEMBER, { method: 'sso' }))
  t.teardown(() => app.close())
  const res = await app.inject('/cb')
  t.equal(res.headers.location, `${BASE_URL}${INDEX}`)
  t.same(storedSessions(store).map((s) => s.member), [TEACHER_MEMBER])
})

t.test('a reply already directed elsewhere keeps its Location (redirectOnce\'s rule), and no 500', async (t) => {
  const { app } = await buildTestApp({
    extend: (app) => app.get('/my/twice', async (_request, reply) => {
      reply.redirectOnce('/elsewhere')
      return reply.signInMember(TEACHER_MEMBER, { method: 'sso' })
    })
  })
  t.teardown(() => app.close())
  const res = await app.inject('/my/twice')
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, '/elsewhere')
})
