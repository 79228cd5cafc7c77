import t from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { InMemoryCatalog, type FastifySchoolsResourcesOptions } from '../lib/index.js'
import { SECRET, buildTestApp, openLoginForm, teacherOnly } from './helpers/app.js'
import { demoCatalog, demoFiles } from '../examples/demo-catalog.js'

const catalog = new InMemoryCatalog({ categories: [] })

async function readyWith (options: unknown) {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  app.register(schoolsResources, options as FastifySchoolsResourcesOptions)
  await app.ready()
}

t.test('wrong options fail app.ready() with an error that names the option', async (t) => {
  const base = { catalog, authenticate: teacherOnly }
  const cases: Array<[string, unknown]> = [
    ['catalog', { authenticate: teacherOnly }],
    ['catalog', { ...base, catalog: { listCategories: () => [] } }],
    ['catalog', { ...base, catalog: null }],
    ['catalog.getCategoryPage', { ...base, catalog: { listCategories: async () => [], getCategory: async () => undefined, getCategoryPage: true } }],
    ['catalog.listCategoriesPage', { ...base, catalog: { listCategories: async () => [], getCategory: async () => undefined, listCategoriesPage: {} } }],
    ['authenticate', { catalog }],
    ['authenticate', { ...base, authenticate: 'yes' }],
    ['signIn', { ...base, signIn: 'no' }],
    ['keepSessionData', { ...base, keepSessionData: 'yes' }],
    ['prefix', { ...base, prefix: 'schools' }],
    ['prefix', { ...base, prefix: '/schools/' }],
    ['prefix', { ...base, prefix: '/' }],
    ['prefix', { ...base, prefix: '/a//b' }],
    ['prefix', { ...base, prefix: '/a?b' }],
    ['loginPath', { ...base, loginPath: 42 }],
    ['logoutPath', { ...base, logoutPath: 'https://x/logout' }],
    ['baseUrl', { ...base, baseUrl: 'https://www.example.org/sub/' }],
    ['baseUrl', { ...base, baseUrl: 'not a url' }],
    ['sessionKey', { ...base, sessionKey: '' }],
    ['getMember', { ...base, getMember: {} }],
    ['views', { ...base, views: 'x' }],
    ['views.footer', { ...base, views: { footer: () => '' } }],
    ['views.layout', { ...base, views: { layout: '<html>' } }],
    ['siteName', { ...base, siteName: ' ' }],
    ['catlog', { ...base, catlog: catalog }],
    ['passwordChecks', { ...base, passwordChecks: false }],
    ['passwordChecks.concurrent', { ...base, passwordChecks: { concurrent: 0 } }],
    ['passwordChecks.waiting', { ...base, passwordChecks: { waiting: -1 } }],
    ['passwordChecks.perAddress', { ...base, passwordChecks: { perAddress: 1.5 } }],
    ['cookieName', { ...base, cookieName: '' }],
    ['cookieName', { ...base, cookieName: 'a;b' }],
    ['auditKey', { ...base, auditKey: 'short' }],
    ['auditKey', { ...base, auditKey: Buffer.alloc(32) }],
    ['auditKey', { ...base, auditKey: 'a'.repeat(64) }],
    ['auditKey', { ...base, auditKey: 'passwordpasswordpasswordpassword' }],
    ['findMember', { ...base, findMember: 'members' }],
    ['findMember', { ...base, findMember: () => null, getMember: () => null }],
    ['findMemberCache', { ...base, findMemberCache: { ttlMs: 1000 } }],
    ['findMemberCache', { ...base, findMember: () => null, findMemberCache: false }],
    ['findMemberCache', { ...base, findMember: () => null, findMemberCache: 5000 }],
    ['findMemberCache.ttl', { ...base, findMember: () => null, findMemberCache: { ttl: 1000 } }],
    ['findMemberCache.ttlMs', { ...base, findMember: () => null, findMemberCache: { ttlMs: -1 } }],
    ['findMemberCache.ttlMs', { ...base, findMember: () => null, findMemberCache: { ttlMs: '5s' } }],
    ['findMemberCache.max', { ...base, findMember: () => null, findMemberCache: { max: 0 } }]
  ]
  for (const [name, options] of cases) {
    await t.rejects(readyWith(options), { code: 'FST_SR_INVALID_OPTION', message: new RegExp(`invalid option "${name.replace('.', '\\.')}"`) }, name)
  }
  await t.rejects(readyWith(undefined), { code: 'FST_SR_INVALID_OPTION', message: /"catalog"/ }, 'no options at all')
})

t.test('valid options start, including Fastify\'s own logLevel', async (t) => {
  await t.resolves(readyWith({ catalog, authenticate: teacherOnly, logLevel: 'warn', prefix: '/a-b/c_d.e' }))
  await t.resolves(readyWith({ catalog, signIn: false }), 'authenticate is optional without sign-in')
  await t.resolves(readyWith({ catalog, authenticate: teacherOnly, passwordChecks: { concurrent: 32, waiting: 0 }, cookieName: '__Host-sid' }), 'no line at all, and a cookie name with a prefix')
  await t.resolves(readyWith({ catalog, authenticate: teacherOnly, findMember: () => null }), 'findMember with the default cache')
  await t.resolves(readyWith({ catalog, authenticate: teacherOnly, findMember: () => null, findMemberCache: { ttlMs: 0, max: 10 } }), 'no cache (ttlMs: 0)')
})

t.test('a missing session plugin fails at startup with a clear error naming both', async (t) => {
  const noSession = Fastify()
  await noSession.register(fastifyCookie)
  noSession.register(schoolsResources, { catalog, authenticate: teacherOnly })
  await t.rejects(async () => { await noSession.ready() }, {
    code: 'FST_SR_NO_SESSION_PLUGIN',
    message: 'fastify-schools-resources: signIn is on, so the section needs a session: register @fastify/cookie, then @fastify/session or @fastify/secure-session, before the section (docs/session-wiring.md)'
  })

  const nothing = Fastify()
  nothing.register(schoolsResources, { catalog, signIn: false })
  await t.rejects(async () => { await nothing.ready() }, { code: 'FST_SR_NO_SESSION_PLUGIN', message: /^fastify-schools-resources: without getMember the member is read from the session, so/ })
})

t.test('the host keeps its own form parser and trailing-slash setting', async (t) => {
  let hostParsed = false
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } })
  t.teardown(() => app.close())
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    hostParsed = true
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, authenticate: teacherOnly })
  const index = await app.inject('/schools/resources')
  t.equal(index.statusCode, 200, 'the bare prefix is served by the router')
  t.match(index.body, /<h1>Resources<\/h1>/)
  const form = await openLoginForm(app)
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `email=nobody%40example.org&password=x&_csrf=${encodeURIComponent(form.token)}`
  })
  t.equal(res.statusCode, 401, 'the form was read, token and all')
  t.ok(hostParsed, 'the plugin did not replace the host parser')
})

t.test('the form parser stays inside the plugin', async (t) => {
  const { app } = await buildTestApp({ extend: (app) => { app.post('/host-form', async (request) => ({ body: request.body })) } })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/host-form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1' })
  t.equal(res.statusCode, 415, 'the host app did not get a urlencoded parser it never asked for')
})
