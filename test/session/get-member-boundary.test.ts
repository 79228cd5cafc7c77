import t, { type Test } from 'tap'
import fc from 'fast-check'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { buildTestApp } from '../helpers/app.js'
import { capturedLog, ERROR, WARN, type LogLine } from '../helpers/log-capture.js'
import { isMember } from '../../lib/session/member.js'

// Issue 18, item 1: what a host's getMember gives is checked where it enters. Falsy is a visitor; a
// member is a member; anything else is never let in: the section's 500 page, one warn with the fix, and
// nothing of the value or of a thrown error in the answer.

const SECRET = 'hunter2'
const MATHS = '/schools/resources/resources/maths/'
const FILE = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'

type GetMember = (request: FastifyRequest) => unknown

async function build (t: Test) {
  let current: GetMember = () => null
  const log = capturedLog()
  const { app } = await buildTestApp({
    fastify: { logger: log.logger },
    plugin: { getMember: ((request: FastifyRequest) => current(request)) as never },
    extend: (app: FastifyInstance) => {
      app.get('/members', { config: { membersOnly: true } }, async () => 'members only')
      app.get('/decorated', { preHandler: app.membersOnly() }, async () => 'members only too')
    }
  })
  t.teardown(() => app.close())
  return { app, lines: log.lines, use (getMember: GetMember) { current = getMember } }
}

// Every place the section asks who is signed in: members-only pages first.
const MEMBERS_ONLY = [MATHS, FILE, '/members', '/decorated']
const OPEN = ['/schools/resources/', '/Security/login', '/schools/resources/no/such/page']

