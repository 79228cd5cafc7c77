import t, { type Test } from 'tap'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import autoload from '@fastify/autoload'
import schoolsResources, { anonymousShortCircuit, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { demoFiles } from '../../examples/demo-catalog.js'
import { BASE_URL, CountingCatalog, SECRET, formToken, openLoginForm, sessionCookie, teacherOnly, TEACHER, withCookies, type PluginOptions } from '../helpers/app.js'

// The section under a register prefix: `register(fn, { prefix })` around it, an autoload folder, its own
// `prefix` option, or both. Every link, the stylesheet, the login redirect and the form actions must
// point where its routes are, and BackURL must carry the path the visitor asked for.

type Wrap = (app: FastifyInstance, plugin: PluginOptions) => Promise<void>

async function host (wrap: Wrap, plugin: PluginOptions = {}, extra?: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyCookie)
  await extra?.(app)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  await wrap(app, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL, files: demoFiles, ...plugin })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

const direct: Wrap = async (app, plugin) => { await app.register(schoolsResources, plugin as FastifySchoolsResourcesOptions) }
// A register prefix is an encapsulated context: the section starts there only when told that
// config.membersOnly routes outside it are not its to guard (FST_SR_SECTION_ENCAPSULATED).
const OUTSIDE = { membersOnlyOutsideSection: 'warn' } as const
const under = (prefix: string): Wrap => async (app, plugin) => {
  await app.register(async function site (site) {
    await site.register(schoolsResources, { ...plugin, ...OUTSIDE } as FastifySchoolsResourcesOptions)
  }, { prefix })
}

/** Every same-site href, src and form action in a page. */
function links (page: string): string[] {
  return [...page.matchAll(/(?:href|src|action)="([^"]+)"/g)].map((m) => m[1].replaceAll('&amp;', '&'))
    .filter((url) => url.startsWith('/') && !url.startsWith('//') && !url.startsWith('#'))
}

/** Signs in through the login page the redirect points to and follows the 303 back. */
async function signInVia (t: Test, app: FastifyInstance, loginLocation: string) {
  const login = new URL(loginLocation)
  const form = await openLoginForm(app, login.pathname)
  const page = await app.inject({ url: login.pathname + login.search })
  const action = /<form[^>]*action="([^"]+)"/.exec(page.body)![1].replaceAll('&amp;', '&')
  t.equal(action.split('?')[0], login.pathname, 'the login form posts where it was served')
  const backUrl = login.searchParams.get('BackURL')!
  const res = await app.inject({
    method: 'POST',
    url: action,
    headers: { cookie: form.cookie },
    payload: { _csrf: form.token, email: TEACHER.email, password: TEACHER.password, BackURL: backUrl }
  })
  t.equal(res.statusCode, 303, 'signed in')
  return { cookie: sessionCookie(res)!, location: res.headers.location as string }
}

