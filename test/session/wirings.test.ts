// The whole journey in every wiring the section supports (docs/session-wiring.md): @fastify/session with
// its memory store and with RedisSessionStore, @fastify/secure-session, and a JWT host with no session
// plugin. The anonymous redirect and the refused second redirect's warning are the same in each.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyRequest, type LightMyRequestResponse } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifySecureSession from '@fastify/secure-session'
import schoolsResources, { InMemoryCatalog } from '../../lib/index.js'
import { RedisSessionStore } from '../../lib/stores/redis/index.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'
import { buildJwtHost, type MemberClaims } from '../../examples/jwt-host.js'
import { authenticate, PEOPLE } from '../helpers/members.js'
import { BASE_URL, conflictWarnings, formToken, postLogin, SECRET, withCookies as withCookieJar } from '../helpers/app.js'
import { connectedClient, deleteKeys, listKeys, REDIS_URL, uniquePrefix } from '../helpers/redis.js'

const MATHS = '/schools/resources/resources/maths/'
const STAFF_ROOM = '/schools/resources/resources/staff-room/'
const PDF = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'
const LOGIN_FOR_MATHS = `${BASE_URL}/Security/login?BackURL=${encodeURIComponent(MATHS)}`
const PARENT = 'parent@example.org'
const TEACHER = 'teacher@example.org'

/** A browser's cookie jar: values sent as they were set. */
const withCookies = (cookie: string, res: LightMyRequestResponse) => withCookieJar(cookie, res, true)

// The host's own data in the session, which sign-in keeps (keepSessionData) unless another member's.
interface AnySession { get (key: string): unknown, set (key: string, value: unknown): void }
const sessionOf = (request: FastifyRequest) => (request as unknown as { session: AnySession }).session

interface Wiring {
  name: string
  cookieName: string
  /** Registers @fastify/cookie and the session plugin; resolves to what the test must check after. */
  session: (t: Test, app: FastifyInstance) => Promise<{ storedSessions?: () => Promise<number> }>
  /** What a copy of the signed-in cookie, replayed after sign-out, gets: stateless sessions cannot refuse it. */
  replayAfterSignOut: number
}

const wirings: Wiring[] = [
  {
    name: '@fastify/session, memory store',
    cookieName: 'sessionId',
    session: async (_t, app) => {
      await app.register(fastifyCookie)
      await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
      return {}
    },
    replayAfterSignOut: 302
  },
  {
    name: '@fastify/session, RedisSessionStore',
    cookieName: 'sessionId',
    session: async (t, app) => {
      const client = await connectedClient(t, REDIS_URL!)
      const prefix = uniquePrefix('wirings')
      t.teardown(() => deleteKeys(client, prefix))
      await app.register(fastifyCookie)
      await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, store: new RedisSessionStore(client, { prefix }), cookie: { secure: false } })
      return { storedSessions: async () => (await listKeys(client, prefix)).length }
    },
    replayAfterSignOut: 302
  },
  {
    name: '@fastify/secure-session',
    cookieName: 'session',
    session: async (_t, app) => {
      await app.register(fastifyCookie)
      await app.register(fastifySecureSession, { key: randomBytes(32), cookie: { path: '/', httpOnly: true, sameSite: 'lax', maxAge: 60 * 60 } })
      return {}
    },
    // The cookie is the session: a copy taken before sign-out stays valid until it expires (maxAge).
    replayAfterSignOut: 200
  }
]

/** The anonymous redirect, exactly as the spec has it: the 302 with BackURL and the refused second redirect's warning. */
async function anonymousRedirect (t: Test, app: FastifyInstance, headers: Record<string, string> = {}) {
  let res: LightMyRequestResponse | undefined
  const warnings = await conflictWarnings(async () => { res = await app.inject({ url: MATHS, headers }) })
  t.equal(res!.statusCode, 302, 'a visitor is redirected')
  t.equal(res!.headers.location, LOGIN_FOR_MATHS, 'to the login page, BackURL the category')
  t.equal(res!.headers['cache-control'], 'no-store')
  t.equal(warnings.length, 1, 'the refused second redirect raises its warning')
  t.equal(warnings[0].message, `Already directed to ${LOGIN_FOR_MATHS}; now trying to direct to /schools/resources/`)
}

