// Issue 20, item 3: a host with its own sign-in keeps the affordances (a sign-in link, a sign-out link,
// its own name for the return parameter), and docs/sign-in.md's host login is the one that runs here.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifyFormbody from '@fastify/formbody'
import schoolsResources, { anonymousShortCircuit, InMemoryCatalog, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { BASE_URL, SECRET, TEACHER, TEACHER_MEMBER, buildTestApp, formBody, formToken, openLoginForm, postLogin, postSignOutForm, sessionCookie, signIn, withCookies } from '../helpers/app.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'
import { hostLogin } from '../../examples/host-login.js'

declare module 'fastify' {
  interface Session {
    /** The host app's own sign-out token. */
    logoutToken?: string
  }
}

const MATHS = '/schools/resources/resources/maths/'
const STAFF_ROOM = '/schools/resources/resources/staff-room/'
const catalog = new InMemoryCatalog(demoCatalog)

/**
 * A host app with its own login (examples/host-login.ts, as docs/sign-in.md shows it) and its own
 * sign-out: GET shows a confirmation form with the host's token, POST checks it and ends the session.
 */
async function hostApp (plugin: Partial<FastifySchoolsResourcesOptions> = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  await app.register(fastifyFormbody)
  hostLogin(app, BASE_URL, async (request) => {
    const { email, password } = request.body as { email?: string, password?: string }
    return email === TEACHER.email && password === TEACHER.password ? TEACHER_MEMBER : null
  })
  app.get('/Security/logout', async (request, reply) => {
    const token = request.session.logoutToken ?? randomBytes(16).toString('hex')
    request.session.logoutToken = token
    return reply.type('text/html').send(`<form method="post"><input type="hidden" name="token" value="${token}"><button>Sign out</button></form>`)
  })
  app.post('/Security/logout', async (request, reply) => {
    const { token } = request.body as { token?: string }
    if (request.session.logoutToken === undefined || token !== request.session.logoutToken) return reply.code(403).send('This form has expired.')
    await request.session.destroy()
    return reply.redirect('/', 303)
  })
  await app.register(schoolsResources, {
    catalog,
    signIn: false,
    logoutUrl: '/Security/logout',
    baseUrl: BASE_URL,
    files: demoFiles,
    ...plugin
  } as FastifySchoolsResourcesOptions)
  await app.ready()
  t.teardown(() => app.close())
  return app
}

function hostSignIn (app: FastifyInstance, url: string, password = TEACHER.password) {
  return app.inject({ method: 'POST', url, payload: { email: TEACHER.email, password } })
}

t.test('docs/sign-in.md shows examples/host-login.ts as it is', async (t) => {
  const docs = readFileSync(resolve(__dirname, '../../docs/sign-in.md'), 'utf8')
  const example = readFileSync(resolve(__dirname, '../../examples/host-login.ts'), 'utf8')
  t.ok(docs.includes('```ts\n' + example + '```\n'), 'the snippet is the file, byte for byte')
  t.ok(example.split('\n').length <= 16, 'about a dozen lines')
})

t.test('the recipe renews the session id: a session planted before sign-in opens nothing after it', async (t) => {
  const app = await hostApp()
  // The attacker's own session (the host's sign-out page starts one), its cookie planted in the victim's browser.
  const planted = sessionCookie(await app.inject('/Security/logout'))!
  const signedIn = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie: planted }, payload: { email: TEACHER.email, password: TEACHER.password } })
  t.equal(signedIn.statusCode, 303)
  t.not(sessionCookie(signedIn), planted, 'a new session id')
  t.equal((await app.inject({ url: MATHS, headers: { cookie: sessionCookie(signedIn)! } })).statusCode, 200, 'the member\'s new session opens the page')
  t.equal((await app.inject({ url: MATHS, headers: { cookie: planted } })).statusCode, 302, 'the planted one does not')
})