t.test('the reproduction: getMember giving a host user object ({ id, username }) lets nobody in', async (t) => {
  const { app, lines, use } = await build(t)
  use(() => ({ id: 7, username: 'ann', password: SECRET }))
  for (const url of [...MEMBERS_ONLY, ...OPEN]) {
    const page = await app.inject({ url, headers: { accept: 'text/html' } })
    t.equal(page.statusCode, 500, `${url}: the 500 page`)
    t.match(page.headers['content-type'], /^text\/html/)
    t.match(page.body, /<h1>Something went wrong<\/h1>/)
    t.match(page.body, 'FST_SR_INVALID_MEMBER')
    t.notMatch(page.body, SECRET)
    t.notMatch(page.body, /Signed in as/)
    t.equal(page.headers['cache-control'], 'no-store')
    const json = await app.inject({ url, headers: { accept: 'application/json' } })
    t.equal(json.statusCode, 500)
    t.same(json.json(), { statusCode: 500, code: 'FST_SR_INVALID_MEMBER', error: 'Internal Server Error', message: 'Something went wrong on our side. Please try again later.' }, url)
  }
  const warns = lines.filter((l) => l.level === WARN && l.code === 'FST_SR_INVALID_MEMBER')
  t.equal(warns.length, 1, 'one warn for 14 requests')
  t.match(warns[0].msg, /getMember gave an object without them instead of a member, so nobody is let in.*Make getMember return \{ id, name/)
  t.notMatch(JSON.stringify(warns[0]), SECRET, 'the log does not quote the value either')
  const errors = lines.filter((l) => l.level === ERROR)
  t.equal(errors.length, 14, 'one error line per request')
  t.ok(errors.every((l) => typeof l.reqId === 'string' && l.code === 'FST_SR_INVALID_MEMBER'))
})

t.test('the reproduction: a getMember that throws SQLITE_BUSY (password=hunter2) never shows it', async (t) => {
  const { app, lines, use } = await build(t)
  use(() => { throw new Error(`SQLITE_BUSY (password=${SECRET})`) })
  for (const url of [...MEMBERS_ONLY, ...OPEN]) {
    for (const accept of ['text/html', 'application/json']) {
      const res = await app.inject({ url, headers: { accept } })
      t.equal(res.statusCode, 500, `${url} ${accept}`)
      t.notMatch(res.body, SECRET)
      t.notMatch(res.body, 'SQLITE_BUSY')
      if (accept === 'application/json') t.equal(res.json().code, 'FST_SR_INTERNAL_ERROR')
    }
  }
  const errors = lines.filter((l) => l.level === ERROR)
  t.equal(errors.length, 14)
  t.ok(errors.every((l) => l.err?.message === `SQLITE_BUSY (password=${SECRET})`), 'the full error is in the log, and only there')
})

t.test('the sign-in error handler (a form without its token) asks too: the 500, not the form', async (t) => {
  const { app, use } = await build(t)
  use(() => ({ name: 'no id', password: SECRET }))
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const res = await app.inject({ method: 'POST', url: '/Security/login', headers: form, payload: 'email=a%40example.org&password=x' })
  t.equal(res.statusCode, 500)
  t.match(res.body, 'FST_SR_INVALID_MEMBER')
  t.notMatch(res.body, SECRET)
  use(() => null)
  const visitor = await app.inject({ method: 'POST', url: '/Security/login', headers: form, payload: 'email=a%40example.org&password=x' })
  t.equal(visitor.statusCode, 403)
  t.match(visitor.body, 'This form has expired', 'a visitor gets the expired form')
})

t.test('falsy answers are visitors: the login redirect on members-only pages, the open pages as usual', async (t) => {
  const { app, lines, use } = await build(t)
  for (const falsy of [null, undefined, false, 0, '', Number.NaN]) {
    use(() => falsy)
    for (const url of MEMBERS_ONLY) {
      const res = await app.inject(url)
      t.equal(res.statusCode, 302, `${String(falsy)} ${url}`)
      t.match(res.headers.location, /\/Security\/login\?BackURL=/)
    }
    use(async () => falsy)
    t.equal((await app.inject('/schools/resources/')).statusCode, 200)
    t.equal((await app.inject('/Security/login')).statusCode, 200)
  }
  t.equal(lines.filter((l) => l.code === 'FST_SR_INVALID_MEMBER').length, 0)
})

t.test('a real member, sync or async, is let in as before', async (t) => {
  const { app, use } = await build(t)
  use(() => ({ id: 7, name: 'Ann Member', extra: 'ignored' }))
  t.equal((await app.inject(MATHS)).statusCode, 200)
  use(async () => ({ id: 'm-7', name: 'Ann Member' }))
  t.equal((await app.inject('/members')).body, 'members only')
  t.equal((await app.inject(FILE)).statusCode, 200)
})

// The spread: null, primitives, partial objects, near-misses, extra fields, thrown values, sync and async.
const marked = fc.string({ maxLength: 8 }).map((s) => `${SECRET}${s}`)
const nearMisses = fc.oneof(
  fc.record({ id: fc.oneof(fc.constant(undefined), fc.constant(''), fc.constant(Number.NaN), fc.constant(Infinity), fc.boolean(), fc.constant(null), fc.object()), name: marked }),
  fc.record({ id: fc.oneof(marked, fc.integer()), name: fc.oneof(fc.integer(), fc.constant(undefined), fc.constant(null), fc.array(marked)) }),
  fc.record({ id: marked, name: marked, groups: fc.oneof(marked, fc.array(fc.oneof(fc.integer(), fc.constant(''))), fc.constant(null), fc.object()) }),
  fc.record({ id: fc.integer({ min: 1 }), username: marked, displayName: marked }),
  fc.record({ user: fc.record({ id: fc.integer(), name: marked }) })
)
const truthy = fc.oneof(
  fc.constant({}), fc.constant(true), fc.integer({ min: 1 }), marked, fc.array(marked, { minLength: 0, maxLength: 3 }),
  fc.object().map((o) => ({ ...o, password: SECRET })), nearMisses, fc.constant(() => SECRET), fc.constant(Symbol(SECRET)),
  fc.constant(new Date()), fc.constant(Object.create(null) as object)
).filter((value) => !isMember(value))
const falsy = fc.constantFrom<unknown>(null, undefined, false, 0, -0, '', Number.NaN, 0n)
const thrown = fc.oneof(marked.map((m) => new Error(m)), marked, fc.constant(null), fc.constant(undefined), fc.record({ message: marked, statusCode: fc.constantFrom(500, 502, 503, 599, 200, 302) }))

type Case = { kind: 'falsy' | 'truthy', value: unknown, async: boolean } | { kind: 'throws', value: unknown, async: boolean }
const cases: fc.Arbitrary<Case> = fc.oneof(
  fc.record({ kind: fc.constant('falsy' as const), value: falsy, async: fc.boolean() }),
  fc.record({ kind: fc.constant('truthy' as const), value: truthy, async: fc.boolean() }),
  fc.record({ kind: fc.constant('throws' as const), value: thrown, async: fc.boolean() })
)

function getMemberFor (c: Case): GetMember {
  if (c.kind === 'throws') return c.async ? async () => { throw c.value } : () => { throw c.value }
  return c.async ? async () => c.value : () => c.value
}

t.test('a generated spread of wrong getMember answers: nobody let in, no raw text, no 5xx without a log line', async (t) => {
  const { app, lines, use } = await build(t)
  let requests = 0
  await fc.assert(fc.asyncProperty(cases, fc.constantFrom(...MEMBERS_ONLY, ...OPEN), fc.constantFrom('text/html', 'application/json', '*/*'), async (c, url, accept) => {
    use(getMemberFor(c))
    const before = lines.length
    const res = await app.inject({ url, headers: { accept } })
    requests++
    const logged: LogLine[] = lines.slice(before)
    if (MEMBERS_ONLY.includes(url)) {
      if (res.statusCode === 200) throw new Error(`let in on ${url}: ${String(c.kind)}`)
    }
    if (res.body.includes(SECRET)) throw new Error(`raw text in the answer to ${url}`)
    if (c.kind === 'falsy' && MEMBERS_ONLY.includes(url) && res.statusCode !== 302) throw new Error(`a visitor got ${res.statusCode} on ${url}`)
    if (c.kind !== 'falsy' && res.statusCode !== 500) throw new Error(`${c.kind} got ${res.statusCode} on ${url}`)
    if (res.statusCode >= 500 && !logged.some((l) => l.level >= ERROR && typeof l.reqId === 'string')) throw new Error(`a ${res.statusCode} without an error line on ${url}`)
  }), {
    numRuns: 300,
    // Every kind of value once whatever the seed, on a members-only page and an open one.
    examples: [[], true, 1, 1n, 'x', () => 1, Symbol('s'), {}, { id: 1, username: 'ann' }].flatMap((value): Array<[Case, string, string]> => [
      [{ kind: 'truthy', value, async: false }, MATHS, 'text/html'],
      [{ kind: 'truthy', value, async: true }, '/schools/resources/', 'application/json']
    ])
  })
  t.equal(requests, 300, 'the examples count among the runs')
  const warns = lines.filter((l) => l.level === WARN && l.code === 'FST_SR_INVALID_MEMBER')
  t.ok(warns.length <= 8, `one warn per kind of wrong value, not per request (${warns.length})`)
  t.notOk(lines.some((l) => l.level === WARN && JSON.stringify(l).includes(SECRET)), 'warns never quote the value')
})