for (const wiring of wirings) {
  t.test(wiring.name, async (t) => {
    if (wiring.name.includes('Redis') && REDIS_URL === undefined) {
      t.plan(0, 'REDIS_URL is not set')
      return
    }
    const app = Fastify()
    t.teardown(() => app.close())
    const { storedSessions } = await wiring.session(t, app)
    app.get('/set-lang', async (request) => { sessionOf(request).set('lang', 'fr'); return 'ok' })
    app.get('/lang', async (request) => String(sessionOf(request).get('lang')))
    await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, authenticate, baseUrl: BASE_URL })
    await app.ready()

    await t.test('a visitor: the anonymous redirect and its warning, unchanged', (t) => anonymousRedirect(t, app))

    let jar = withCookies('', await app.inject('/set-lang'))
    const before = jar
    const login = await app.inject({ url: '/Security/login', headers: { cookie: jar } })
    jar = withCookies(jar, login)
    const signIn = await postLogin(app, { email: PARENT, password: PEOPLE[PARENT].password, BackURL: MATHS }, { form: { cookie: jar, token: formToken(login.body) } })
    t.equal(signIn.statusCode, 303, 'the parent signs in')
    t.equal(signIn.headers.location, `${BASE_URL}${MATHS}`, 'back to the category asked for')
    jar = withCookies(jar, signIn)
    const sessionCookie = (cookie: string) => cookie.split('; ').find((c) => c.startsWith(`${wiring.cookieName}=`))
    t.not(sessionCookie(jar), sessionCookie(before), 'sign-in renews the session cookie')
    t.equal((await app.inject({ url: MATHS, headers: { cookie: before } })).statusCode, 302, 'the cookie from before sign-in admits nobody')
    t.equal((await app.inject({ url: '/lang', headers: { cookie: jar } })).body, 'fr', 'keepSessionData: the host\'s data came along')
    if (storedSessions !== undefined) t.equal(await storedSessions(), 1, 'one session in Redis, the pre-sign-in one gone')

    const maths = await app.inject({ url: MATHS, headers: { cookie: jar } })
    t.equal(maths.statusCode, 200, 'the category opens')
    t.match(maths.body, /Signed in as[\s\S]*Pat Parent/)
    const staff = await app.inject({ url: STAFF_ROOM, headers: { cookie: jar } })
    t.equal(staff.statusCode, 403, 'the staff room refuses a parent')
    const pdf = await app.inject({ url: PDF, headers: { cookie: jar } })
    t.equal(pdf.statusCode, 200, 'the file downloads')
    t.equal(pdf.headers['content-type'], 'application/pdf')

    const signedIn = jar
    const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: withCookies(jar, maths) }, payload: { _csrf: formToken(maths.body) } })
    t.equal(out.statusCode, 303, 'sign-out')
    jar = withCookies(withCookies(jar, maths), out)
    if (wiring.cookieName === 'session') {
      const cleared = out.cookies.find((c) => c.name === 'session')
      t.equal(cleared?.value, '', 'sign-out clears the secure-session cookie at once')
      t.equal(cleared?.maxAge, 0)
    }
    t.equal((await app.inject({ url: MATHS, headers: { cookie: jar } })).statusCode, 302, 'the browser that signed out is a visitor')
    await t.test('after sign-out: the anonymous redirect and its warning, unchanged', (t) => anonymousRedirect(t, app, { cookie: jar }))
    t.equal((await app.inject({ url: MATHS, headers: { cookie: signedIn } })).statusCode, wiring.replayAfterSignOut,
      wiring.replayAfterSignOut === 200 ? 'a copy of the cookie outlives sign-out: a stateless session cannot revoke it' : 'a copy of the cookie is worthless after sign-out')
    if (storedSessions !== undefined) t.equal(await storedSessions(), 0, 'the session left Redis')

    await t.test('signing in over another member\'s session flushes their data', async (t) => {
      let jar = withCookies('', await app.inject('/set-lang'))
      const asParent = await postLogin(app, { email: PARENT, password: PEOPLE[PARENT].password }, { form: await formIn(app, jar) })
      jar = withCookies(jar, asParent)
      t.equal((await app.inject({ url: '/lang', headers: { cookie: jar } })).body, 'fr', 'the parent keeps the data')
      const asTeacher = await postLogin(app, { email: TEACHER, password: PEOPLE[TEACHER].password }, { form: await formIn(app, jar) })
      t.equal(asTeacher.statusCode, 303)
      jar = withCookies(jar, asTeacher)
      t.equal((await app.inject({ url: '/lang', headers: { cookie: jar } })).body, 'undefined', 'the teacher does not get the parent\'s')
      t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie: jar } })).statusCode, 200, 'and the staff room opens for the teacher')
    })
  })
}

