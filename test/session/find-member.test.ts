import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { FindMember, FoundMember, Member } from '../../lib/index.js'
import { buildTestApp, postLogin, sessionCookie, signOut, type BuildOptions } from '../helpers/app.js'
import { AsyncStore } from '../helpers/async-store.js'
import { capturedLog, ERROR, WARN } from '../helpers/log-capture.js'
import { authenticate, PEOPLE } from '../helpers/members.js'

// Issue 20, item 4: with findMember the session keeps the member's id, and each request loads the member
// through a short per-process cache, so a school cuts a leaver's access within that time.

const STAFF_ROOM = '/schools/resources/resources/staff-room/'
const PARENT = 'parent@example.org'
const TEACHER = 'teacher@example.org'
const STUDENT = 'student@example.org'

/** The school's directory as findMember reads it: members by id, changed by the tests as an admin would. */
function directory () {
  const members = new Map<Member['id'], FoundMember>()
  for (const { password: _password, ...member } of Object.values(PEOPLE)) members.set(member.id, member)
  const asked: Array<Member['id']> = []
  const findMember: FindMember = async (id) => {
    asked.push(id)
    return members.get(id) ?? null
  }
  return { members, asked, findMember }
}

async function build (t: Test, findMember: FindMember, opts: BuildOptions & { ttlMs?: number, max?: number } = {}) {
  const log = capturedLog()
  const built = await buildTestApp({
    fastify: { logger: log.logger },
    ...opts,
    plugin: { authenticate, findMember, findMemberCache: { ttlMs: opts.ttlMs ?? 5000, ...(opts.max === undefined ? {} : { max: opts.max }) }, ...opts.plugin },
    extend: (app: FastifyInstance) => {
      app.get('/staff/noticeboard', { config: { membersOnly: { groups: ['staff'], title: 'the staff noticeboard' } } }, async (request) => `for ${request.schoolsMember!.name}`)
      app.get('/open', async (request) => ({ member: request.schoolsMember ?? null }))
      opts.extend?.(app)
    }
  })
  t.teardown(() => built.app.close())
  return { ...built, lines: log.lines }
}

async function signInAs (app: FastifyInstance, email: string): Promise<string> {
  const res = await postLogin(app, { email, password: PEOPLE[email].password })
  if (res.statusCode !== 303) throw new Error(`${email} could not sign in: ${res.statusCode}`)
  return sessionCookie(res)!
}

function stored (store: AsyncStore): unknown[] {
  return [...store.sessions.values()].map((json) => JSON.parse(json).member)
}

t.test('a teacher removed from staff while signed in is refused the staff room once the cache time is over', async (t) => {
  const ttlMs = 40
  const { members, asked, findMember } = directory()
  const { app, store } = await build(t, findMember, { ttlMs })
  const cookie = await signInAs(app, TEACHER)
  t.same(stored(store), [{ id: 't-1' }], 'the session keeps the id only')
  t.same(asked, ['t-1'], 'sign-in asked findMember once')
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie } })).statusCode, 200)
  t.equal((await app.inject({ url: '/staff/noticeboard', headers: { cookie } })).body, 'for Ada Teacher', 'the host route reads request.schoolsMember')

  members.set('t-1', { id: 't-1', name: 'Ada Teacher', groups: [] })
  const asks = asked.length
  await sleep(ttlMs + 10)
  const refused = await app.inject({ url: STAFF_ROOM, headers: { cookie } })
  t.equal(refused.statusCode, 403, 'the staff room refuses the former teacher')
  t.match(refused.body, 'Ada Teacher', 'still signed in: only the group went')
  t.equal((await app.inject({ url: '/staff/noticeboard', headers: { cookie } })).statusCode, 403)
  t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })).statusCode, 200, 'pages open to every member still open')
  t.ok(asked.length > asks && asked.every((id) => id === 't-1'), 'looked up again after the cache time')
  t.same(stored(store), [{ id: 't-1' }], 'the session is kept')
})

