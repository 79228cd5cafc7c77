import t from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import csrfProtection from '@fastify/csrf-protection'
import schoolsResources, { InMemoryCatalog } from '../../lib/index.js'
import { CSRF_COOKIE, SECRET, TEACHER, buildTestApp, formBody, formToken, openLoginForm, postLogin, sessionCookie, signIn, signOut, teacherOnly, withCookies } from '../helpers/app.js'

const MATHS = '/schools/resources/resources/maths/'

t.test('sign-in without a valid token is refused with 403 and changes nothing', async (t) => {
  const cases = ['no token', 'a wrong token', 'a token of another visitor', 'no CSRF cookie'] as const
  for (const what of cases) {
    const { app, store } = await buildTestApp()
    const form = await openLoginForm(app)
    const other = await openLoginForm(app)
    const token = { 'no token': undefined, 'a wrong token': 'not-a-token', 'a token of another visitor': other.token, 'no CSRF cookie': form.token }[what]
    const headers: Record<string, string> = what === 'no CSRF cookie' ? {} : { cookie: form.cookie }
    const before = JSON.stringify([...store.sessions.entries()])
    const body = formBody({ email: TEACHER.email, password: TEACHER.password, BackURL: MATHS, ...(token === undefined ? {} : { _csrf: token }) })
    const res = await app.inject({ method: 'POST', url: '/Security/login', headers: { ...headers, ...body.headers }, payload: body.payload })
    t.equal(res.statusCode, 403, what)
    t.match(res.body, /role="alert"[^>]*>This form has expired\. Please try again\.</, `${what}: a clear message`)
    t.match(res.body, `name="BackURL" value="${MATHS}"`, `${what}: the return address is kept`)
    t.notOk([...store.sessions.values()].some((json) => JSON.parse(json).member !== undefined), `${what}: nobody signed in`)
    t.equal(JSON.stringify([...store.sessions.entries()]), before, `${what}: the store did not change`)
    // The page that comes back carries a fresh token that works.
    const retry = await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { form: { cookie: withCookies(headers.cookie, res), token: formToken(res.body) } })
    t.equal(retry.statusCode, 303, `${what}: the fresh form works`)
    await app.close()
  }
})

t.test('JSON clients get the token from GET and send it in a header', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const tokenRes = await app.inject({ url: '/Security/login', headers: { accept: 'application/json' } })
  const { signedIn, csrfToken } = tokenRes.json()
  t.equal(signedIn, false)
  t.type(csrfToken, 'string')
  const cookie = withCookies(undefined, tokenRes)
  const refused = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie, accept: 'application/json' }, payload: { email: TEACHER.email, password: TEACHER.password } })
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().code, 'FST_CSRF_INVALID_TOKEN', 'JSON clients get the error as JSON')
  const ok = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie, 'csrf-token': csrfToken }, payload: { email: TEACHER.email, password: TEACHER.password } })
  t.equal(ok.statusCode, 303)
  const member = await app.inject({ url: '/Security/login', headers: { cookie: sessionCookie(ok)!, accept: 'application/json' } })
  t.equal(member.json().signedIn, true)
})

t.test('sign-out without a valid token is refused and the member stays signed in', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const otherCookie = await signIn(app)
  const otherPage = await app.inject({ url: '/schools/resources/', headers: { cookie: otherCookie } })
  for (const token of [undefined, 'forged', formToken(otherPage.body)]) {
    const body = formBody(token === undefined ? {} : { _csrf: token })
    const res = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie, ...body.headers }, payload: body.payload })
    t.equal(res.statusCode, 403, String(token))
    t.match(res.body, 'This form has expired. Please try again.')
    t.match(res.body, 'You are signed in as <strong>Ada Teacher</strong>')
    const page = await app.inject({ url: MATHS, headers: { cookie } })
    t.equal(page.statusCode, 200, 'still signed in')
  }
  t.equal((await signOut(app, cookie)).statusCode, 303, 'the real form signs out')
})

t.test('a host that registered @fastify/csrf-protection keeps its own', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  await app.register(csrfProtection, { sessionPlugin: '@fastify/session' })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }), authenticate: teacherOnly })
  const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password })
  t.equal(res.statusCode, 303)
})

