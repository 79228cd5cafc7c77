import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import rateLimit from '@fastify/rate-limit'
import schoolsResources, { anonymousShortCircuit, type Member } from '../lib/index.js'
import { BASE_URL, CountingCatalog, SECRET, signIn, teacherOnly } from './helpers/app.js'

// Every hook a host registers runs before any page for a signed-in member, whether or not the
// anonymous short-circuit is on. The hooks are the ones a review found skipped by the old member fast
// path: an MFA gate, a suspension check, an audit trail and a host-wide rate limit.

const MATHS = '/schools/resources/resources/maths/'

declare module 'fastify' {
  interface Session {
    mfaPending?: boolean
  }
}

interface Host {
  app: FastifyInstance
  audit: string[]
  suspended: Set<Member['id']>
}

async function buildHost (shortCircuit: boolean): Promise<Host> {
  const audit: string[] = []
  const suspended = new Set<Member['id']>()
  const app = Fastify()
  await app.register(fastifyCookie)
  if (shortCircuit) await app.register(anonymousShortCircuit)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  // A host-wide limit, as @fastify/rate-limit's docs register it.
  await app.register(rateLimit, { max: 6, timeWindow: 60_000 })
  // A second factor still owed: the member is half signed in until /mfa is done.
  app.addHook('onRequest', async (request, reply) => {
    if (request.session.get('mfaPending') === true && !request.url.startsWith('/mfa')) return reply.redirect('/mfa')
  })
  app.addHook('preHandler', async (request, reply) => {
    const member = request.session.get('member')
    if (member !== undefined && suspended.has(member.id)) return reply.code(403).send('suspended')
  })
  app.addHook('preHandler', async (request) => {
    audit.push(`${request.session.get('member')?.id ?? 'anonymous'} ${request.url}`)
  })
  app.post('/mfa/start', async (request) => {
    request.session.set('mfaPending', true)
    return 'pending'
  })
  await app.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL, loginRateLimit: false })
  await app.ready()
  t.teardown(() => app.close())
  return { app, audit, suspended }
}

for (const shortCircuit of [false, true]) {
  const mode = shortCircuit ? 'with anonymousShortCircuit' : 'without it'

  t.test(`${mode}: the host's MFA gate stops a half-signed-in member before the page`, async (t) => {
    const { app } = await buildHost(shortCircuit)
    const cookie = await signIn(app)
    t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200, 'fully signed in: the page')
    t.equal((await app.inject({ method: 'POST', url: '/mfa/start', headers: { cookie } })).statusCode, 200)
    const res = await app.inject({ url: MATHS, headers: { cookie } })
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, '/mfa', "the host's redirect, not the page")
    t.notMatch(res.body, /Mathematics/)
  })

  t.test(`${mode}: a suspension check and an audit preHandler run for every member page`, async (t) => {
    const { app, audit, suspended } = await buildHost(shortCircuit)
    const cookie = await signIn(app)
    audit.length = 0
    t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200)
    t.same(audit, [`t-1 ${MATHS}`])
    suspended.add('t-1')
    const res = await app.inject({ url: MATHS, headers: { cookie } })
    t.equal(res.statusCode, 403)
    t.equal(res.body, 'suspended')
    // Not only pages: the section's redirect of a member (an unknown category) comes after the host's hooks too.
    const unknown = await app.inject({ url: '/schools/resources/resources/no-such-category/', headers: { cookie } })
    t.equal(unknown.statusCode, 403)
    t.equal(unknown.body, 'suspended')
    suspended.clear()
    const index = await app.inject({ url: '/schools/resources/resources/no-such-category/', headers: { cookie } })
    t.equal(index.statusCode, 302)
    t.equal(index.headers.location, '/schools/resources/')
  })

  t.test(`${mode}: the host-wide rate limit counts member pages`, async (t) => {
    const { app } = await buildHost(shortCircuit)
    const cookie = await signIn(app)
    const codes: number[] = []
    for (let i = 0; i < 8; i++) codes.push((await app.inject({ url: MATHS, headers: { cookie } })).statusCode)
    t.ok(codes.includes(429), `a 429 once the host's limit is used up (${codes.join(' ')})`)
    t.equal(codes.filter((c) => c === 200).length + codes.filter((c) => c === 429).length, codes.length)
  })
}