t.test('a host with its own sign-in: sign-in link, BackURL through the host login, sign-out link', async (t) => {
  const app = await hostApp()
  const index = await app.inject('/schools/resources/')
  t.match(index.body, '<a href="/Security/login">Sign in</a>', 'visitors are offered the host\'s login page')
  t.notMatch(index.body, /Sign out/)

  const anonymous = await app.inject(MATHS)
  t.equal(anonymous.statusCode, 302)
  t.equal(anonymous.headers.location, `${BASE_URL}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`, 'the spec\'s redirect')
  const login = new URL(anonymous.headers.location as string)

  const wrong = await hostSignIn(app, login.pathname + login.search, 'wrong')
  t.equal(wrong.statusCode, 401)
  const signedIn = await hostSignIn(app, login.pathname + login.search)
  t.equal(signedIn.statusCode, 303)
  t.equal(signedIn.headers.location, `${BASE_URL}${MATHS}`, 'safeBackUrl sends the member back, absolute')
  const cookie = sessionCookie(signedIn)!

  for (const hostile of ['https://evil.example/', '//evil.example', '/..//evil.example', 'javascript:alert(1)']) {
    const res = await hostSignIn(app, `/Security/login?BackURL=${encodeURIComponent(hostile)}`)
    t.equal(res.headers.location, `${BASE_URL}/schools/resources/`, `${hostile} falls back to the index`)
  }

  const page = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(page.statusCode, 200)
  t.match(page.body, 'Signed in as <strong>Ada Teacher</strong>')
  t.match(page.body, '<a href="/Security/logout">Sign out</a>', 'a plain link to the host\'s sign-out page')
  t.notMatch(page.body, /<form method="post" action="\/Security\/logout"/, 'no form the section cannot make a token for')
  t.notMatch(page.body, /Sign in<\/a>/)

  // The link is a GET: the host's page asks, and its own form (with its token) signs out.
  const confirm = await app.inject({ url: '/Security/logout', headers: { cookie } })
  const jar = withCookies(cookie, confirm)
  t.equal((await app.inject({ url: MATHS, headers: { cookie: jar } })).statusCode, 200, 'following the link alone signs no one out')
  const forged = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: jar }, payload: { token: 'guess' } })
  t.equal(forged.statusCode, 403, 'the host\'s token guards its sign-out')
  const token = /name="token" value="([^"]+)"/.exec(confirm.body)![1]
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: jar }, payload: { token } })
  t.equal(out.statusCode, 303)
  const after = await app.inject({ url: MATHS, headers: { cookie: jar } })
  t.equal(after.statusCode, 302, 'signed out: the login redirect again')

  // The 403 page of a host with its own sign-in: the header's sign-out link, no section form.
  const again = sessionCookie(await hostSignIn(app, '/Security/login'))!
  const refused = await app.inject({ url: STAFF_ROOM, headers: { cookie: again } })
  t.equal(refused.statusCode, 403)
  t.match(refused.body, '<a href="/Security/logout">Sign out</a>')
  t.notMatch(refused.body, /switch-account/)
})

t.test('logoutUrl may be an absolute URL on baseUrl\'s origin; without it, no sign-out is offered', async (t) => {
  const absolute = await hostApp({ logoutUrl: `${BASE_URL}/account/sign-out` })
  const cookie = sessionCookie(await hostSignIn(absolute, '/Security/login'))!
  t.match((await absolute.inject({ url: MATHS, headers: { cookie } })).body, `<a href="${BASE_URL}/account/sign-out">Sign out</a>`)

  const none = await hostApp({ logoutUrl: undefined })
  const page = await none.inject({ url: MATHS, headers: { cookie: sessionCookie(await hostSignIn(none, '/Security/login'))! } })
  t.equal(page.statusCode, 200)
  t.notMatch(page.body, /Sign out/)
})

t.test('returnParam renames the return parameter in a host\'s login redirect', async (t) => {
  const app = await hostApp({ returnParam: 'next', loginPath: '/accounts/login' })
  const res = await app.inject(`${MATHS}?subject=Maths`)
  t.equal(res.headers.location, `${BASE_URL}/accounts/login?next=%2Fschools%2Fresources%2Fresources%2Fmaths%2F%3Fsubject%3DMaths`)
  t.match((await app.inject('/schools/resources/')).body, '<a href="/accounts/login">Sign in</a>')
})

t.test('returnParam in the anonymous short-circuit\'s redirect too', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(anonymousShortCircuit)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  await app.register(schoolsResources, { catalog, authenticate: async () => null, baseUrl: BASE_URL, files: demoFiles, returnParam: 'returnTo' })
  const res = await app.inject(MATHS)
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, `${BASE_URL}/Security/login?returnTo=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  t.equal(res.headers['set-cookie'], undefined, 'no cookie for a visitor')
})

t.test('returnParam is followed by every reader of the section\'s own sign-in', async (t) => {
  const { app } = await buildTestApp({ plugin: { returnParam: 'returnTo' } })
  t.teardown(() => app.close())
  const anonymous = await app.inject(MATHS)
  t.equal(anonymous.headers.location, `${BASE_URL}/Security/login?returnTo=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`, 'the login redirect')

  const form = await app.inject('/Security/login?returnTo=%2Fschools%2Fresources%2Fresources%2Fmaths%2F')
  t.match(form.body, `<input type="hidden" name="returnTo" value="${MATHS}">`, 'the login form\'s hidden field')
  t.notMatch(form.body, /name="BackURL"/)
  t.notMatch((await app.inject(`/Security/login?BackURL=${encodeURIComponent(MATHS)}`)).body, /type="hidden" name="(BackURL|returnTo)"/, 'BackURL is no longer read')

  const posted = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, returnTo: MATHS })
  t.equal(posted.headers.location, `${BASE_URL}${MATHS}`, 'sign-in reads it from the form')
  const inQuery = await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { url: `/Security/login?returnTo=${encodeURIComponent(MATHS)}` })
  t.equal(inQuery.headers.location, `${BASE_URL}${MATHS}`, 'or from the query')
  const legacy = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, BackURL: MATHS })
  t.equal(legacy.headers.location, `${BASE_URL}/schools/resources/`, 'BackURL is ignored once renamed')
  const json = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, returnTo: MATHS, remember: true })
  t.equal(json.headers.location, `${BASE_URL}${MATHS}`, 'a JSON sign-in reads it too')

  const wrong = await postLogin(app, { email: TEACHER.email, password: 'wrong', returnTo: MATHS })
  t.equal(wrong.statusCode, 401)
  t.match(wrong.body, `name="returnTo" value="${MATHS}"`, 'a refused sign-in keeps it')
  const { cookie } = await openLoginForm(app)
  const stale = formBody({ _csrf: 'stale', email: TEACHER.email, password: TEACHER.password, returnTo: MATHS })
  const expired = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie, ...stale.headers }, payload: stale.payload })
  t.equal(expired.statusCode, 403)
  t.match(expired.body, `name="returnTo" value="${MATHS}"`, 'an expired form keeps it')

  const member = await signIn(app, undefined)
  const refused = await app.inject({ url: STAFF_ROOM, headers: { cookie: member } })
  t.match(refused.body, `<input type="hidden" name="returnTo" value="${STAFF_ROOM}">`, 'the 403 page\'s "Sign in as someone else" form')
  const switched = await postSignOutForm(app, member, refused, { returnTo: formField(refused.body, 'returnTo') })
  t.equal(switched.headers.location, `${BASE_URL}/Security/login?returnTo=%2Fschools%2Fresources%2Fresources%2Fstaff-room%2F`, 'logout sends the next member back with it')
})

function formField (body: string, name: string): string {
  return new RegExp(`name="${name}" value="([^"]+)"`).exec(body)![1]
}