t.test('outside the session cookie path the form renders without a token, and posting it is a 403, not a 500', async (t) => {
  const { app } = await buildTestApp({ session: { cookie: { secure: false, path: '/members' } } })
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  t.equal(form.statusCode, 200)
  t.notMatch(form.body, /name="_csrf"/)
  const res = await app.inject({ method: 'POST', url: '/Security/login', payload: { email: TEACHER.email, password: TEACHER.password } })
  t.equal(res.statusCode, 403)
})

t.test('with a host CSRF setup that keeps its secret in a cookie, logout works without a session cookie', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false }, saveUninitialized: false })
  await app.register(csrfProtection, { sessionPlugin: '@fastify/cookie' })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }), authenticate: teacherOnly })
  const tokenRes = await app.inject({ url: '/Security/login', headers: { accept: 'application/json' } })
  const csrfCookie = tokenRes.cookies.find((c) => c.name === '_csrf')!
  const res = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: `_csrf=${csrfCookie.value}` }, payload: { _csrf: tokenRes.json().csrfToken } })
  t.equal(res.statusCode, 303)
  t.equal(res.cookies.find((c) => c.name === 'sessionId'), undefined, 'no session cookie to clear')
})

t.test('opening the login form stores nothing: the CSRF secret is in a cookie, the session starts at sign-in', async (t) => {
  const { app, store } = await buildTestApp()
  t.teardown(() => app.close())
  let sessionCookies = 0
  for (let i = 0; i < 1000; i++) {
    const form = await app.inject({ url: '/Security/login', headers: i % 2 === 0 ? {} : { accept: 'application/json' } })
    if (form.statusCode !== 200) t.fail(`form view ${i}: ${form.statusCode}`)
    if (sessionCookie(form) !== undefined) sessionCookies++
    if (i === 0) t.match(form.cookies.find((c) => c.name === CSRF_COOKIE), { httpOnly: true, sameSite: 'Strict', path: '/' }, 'the secret is in an httpOnly, SameSite=Strict cookie')
  }
  t.equal(sessionCookies, 0, 'no session cookie')
  t.equal(store.sessions.size, 0, 'sessions stored by 1,000 form views (HTML and JSON): 0')
  const form = await openLoginForm(app)
  const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { form })
  t.equal(res.statusCode, 303)
  t.equal(store.sessions.size, 1, 'the session is created at sign-in')
  const renewed = res.cookies.find((c) => c.name === CSRF_COOKIE)
  t.equal(renewed?.value, '', 'and the CSRF cookie is dropped, so the next page makes a new secret')
  const page = await app.inject({ url: '/schools/resources/', headers: { cookie: sessionCookie(res)! } })
  const fresh = withCookies(undefined, page)
  t.match(fresh, /^__Host-_csrf=/, 'the first member page sets a new secret')
  t.not(fresh, form.cookie, 'not the one from before sign-in')
})

t.test('with a secret on @fastify/cookie, the CSRF cookie is signed and a forged one is refused', async (t) => {
  const { app } = await buildTestApp({ cookie: { secret: SECRET } })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  t.match(form.cookie, /^__Host-_csrf=[^;.]+\.[A-Za-z0-9_/+-]{43}$/, 'signed value')
  t.equal((await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { form })).statusCode, 303)
  // An attacker who can plant a cookie (a sibling subdomain) plants a secret of their own and its token.
  const planted = await buildTestApp()
  t.teardown(() => planted.app.close())
  const theirs = await openLoginForm(planted.app)
  const forged = await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { form: theirs })
  t.equal(forged.statusCode, 403, 'an unsigned secret and its token are refused')
})

t.test('a member on the login page right after sign-in can sign out: one CSRF secret per page, however many forms', async (t) => {
  // Sign-in drops the CSRF cookie; the login page then makes two tokens (the layout's sign-out form and the
  // login view's data), and each token made without a cookie used to draw a secret of its own, the last one
  // winning the cookie: the sign-out form's token no longer matched it (403 "This form has expired").
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const page = await app.inject({ url: '/Security/login', headers: { cookie } })
  const tokens = [...page.body.matchAll(/name="_csrf" value="([^"]+)"/g)].map((m) => m[1])
  t.ok(tokens.length >= 1, 'the page has the sign-out form')
  t.equal(page.cookies.filter((c) => c.name === CSRF_COOKIE).length, 1, 'one CSRF cookie set, not one per form')
  const res = await signOut(app, cookie, '/Security/logout', '/Security/login')
  t.equal(res.statusCode, 303, 'the sign-out form of that page signs out')
  t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 302, 'and the member is signed out')
})