t.test('a deleted member gets the login redirect on the next request after the cache time, and the session no longer holds them', async (t) => {
  const ttlMs = 40
  const { members, asked, findMember } = directory()
  const { app, store } = await build(t, findMember, { ttlMs })
  const teacher = await signInAs(app, TEACHER)
  const parent = await signInAs(app, PARENT)
  t.equal(store.sessions.size, 2)
  members.delete('t-1')
  await sleep(ttlMs + 10)
  const res = await app.inject({ url: STAFF_ROOM, headers: { cookie: teacher } })
  t.equal(res.statusCode, 302, 'the spec\'s login redirect')
  t.equal(res.headers.location, 'https://www.example.org/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fstaff-room%2F')
  t.same(stored(store), [{ id: 'p-1' }], 'the leaver\'s session is gone from the store; the parent\'s stays')
  const before = asked.length
  const again = await app.inject({ url: '/schools/resources/', headers: { cookie: teacher } })
  t.equal(again.statusCode, 200)
  t.notMatch(again.body, 'Ada Teacher', 'the index shows a visitor')
  t.equal(asked.length, before, 'nothing left to look up')
  t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: parent } })).statusCode, 200, 'the parent is still signed in')
})

t.test('"not found" is cached too: a deleted member costs one lookup per cache time', async (t) => {
  const { members, asked, findMember } = directory()
  const { app } = await build(t, findMember, { ttlMs: 60_000 })
  const cookies = [await signInAs(app, STUDENT), await signInAs(app, STUDENT)]
  members.delete(42)
  // The cache still has the student from sign-in: the change is not seen before the cache time.
  t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: cookies[0] } })).statusCode, 200)
  t.same(asked, [42, 42], 'numeric ids stay numbers')
})

t.test('findMember is called once for N truly parallel requests', async (t) => {
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  const { members, findMember: direct } = directory()
  let calls = 0
  let held = false
  const findMember: FindMember = async (id) => {
    calls++
    if (held) await gate
    return direct(id)
  }
  const N = 12
  let arrived = 0
  // No cache (ttlMs: 0): only the lookups in flight at once share a call. The host's preHandler counts
  // the requests; when the last one's hook is done the guard behind it has asked (synchronously).
  const { app } = await build(t, findMember, {
    ttlMs: 0,
    extend: (app) => app.addHook('preHandler', (request, _reply, done) => {
      const counted = held && request.url === STAFF_ROOM
      done()
      if (counted && ++arrived === N) release()
    })
  })
  const cookie = await signInAs(app, TEACHER)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  held = true
  calls = 0
  const answers = await Promise.all(Array.from({ length: N }, () => fetch(`${origin}${STAFF_ROOM}`, { headers: { cookie }, redirect: 'manual' })))
  t.same(answers.map((r) => r.status), Array(N).fill(200))
  t.equal(arrived, N)
  t.equal(calls, 1, `one findMember call for ${N} requests`)
  members.delete('t-1')
  const gone = await fetch(`${origin}${STAFF_ROOM}`, { headers: { cookie }, redirect: 'manual' })
  t.equal(gone.status, 302, 'without a cache the next request sees the deletion')
})

t.test('the cache is bounded: past max ids the least recently used is asked again', async (t) => {
  const { asked, findMember } = directory()
  const { app } = await build(t, findMember, { max: 2 })
  const cookies = [await signInAs(app, TEACHER), await signInAs(app, PARENT), await signInAs(app, STUDENT)]
  t.same(asked, ['t-1', 'p-1', 42])
  for (const cookie of cookies.slice(1)) t.equal((await app.inject({ url: '/open', headers: { cookie } })).statusCode, 200)
  // /open has no guard: nothing was looked up there.
  t.same(asked, ['t-1', 'p-1', 42])
  await app.inject({ url: '/schools/resources/', headers: { cookie: cookies[2] } })
  await app.inject({ url: '/schools/resources/', headers: { cookie: cookies[1] } })
  t.same(asked, ['t-1', 'p-1', 42], 'the two latest are kept')
  await app.inject({ url: '/schools/resources/', headers: { cookie: cookies[0] } })
  t.same(asked, ['t-1', 'p-1', 42, 't-1'], 'the first was evicted, and is asked again')
  await app.inject({ url: '/schools/resources/', headers: { cookie: cookies[2] } })
  t.same(asked, ['t-1', 'p-1', 42, 't-1', 42], 'which evicted the least recently used')
})

t.test('request.schoolsMember: the admitted member on guarded routes, undefined elsewhere', async (t) => {
  const { findMember } = directory()
  const { app } = await build(t, findMember)
  const cookie = await signInAs(app, TEACHER)
  t.same((await app.inject({ url: '/open', headers: { cookie } })).json(), { member: null }, 'no guard ran')
  t.equal((await app.inject({ url: '/staff/noticeboard', headers: { cookie } })).body, 'for Ada Teacher')
})