async function formIn (app: FastifyInstance, cookie: string) {
  const res = await app.inject({ url: '/Security/login', headers: { cookie } })
  return { cookie: withCookies(cookie, res), token: formToken(res.body) }
}

t.test('a JWT host without any session plugin (examples/jwt-host.ts)', async (t) => {
  const app = await buildJwtHost(SECRET)
  t.teardown(() => app.close())
  await app.ready()
  t.notOk(app.hasPlugin('@fastify/session') || app.hasPlugin('@fastify/secure-session') || app.hasPlugin('@fastify/cookie'), 'no session plugin, no cookie plugin')
  const bearer = (claims: MemberClaims) => ({ authorization: `Bearer ${app.jwt.sign(claims)}` })
  const parent = bearer({ sub: 'p-1', name: 'Pat Parent', groups: ['parents'] })

  let res: LightMyRequestResponse | undefined
  const warnings = await conflictWarnings(async () => { res = await app.inject({ url: MATHS }) })
  t.equal(res!.statusCode, 302, 'a visitor is redirected')
  t.match(res!.headers.location, /\/login\?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F$/, 'to the host\'s login page, BackURL the category')
  t.equal(warnings.length, 1, 'the refused second redirect raises its warning')
  t.match(warnings[0].message, /^Already directed to \S+\/login\?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F; now trying to direct to \/schools\/resources\/$/)
  t.equal((await app.inject({ url: MATHS, headers: { authorization: 'Bearer not-a-token' } })).statusCode, 302, 'a bad token is a visitor')

  const maths = await app.inject({ url: MATHS, headers: parent })
  t.equal(maths.statusCode, 200, 'the category opens with the token')
  t.match(maths.body, /Pat Parent/)
  t.notMatch(maths.body, /Sign out/, 'no sign-out form: the section keeps no session')
  t.equal((await app.inject({ url: STAFF_ROOM, headers: parent })).statusCode, 403, 'the staff room refuses a parent')
  const pdf = await app.inject({ url: PDF, headers: parent })
  t.equal(pdf.statusCode, 200, 'the file downloads with the token')
  t.equal(pdf.headers['content-type'], 'application/pdf')
  t.equal((await app.inject({ url: STAFF_ROOM, headers: bearer({ sub: 't-1', name: 'Ada Teacher', groups: ['staff'] }) })).statusCode, 200, 'a staff token opens the staff room')
})

t.test('@fastify/secure-session with findMember: a copied cookie of a removed member is refused, the session version ends the rest', async (t) => {
  const people = new Map(Object.entries(PEOPLE).map(([, { password: _password, ...member }]) => [member.id, { ...member, sessionVersion: 1 }]))
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifySecureSession, { key: randomBytes(32), cookie: { path: '/' } })
  await app.register(schoolsResources, {
    catalog: new InMemoryCatalog(demoCatalog),
    files: demoFiles,
    authenticate,
    baseUrl: BASE_URL,
    findMember: (id) => people.get(id as string) ?? null,
    findMemberCache: { ttlMs: 0 }
  })
  await app.ready()
  const signInAs = async (email: string) => {
    const form = await formIn(app, '')
    const res = await postLogin(app, { email, password: PEOPLE[email].password }, { form })
    t.equal(res.statusCode, 303, `${email} signs in`)
    return withCookies(form.cookie, res)
  }
  const teacher = await signInAs(TEACHER)
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie: teacher } })).statusCode, 200, 'the staff room opens for the teacher')
  people.set('t-1', { ...people.get('t-1')!, groups: [] })
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie: teacher } })).statusCode, 403, 'removed from staff: the same cookie is refused the staff room')
  people.set('t-1', { ...people.get('t-1')!, sessionVersion: 2 })
  const after = await app.inject({ url: MATHS, headers: { cookie: teacher } })
  t.equal(after.statusCode, 302, '"sign out everywhere" (a new session version): the copied cookie admits nobody')
  t.match(after.cookies.find((c) => c.name === 'session'), { value: '', maxAge: 0 }, 'and the cookie is cleared')

  const parent = await signInAs(PARENT)
  people.delete('p-1')
  t.equal((await app.inject({ url: MATHS, headers: { cookie: parent } })).statusCode, 302, 'a deleted account is a visitor at once')
})
