import t from 'tap'
import { formToken as formTokenOf } from '../helpers/app.js'
import { BASE_URL, CSRF_COOKIE, TEACHER, buildTestApp, openLoginForm, postLogin, sessionCookie, signIn, signOut } from '../helpers/app.js'

const MATHS = '/schools/resources/resources/maths/'

t.test('GET /Security/login shows the form and carries a safe BackURL through', async (t) => {
  const { app, store } = await buildTestApp()
  t.teardown(() => app.close())
  const res = await app.inject(`/Security/login?BackURL=${encodeURIComponent(MATHS)}`)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.body, /<form method="post" action="\/Security\/login">/)
  t.match(res.body, `<input type="hidden" name="BackURL" value="${MATHS}">`)
  t.match(res.body, /<label for="email">Email<\/label>/)
  t.match(res.body, /<label for="password">Password<\/label>/)
  t.match(res.body, /<input type="hidden" name="_csrf" value="[^"]+">/)
  t.ok(res.cookies.some((c) => c.name === CSRF_COOKIE), 'the form\'s CSRF secret lives in a cookie')
  t.equal(sessionCookie(res), undefined, 'not in a session')
  t.equal(store.sessions.size, 0)

  const offSite = await app.inject(`/Security/login?BackURL=${encodeURIComponent('https://evil.example/')}`)
  t.notMatch(offSite.body, /name="BackURL"/, 'an off-site BackURL is dropped, not echoed')
  const none = await app.inject('/Security/login')
  t.notMatch(none.body, /name="BackURL"/)
})

t.test('the login page renders BackURL escaped', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const hostile = '/schools/"><script>alert(1)</script>'
  const res = await app.inject(`/Security/login?BackURL=${encodeURIComponent(hostile)}`)
  t.notMatch(res.body, /<script>/)
  t.match(res.body, 'value="/schools/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"')
})

t.test('a signed-in visitor on the login page is told so and offered the way back', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const res = await app.inject({ url: `/Security/login?BackURL=${encodeURIComponent(MATHS)}`, headers: { cookie } })
  t.equal(res.statusCode, 200)
  t.match(res.body, /You are signed in as <strong>Ada Teacher<\/strong>/)
  t.match(res.body, `<a href="${MATHS}">Continue</a>`)
  const plain = await app.inject({ url: '/Security/login', headers: { cookie } })
  t.match(plain.body, '<a href="/schools/resources/">Continue</a>')
})

t.test('a successful sign-in regenerates the session and returns to BackURL with 303', async (t) => {
  const { app, store } = await buildTestApp()
  t.teardown(() => app.close())
  // The session that exists before sign-in, as an attacker could plant one.
  const form = await openLoginForm(app)
  const planted = form.cookie
  const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, BackURL: `${MATHS}?year=7` }, { form })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${BASE_URL}${MATHS}?year=7`)
  t.equal(res.headers['cache-control'], 'no-store')
  const cookie = sessionCookie(res)!
  t.not(cookie, planted, 'the session id changes at sign-in')
  t.equal(store.sessions.size, 1, 'the old session is gone from the store')
  const stored = JSON.parse([...store.sessions.values()][0])
  t.same(stored.member, { id: 't-1', name: 'Ada Teacher', email: TEACHER.email }, 'only the member record is stored')
  const old = await app.inject({ url: MATHS, headers: { cookie: planted } })
  t.equal(old.statusCode, 302, 'the planted id grants nothing')
  const page = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(page.statusCode, 200)
})

t.test('the form posts urlencoded, like a browser; the query BackURL works too', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const { cookie, token } = await openLoginForm(app)
  const form = new URLSearchParams({ email: TEACHER.email, password: TEACHER.password, BackURL: MATHS, _csrf: token }).toString()
  const res = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: form })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${BASE_URL}${MATHS}`)
  const viaQuery = await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { url: `/Security/login?BackURL=${encodeURIComponent(MATHS)}` })
  t.equal(viaQuery.headers.location, `${BASE_URL}${MATHS}`)
})

t.test('without a usable BackURL the member lands on the section index', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  for (const backUrl of [undefined, '', 'https://evil.example/', '//evil.example', ['/a', '/b'], '/x\r\nSet-Cookie: a=b']) {
    const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, BackURL: backUrl })
    t.equal(res.statusCode, 303, JSON.stringify(backUrl))
    t.equal(res.headers.location, `${BASE_URL}/schools/resources/`, `${JSON.stringify(backUrl)}: absolute, as documented`)
  }
})

t.test('wrong credentials: 401, a clear message, the password never echoed', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const password = 'hunter2-wrong-password'
  const form = await openLoginForm(app)
  const res = await postLogin(app, { email: '<b>teacher</b>@example.org', password, BackURL: MATHS }, { form })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.body, /role="alert"[^>]*>The email address or password is incorrect\.<\/p>/)
  t.notMatch(res.body, password)
  t.match(res.body, 'value="&lt;b&gt;teacher&lt;/b&gt;@example.org"', 'the email comes back, escaped')
  t.match(res.body, `name="BackURL" value="${MATHS}"`, 'the return address survives the retry')
  const again = await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { form: { cookie: form.cookie, token: formTokenOf(res.body) } })
  t.equal(again.statusCode, 303, 'the form that came back carries a working token')
})