t.test('a session version (Django\'s session auth hash): a change refuses every earlier session, copied cookies included', async (t) => {
  const { members, findMember } = directory()
  members.set('t-1', { ...members.get('t-1')!, sessionVersion: 'pw-1' })
  const { app, store } = await build(t, findMember, { ttlMs: 0 })
  const laptop = await signInAs(app, TEACHER)
  const copied = laptop
  const phone = await signInAs(app, TEACHER)
  t.same(stored(store), [{ id: 't-1', sessionVersion: 'pw-1' }, { id: 't-1', sessionVersion: 'pw-1' }], 'stored at sign-in')
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie: copied } })).statusCode, 200)

  // The password changes ("sign out everywhere"): a new version.
  members.set('t-1', { ...members.get('t-1')!, sessionVersion: 'pw-2' })
  for (const cookie of [copied, phone]) {
    const res = await app.inject({ url: STAFF_ROOM, headers: { cookie } })
    t.equal(res.statusCode, 302, 'refused: a visitor')
  }
  t.equal(store.sessions.size, 0, 'and forgotten')
  const fresh = await signInAs(app, TEACHER)
  t.same(stored(store), [{ id: 't-1', sessionVersion: 'pw-2' }])
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie: fresh } })).statusCode, 200, 'a new sign-in works')
  // Numbers work as versions too; a session from before versions were given is refused (it signs in again).
  members.set('t-1', { ...members.get('t-1')!, sessionVersion: 3 })
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie: fresh } })).statusCode, 302)
})

t.test('an upgrade: a whole member stored before findMember is re-loaded by its id', async (t) => {
  const store = new AsyncStore()
  const { members, asked, findMember } = directory()
  const before = await buildTestApp({ session: { store }, plugin: { authenticate } })
  const cookie = await signInAs(before.app, TEACHER)
  await before.app.close()
  t.same(stored(store), [{ id: 't-1', name: 'Ada Teacher', groups: ['staff'] }], 'the whole member, as before findMember')

  members.set('t-1', { id: 't-1', name: 'Ada Teacher', groups: ['parents'] })
  const { app } = await build(t, findMember, { session: { store } })
  const res = await app.inject({ url: STAFF_ROOM, headers: { cookie } })
  t.equal(res.statusCode, 403, 'the groups come from findMember, not from the stored member')
  t.same(asked, ['t-1'])
  t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })).statusCode, 200, 'still signed in')
  await signOut(app, cookie)
  t.equal(store.sessions.size, 0, 'sign-out as before')
})

t.test('a host whose own login stores { id, username } under sessionKey: findMember loads the member', async (t) => {
  const { findMember } = directory()
  const { app } = await build(t, findMember, {
    plugin: { signIn: false, authenticate: undefined },
    extend: (app) => app.post('/login', async (request) => {
      request.session.set('member', { id: 't-1', username: 'ada' } as never)
      return 'ok'
    })
  })
  const cookie = sessionCookie(await app.inject({ method: 'POST', url: '/login' }))!
  t.equal((await app.inject({ url: '/staff/noticeboard', headers: { cookie } })).body, 'for Ada Teacher')
})

/** A store whose destroy fails once `failing` is set (sign-in's regenerate destroys the old id too). */
class FailingDestroyStore extends AsyncStore {
  failing = false

  override destroy (sessionId: string, callback: (err?: unknown) => void): void {
    if (!this.failing) return super.destroy(sessionId, callback)
    setImmediate(() => callback(Object.assign(new Error('ECONNRESET redis password=hunter2'), { code: 'ECONNRESET' })))
  }
}

t.test('a store error while forgetting a deleted member is no 500: still a visitor, one warn line', async (t) => {
  const { members, findMember } = directory()
  const store = new FailingDestroyStore()
  const { app, lines } = await build(t, findMember, { ttlMs: 0, session: { store } })
  const cookie = await signInAs(app, TEACHER)
  members.delete('t-1')
  store.failing = true
  const res = await app.inject({ url: STAFF_ROOM, headers: { cookie } })
  t.equal(res.statusCode, 302)
  t.notMatch(res.body, 'hunter2')
  t.equal(store.sessions.size, 1, 'the store kept the session')
  const notEnded = () => lines.filter((l) => l.level === WARN && /could not be ended/.test(l.msg))
  t.equal(notEnded().length, 1, 'one warn line')
  t.match(notEnded()[0], { code: 'FST_SR_STORE_UNAVAILABLE', msg: /the session of a member no longer found could not be ended; answered as a visitor/, err: { message: /ECONNRESET/ } })
  t.equal(lines.filter((l) => l.level >= ERROR).length, 0, 'no 500 line')
  const next = await app.inject({ url: '/staff/noticeboard', headers: { cookie } })
  t.equal(next.statusCode, 302, 'and the next request too, which tries again')
  t.equal(notEnded().length, 2)
  store.failing = false
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie } })).statusCode, 302)
  t.equal(store.sessions.size, 0, 'with the store back, the session is gone')
})