t.test('the default keeps the spec\'s BackURL in every reader', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  t.equal((await app.inject(MATHS)).headers.location, `${BASE_URL}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  t.match((await app.inject(`/Security/login?BackURL=${encodeURIComponent(MATHS)}`)).body, `<input type="hidden" name="BackURL" value="${MATHS}">`)
  const member = await signIn(app)
  const refused = await app.inject({ url: STAFF_ROOM, headers: { cookie: member } })
  t.match(refused.body, `<input type="hidden" name="BackURL" value="${STAFF_ROOM}">`)
  t.match(formToken(refused.body), /./)
})

async function readyWith (options: Record<string, unknown>) {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  app.register(schoolsResources, { catalog, files: demoFiles, ...options } as unknown as FastifySchoolsResourcesOptions)
  try {
    await app.ready()
  } finally {
    await app.close()
  }
}

t.test('logoutUrl and returnParam are checked at registration', async (t) => {
  const host = { signIn: false, baseUrl: BASE_URL }
  const logoutUrls: unknown[] = [42, null, '', 'Security/logout', '/Security/logout/', '/Security//logout', '/Security/logout?x=1',
    '//evil.example/logout', 'https://evil.example/logout', `${BASE_URL}`, `${BASE_URL}//evil.example`, 'javascript:alert(1)', `${BASE_URL}.evil.example/x`]
  for (const logoutUrl of logoutUrls) {
    await t.rejects(readyWith({ ...host, logoutUrl }), { code: 'FST_SR_INVALID_OPTION', message: /"logoutUrl"/ }, `logoutUrl ${JSON.stringify(logoutUrl)}`)
  }
  await t.rejects(readyWith({ signIn: false, logoutUrl: `${BASE_URL}/logout` }), { code: 'FST_SR_INVALID_OPTION', message: /baseUrl/ }, 'an absolute URL needs baseUrl')
  await t.rejects(readyWith({ authenticate: async () => null, logoutUrl: '/logout' }), { code: 'FST_SR_INVALID_OPTION', message: /signIn: false/ }, 'the section\'s own sign-in has logoutPath')
  await t.resolves(readyWith({ ...host, logoutUrl: '/Security/logout' }))
  await t.resolves(readyWith({ ...host, logoutUrl: `${BASE_URL}/account/sign-out` }))

  for (const returnParam of [42, '', 'back url', 'a&b', 'a=b', 'ré', 'x'.repeat(65), 'email', 'password', '_csrf']) {
    await t.rejects(readyWith({ ...host, returnParam }), { code: 'FST_SR_INVALID_OPTION', message: /"returnParam"/ }, `returnParam ${JSON.stringify(returnParam)}`)
  }
  for (const returnParam of ['next', 'returnTo', 'return_to', 'back-url', 'a.b~c', 'x'.repeat(64)]) {
    await t.resolves(readyWith({ ...host, returnParam }), returnParam)
  }
})

t.test('sections sharing one sign-in must share returnParam', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  const authenticate = async () => null
  await app.register(schoolsResources, { catalog, authenticate, files: demoFiles })
  app.register(schoolsResources, { catalog, authenticate, files: demoFiles, prefix: '/staff/resources', returnParam: 'next' })
  await t.rejects(async () => app.ready(), { code: 'FST_SR_SHARED_SIGN_IN', message: /returnParam/ })
})