/** The whole visit under `section` (its public path): redirect, login, return, every link answers. */
async function visit (t: Test, app: FastifyInstance, section: string, login: string) {
  const maths = `${section}/resources/maths/`
  const anonymous = await app.inject(maths)
  t.equal(anonymous.statusCode, 302)
  t.equal(anonymous.headers.location, `${BASE_URL}${login}?BackURL=${encodeURIComponent(maths)}`, 'login under the prefix; BackURL is the path asked for')

  const { cookie, location } = await signInVia(t, app, anonymous.headers.location as string)
  t.equal(location, `${BASE_URL}${maths}`, 'back where the visitor started')
  const page = await app.inject({ url: maths, headers: { cookie } })
  t.equal(page.statusCode, 200)
  const found = links(page.body)
  t.ok(found.some((url) => url.startsWith(`${section}/assets/resources.css?v=`)), 'the stylesheet link is under the prefix')
  t.ok(found.includes(`${section}/`), 'the index link is under the prefix')
  t.match(page.body, new RegExp(`action="${login.replace('login', 'logout')}"`), 'the logout form posts under the prefix')

  const index = await app.inject({ url: `${section}/`, headers: { cookie } })
  // The demo catalog's staff room is marked for this member (not staff): its link gets the 403 page.
  const staffRoom = `${section}/resources/staff-room/`
  const locked = [...index.body.matchAll(/<a href="([^"]+)" aria-describedby="locked-/g)].map((m) => m[1])
  t.same(locked, [staffRoom], 'the staff-only category is marked as locked, under the prefix')
  for (const url of new Set([...found, ...links(index.body)])) {
    const method = page.body.includes(`action="${url}"`) ? 'POST' : 'GET'
    if (method === 'POST') continue
    const res = await app.inject({ url, headers: { cookie } })
    t.equal(res.statusCode, url === staffRoom ? 403 : 200, `${url} answers`)
  }
  const refused = await app.inject({ url: staffRoom, headers: { cookie } })
  t.match(refused.body, `<form method="post" action="${login.replace('login', 'logout')}" class="switch-account">`, 'the 403 page signs out under the prefix')
  t.match(refused.body, `<input type="hidden" name="BackURL" value="${staffRoom}">`, 'and comes back to the refused page')
  const out = await app.inject({ method: 'POST', url: login.replace('login', 'logout'), headers: { cookie: withCookies(cookie, page) }, payload: { _csrf: formToken(page.body) } })
  t.equal(out.statusCode, 303, 'signed out at the logout form\'s action')
  t.equal(new URL(out.headers.location as string, BASE_URL).href, `${BASE_URL}${section}/`)
  const missing = await app.inject(`${section}/no/such/page`)
  t.equal(missing.statusCode, 404)
  t.match(missing.body, `href="${section}/"`, 'the section\'s own 404 page, linking its index')
}

t.test('the plugin\'s own prefix option is the section\'s path (Fastify does not read it as a register prefix)', async (t) => {
  const app = await host(direct, { prefix: '/staff/resources' })
  await visit(t, app, '/staff/resources', '/Security/login')
  t.equal((await app.inject('/schools/resources/')).statusCode, 404, 'nothing at the default path')
})

t.test('a wrapping register prefix moves every route, link, redirect and form', async (t) => {
  const app = await host(under('/site'))
  await visit(t, app, '/site/schools/resources', '/site/Security/login')
  t.equal((await app.inject('/Security/login')).statusCode, 404, 'nothing at the unprefixed login')
})

t.test('a register prefix with a trailing slash works the same', async (t) => {
  const app = await host(under('/site/'))
  await visit(t, app, '/site/schools/resources', '/site/Security/login')
})

t.test('both together: the register prefix, then the section\'s own prefix', async (t) => {
  const app = await host(under('/site'), { prefix: '/staff/resources', loginPath: '/staff/login', logoutPath: '/staff/logout' })
  await visit(t, app, '/site/staff/resources', '/site/staff/login')
})

t.test('@fastify/autoload: a route folder is a register prefix', async (t) => {
  const app = await host(async (app, plugin) => {
    await app.register(autoload, { dir: join(__dirname, '../fixtures/autoload'), options: { section: schoolsResources, sectionOptions: { ...plugin, ...OUTSIDE } } })
  })
  await visit(t, app, '/site/schools/resources', '/site/Security/login')
})

t.test('the anonymous short-circuit answers under a register prefix with the prefixed login page', async (t) => {
  let hostHook = 0
  const app = await host(under('/site'), {}, async (app) => {
    await app.register(anonymousShortCircuit)
    app.addHook('onRequest', async () => { hostHook++ })
  })
  const res = await app.inject('/site/schools/resources/resources/maths/')
  t.equal(res.headers.location, `${BASE_URL}/site/Security/login?BackURL=%2Fsite%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  t.equal(hostHook, 0, 'answered by the short-circuit, before the hooks after it')
})

t.test('a register prefix with a route parameter fails at start-up with a clear code', async (t) => {
  for (const prefix of ['/:school', '/schools/*']) {
    const app = Fastify()
    await app.register(fastifyCookie)
    await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
    app.register(async function site (site) {
      await site.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly })
    }, { prefix })
    await t.rejects(async () => { await app.ready() }, { code: 'FST_SR_REGISTER_PREFIX', message: new RegExp(`"${prefix.replace('*', '\\*')}"`) }, prefix)
  }
})