t.test('bad findMember answers: the 500 page, one warn with the fix, never the raw error', async (t) => {
  const SECRET = 'hunter2'
  let answer: () => unknown = () => null
  const { members, findMember: direct } = directory()
  const findMember = (async (id: Member['id']) => {
    const given = answer()
    return given === undefined ? direct(id) : given
  }) as FindMember
  const { app, lines } = await build(t, findMember, { ttlMs: 0 })
  answer = () => undefined
  const cookie = await signInAs(app, TEACHER)

  const wrong: Array<[string, unknown, RegExp]> = [
    ['a host user record', { id: 't-1', username: 'ada', password: SECRET }, /findMember gave an object without them instead of a member/],
    ['another member', { ...members.get('p-1'), password: SECRET }, /findMember gave a member with another id instead of a member/],
    ['a bad sessionVersion', { ...members.get('t-1'), sessionVersion: { secret: SECRET } }, /findMember gave a sessionVersion that is not a string or a number/],
    ['true', true, /findMember gave a boolean/]
  ]
  for (const [what, value, warning] of wrong) {
    answer = () => value
    const before = lines.length
    for (const url of [STAFF_ROOM, '/staff/noticeboard', '/schools/resources/']) {
      const page = await app.inject({ url, headers: { cookie, accept: 'text/html' } })
      t.equal(page.statusCode, 500, `${what}: ${url}`)
      t.match(page.body, 'FST_SR_INVALID_MEMBER')
      t.notMatch(page.body, SECRET)
    }
    const json = await app.inject({ url: STAFF_ROOM, headers: { cookie, accept: 'application/json' } })
    t.equal(json.json().code, 'FST_SR_INVALID_MEMBER')
    const warns = lines.slice(before).filter((l) => l.level === WARN && l.code === 'FST_SR_INVALID_MEMBER')
    t.equal(warns.length, 1, `${what}: one warn for four requests`)
    t.match(warns[0].msg, warning)
    t.match(warns[0].msg, /Make findMember return \{ id, name, email\?, groups\?, sessionVersion\? \} for the id it is given/)
    t.notMatch(JSON.stringify(warns[0]), SECRET)
    t.equal(lines.slice(before).filter((l) => l.level === ERROR).length, 4, 'one error line per request')
  }

  answer = () => { throw new Error(`SQLITE_BUSY (password=${SECRET})`) }
  const before = lines.length
  const thrown = await app.inject({ url: STAFF_ROOM, headers: { cookie, accept: 'application/json' } })
  t.equal(thrown.statusCode, 500)
  t.equal(thrown.json().code, 'FST_SR_INTERNAL_ERROR')
  t.notMatch(thrown.body, SECRET)
  const errors = lines.slice(before).filter((l) => l.level === ERROR)
  t.equal(errors.length, 1)
  t.equal(errors[0].err?.message, `SQLITE_BUSY (password=${SECRET})`, 'the error is in the log, and only there')

  answer = () => undefined
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie } })).statusCode, 200, 'a failure is not cached: the next good answer lets the member in')
})

t.test('sign-in: a member authenticate lets in but findMember does not find is not signed in', async (t) => {
  const { members, findMember } = directory()
  const { app, store, lines } = await build(t, findMember)
  members.delete('t-1')
  const res = await postLogin(app, { email: TEACHER, password: PEOPLE[TEACHER].password }, { headers: { accept: 'application/json' } })
  t.equal(res.statusCode, 500)
  t.equal(res.json().code, 'FST_SR_INVALID_MEMBER')
  t.equal(sessionCookie(res), undefined, 'no session cookie')
  t.equal(store.sessions.size, 0)
  t.match(lines.find((l) => l.level === WARN && l.code === 'FST_SR_INVALID_MEMBER')?.msg, 'findMember gave nothing for the member authenticate signed in')
})