t.test('missing or oversized fields: 400 with a message', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const payloads: unknown[] = [
    {},
    { email: TEACHER.email },
    { password: TEACHER.password },
    { email: '   ', password: 'x' },
    { email: ['a'], password: { b: 1 } },
    { email: `${'a'.repeat(300)}@example.org`, password: 'x' },
    { email: TEACHER.email, password: 'x'.repeat(5000) }
  ]
  for (const payload of payloads) {
    const res = await postLogin(app, payload as Record<string, unknown>)
    t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 60))
    t.match(res.body, /Enter your email address and password\./)
  }
})

t.test('an authenticate() that returns something else is a clear server error', async (t) => {
  for (const bad of [{ name: 'No id' }, 'yes', true]) {
    const { app, store } = await buildTestApp({ plugin: { authenticate: async () => bad as never } })
    const res = await postLogin(app, { email: 'a@b.c', password: 'x' }, { headers: { accept: 'application/json' } })
    t.equal(res.statusCode, 500)
    t.equal(res.json().code, 'FST_SR_INVALID_MEMBER')
    t.equal(res.json().message, 'Something went wrong on our side. Please try again later.', 'the section\'s 500: nothing of the value')
    t.notOk([...store.sessions.values()].some((json) => JSON.parse(json).member !== undefined), 'nobody is signed in')
    await app.close()
  }
})

t.test('POST /Security/logout ends the session and goes to the section index', async (t) => {
  const { app, store } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  t.equal(store.sessions.size, 1)
  const res = await signOut(app, cookie)
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, '/schools/resources/')
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(store.sessions.size, 0, 'the session is destroyed in the store')
  const after = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(after.statusCode, 302, 'the old cookie no longer lets the visitor in')
  t.match(after.headers.location, /\/Security\/login\?BackURL=/)
  // @fastify/session tells the browser to drop a cookie whose session is gone.
  const cleared = after.cookies.find((c) => c.name === 'sessionId')
  t.equal(cleared?.value, '', 'the stale cookie is cleared')
  t.ok(cleared?.expires !== undefined && cleared.expires.getTime() <= Date.now(), 'with an expiry in the past')
  t.equal(store.sessions.size, 0, 'and nothing new is stored')
  const noToken = await app.inject({ method: 'POST', url: '/Security/logout' })
  t.equal(noToken.statusCode, 403, 'a logout without a form token is refused')
})

t.test('login and logout paths are configurable', async (t) => {
  const { app } = await buildTestApp({ plugin: { loginPath: '/members/sign-in', logoutPath: '/members/sign-out', prefix: '/learning' } })
  t.teardown(() => app.close())
  const redirect = await app.inject('/learning/resources/maths/')
  t.equal(redirect.headers.location, `${BASE_URL}/members/sign-in?BackURL=%2Flearning%2Fresources%2Fmaths%2F`)
  const form = await app.inject('/members/sign-in?BackURL=%2Flearning%2Fresources%2Fmaths%2F')
  t.match(form.body, 'action="/members/sign-in"')
  const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { url: '/members/sign-in' })
  t.equal(res.headers.location, `${BASE_URL}/learning/`)
  const cookie = sessionCookie(res)!
  const page = await app.inject({ url: '/learning/resources/maths/', headers: { cookie } })
  t.match(page.body, 'action="/members/sign-out"')
  const out = await signOut(app, cookie, '/members/sign-out', '/learning/')
  t.equal(out.headers.location, '/learning/')
  t.equal((await app.inject('/Security/login')).statusCode, 404)
})

t.test('an authenticate() that throws is a plain 500: no stack, nobody signed in', async (t) => {
  const { app, store } = await buildTestApp({ plugin: { authenticate: async () => { throw new Error('directory down') } } })
  t.teardown(() => app.close())
  const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password })
  t.equal(res.statusCode, 500)
  t.notMatch(res.body, /at .*\.ts:\d+/, 'no stack trace')
  t.notOk([...store.sessions.values()].some((json) => JSON.parse(json).member !== undefined))
})

t.test('after logout, the stale cookie is cleared on the session cookie\'s own path and domain', async (t) => {
  const { app } = await buildTestApp({ session: { cookie: { secure: false, path: '/', domain: 'example.org' } } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  await signOut(app, cookie)
  const res = await app.inject({ url: MATHS, headers: { cookie } })
  const cleared = res.cookies.find((c) => c.name === 'sessionId')
  t.equal(cleared?.domain, 'example.org')
  t.equal(cleared?.path, '/')
  t.equal(cleared?.value, '')
})
