import t from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { BASE_URL, CountingCatalog, SECRET, formToken, postLogin, sessionCookie, teacherOnly, TEACHER, withCookies } from '../helpers/app.js'

// Several sections in one app (/schools/resources and /staff/resources) share one sign-in: the first
// serves the login and logout routes, the others use them.

async function twoSections (second: Partial<FastifySchoolsResourcesOptions> = {}, close = true) {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  const common = { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL }
  await app.register(schoolsResources, common)
  app.register(schoolsResources, { ...common, prefix: '/staff/resources', ...second } as FastifySchoolsResourcesOptions)
  if (close) t.teardown(() => app.close())
  return app
}

t.test('two sections share one sign-in: one login serves both, and either logout form signs out of both', async (t) => {
  const app = await twoSections()
  await app.ready()
  const staff = await app.inject('/staff/resources/resources/maths/')
  t.equal(staff.headers.location, `${BASE_URL}/Security/login?BackURL=%2Fstaff%2Fresources%2Fresources%2Fmaths%2F`)

  const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, BackURL: '/staff/resources/resources/maths/' })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${BASE_URL}/staff/resources/resources/maths/`)
  const cookie = sessionCookie(res)!
  for (const section of ['/schools/resources', '/staff/resources']) {
    const page = await app.inject({ url: `${section}/resources/maths/`, headers: { cookie } })
    t.equal(page.statusCode, 200, `signed in to ${section}`)
    t.match(page.body, 'action="/Security/logout"')
  }
  const staffPage = await app.inject({ url: '/staff/resources/', headers: { cookie } })
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: withCookies(cookie, staffPage) }, payload: { _csrf: formToken(staffPage.body) } })
  t.equal(out.statusCode, 303, 'the second section\'s logout token is good at the shared logout')
  const after = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(after.statusCode, 302, 'signed out of both')
})

t.test('a later section whose sign-in would work differently fails at start-up', async (t) => {
  const cases: Array<[string, Partial<FastifySchoolsResourcesOptions>]> = [
    ['another sessionKey', { sessionKey: 'staff' }],
    ['another authenticate', { authenticate: async (c) => teacherOnly(c) }],
    ['another logoutPath', { logoutPath: '/staff/logout' }],
    ['a findMember of its own (the session would hold what the first does not read)', { findMember: async () => null }],
    ['other timeouts (the shared sign-in starts one set of times)', { timeouts: { idleMs: 5 * 60 * 1000 } }],
    ['timeouts off where the first has them on', { timeouts: false }]
  ]
  for (const [name, second] of cases) {
    await t.rejects(async () => { await (await twoSections(second, false)).ready() }, { code: 'FST_SR_SHARED_SIGN_IN', message: /\/staff\/resources\/ shares the sign-in at \/Security\/login/ }, name)
  }
})

t.test('a later section may still have a sign-in of its own, or none', async (t) => {
  const own = await twoSections({ loginPath: '/staff/login', logoutPath: '/staff/logout', sessionKey: 'staff' })
  await own.ready()
  t.equal((await own.inject('/staff/login')).statusCode, 200)
  const none = await twoSections({ signIn: false })
  await none.ready()
  t.equal((await none.inject('/staff/resources/resources/maths/')).headers.location, `${BASE_URL}/Security/login?BackURL=%2Fstaff%2Fresources%2Fresources%2Fmaths%2F`)
})
