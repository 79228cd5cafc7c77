// Issue 36: sign in with the school's account, against oidc-provider (a real, certified OpenID provider)
// on a loopback port. Every refusal shows that no session was stored.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import t, { type Test } from 'tap'
import { eventChannels, type Member, type SignInFailedEvent, type SignInSucceededEvent } from '../../lib/index.js'
import type { OidcClaims } from '../../lib/sign-in/oidc-options.js'
import { buildTestApp, BASE_URL, openLoginForm, postLogin, SECRET, signIn, TEACHER, TEACHER_MEMBER, type PluginOptions, type TestApp } from '../helpers/app.js'
import { atProvider, CLIENT_ID, CLIENT_SECRET, cookiesOf, oidcJourney, startIdp, type Accounts, type Idp } from '../helpers/oidc.js'

declare module 'fastify' {
  interface Session {
    /** A host's own data, for what sign-in keeps. */
    language?: string
    basket?: string[]
  }
}

const MATHS = '/schools/resources/resources/maths/'
const INDEX = '/schools/resources/'

const ACCOUNTS: Accounts = {
  ada: { email: 'ada@school.example', email_verified: true, hd: 'school.example', tid: 'tenant-a', name: 'Ada Lovelace' },
  personal: { email: 'ada@school.example', email_verified: true, name: 'Ada (personal)' },
  elsewhere: { email: 'eve@other.example', email_verified: true, hd: 'other.example', tid: 'tenant-b', name: 'Eve' },
  unverified: { email: 'una@school.example', email_verified: false, name: 'Una' },
  stranger: { email: 'sam@school.example', email_verified: true, hd: 'school.example', tid: 'tenant-a', name: 'Sam' }
}

const MEMBERS: Record<string, Member> = {
  'ada@school.example': { id: 'm-ada', name: 'Ada Lovelace', email: 'ada@school.example' },
  'una@school.example': { id: 'm-una', name: 'Una', email: 'una@school.example' },
  'eve@other.example': { id: 'm-eve', name: 'Eve', email: 'eve@other.example' }
}

async function resolveMember (claims: OidcClaims): Promise<Member | null> {
  return MEMBERS[claims.email ?? ''] ?? null
}

let idp: Idp
t.before(async () => { idp = await startIdp(ACCOUNTS) })
t.teardown(() => idp.close())

function provider (extra: Record<string, unknown> = {}) {
  return { id: 'school', label: 'your school account', issuer: idp.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, ...extra }
}

async function build (t: Test, plugin: PluginOptions = {}, providerOptions: Record<string, unknown> = {}): Promise<TestApp> {
  const built = await buildTestApp({
    cookie: { secret: SECRET },
    plugin: { oidc: { providers: [provider(providerOptions)], resolveMember }, ...plugin } as PluginOptions
  })
  t.teardown(() => built.app.close())
  return built
}

function listen<T> (t: Test, name: string): T[] {
  const seen: T[] = []
  const listener = (message: unknown) => { seen.push(message as T) }
  subscribe(name, listener)
  t.teardown(() => unsubscribe(name, listener))
  return seen
}

function members (store: TestApp['store']): unknown[] {
  return [...store.sessions.values()].map((json) => JSON.parse(json).member)
}

t.test('the journey: the button, the provider, back on the page asked for, signed in', async (t) => {
  const succeeded = listen<SignInSucceededEvent>(t, eventChannels.signInSucceeded)
  const { app, store } = await build(t)
  const anonymous = await app.inject(MATHS)
  t.equal(anonymous.statusCode, 302)
  const loginPage = await app.inject(anonymous.headers.location as string)
  t.equal(loginPage.statusCode, 200)
  const href = `/Security/login/oidc/school?BackURL=${encodeURIComponent(MATHS)}`
  t.match(loginPage.body, `<a class="button" href="${href.replace(/&/g, '&amp;')}">Sign in with your school account</a>`, 'a link that carries BackURL')
  t.ok(loginPage.body.indexOf('Sign in with your school account') < loginPage.body.indexOf('<form method="post"'), 'above the password form')

  const start = await app.inject(href)
  t.equal(start.statusCode, 302)
  const to = new URL(start.headers.location as string)
  t.equal(to.origin, idp.issuer)
  t.equal(to.searchParams.get('redirect_uri'), `${BASE_URL}/Security/login/oidc/school/callback`)
  t.equal(to.searchParams.get('code_challenge_method'), 'S256')
  t.ok(to.searchParams.get('state'))
  t.ok(to.searchParams.get('nonce'))
  t.equal(to.searchParams.get('response_mode'), null, 'query, never form_post')
  const stateCookie = start.cookies.find((c) => c.name === 'sr_oidc_school')!
  t.match(stateCookie, { path: '/Security/login/oidc/', httpOnly: true, sameSite: 'Lax', secure: true, maxAge: 600 })
  t.equal(store.sessions.size, 0, 'nothing in the store at the start')

  const back = await atProvider(start.headers.location as string, 'ada')
  t.equal(back.pathname, '/Security/login/oidc/school/callback')
  const callback = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: cookiesOf(start) } })
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${BASE_URL}${MATHS}`)
  t.same(members(store), [MEMBERS['ada@school.example']])
  t.equal(callback.cookies.find((c) => c.name === 'sr_oidc_school')?.value, '', 'the state cookie is used once')
  const page = await app.inject({ url: MATHS, headers: { cookie: cookiesOf(callback) } })
  t.equal(page.statusCode, 200, 'signed in: the category page')
  t.match(succeeded, [{ memberId: 'm-ada', method: 'oidc', provider: 'school' }])
})

t.test('a return address on another site ends on the section index', async (t) => {
  const { app, store } = await build(t)
  const { callback } = await oidcJourney(app, { login: 'ada', back: '//evil.example/steal' })
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${BASE_URL}${INDEX}`)
  t.equal(store.sessions.size, 1)
})

t.test('claims the school does not allow: the login page with a plain message, an event, no session', async (t) => {
  const failed = listen<SignInFailedEvent>(t, eventChannels.signInFailed)
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ allowedDomains: ['school.example'] }, 'personal', 'oidc-domain'],
    [{ allowedDomains: ['school.example'] }, 'elsewhere', 'oidc-domain'],
    [{ allowedEmailDomains: ['school.example'] }, 'unverified', 'oidc-email-unverified'],
    [{ allowedEmailDomains: ['school.example'] }, 'elsewhere', 'oidc-email-domain'],
    [{ allowedTenants: ['TENANT-A'] }, 'elsewhere', 'oidc-tenant']
  ]
  for (const [rule, login, reason] of cases) {
    const { app, store } = await build(t, {}, rule)
    const { callback } = await oidcJourney(app, { login, back: MATHS })
    t.equal(callback.statusCode, 403, `${login}: ${reason}`)
    t.match(callback.body, 'Use your school account to sign in.')
    t.match(callback.body, `name="BackURL" value="${MATHS}"`, 'the return address stays on the form')
    t.equal(store.sessions.size, 0, 'no session stored')
    t.match(failed.at(-1), { reason, provider: 'school', identifierHash: undefined })
  }
  const { app, store } = await build(t, {}, { allowedDomains: ['School.Example'], allowedTenants: ['tenant-a'] })
  t.equal((await oidcJourney(app, { login: 'ada' })).callback.statusCode, 303, 'the school\'s own account (domains compared without case)')
  t.equal(store.sessions.size, 1)
})

t.test('resolveMember: null is "No member account", a throw the 500 page, a wrong answer FST_SR_INVALID_MEMBER', async (t) => {
  const { app, store } = await build(t)
  const none = await oidcJourney(app, { login: 'stranger' })
  t.equal(none.callback.statusCode, 403)
  t.match(none.callback.body, 'No member account for this address.')
  t.equal(store.sessions.size, 0)

  const thrower = await build(t, { oidc: { providers: [provider()], resolveMember: async () => { throw new Error('database down: secret detail') } } })
  const thrown = await oidcJourney(thrower.app, { login: 'ada' })
  t.equal(thrown.callback.statusCode, 500)
  t.notMatch(thrown.callback.body, 'secret detail')
  t.equal(thrower.store.sessions.size, 0)

  const wrong = await build(t, { oidc: { providers: [provider()], resolveMember: async () => ({ id: 1, username: 'x' }) as unknown as Member } })
  const odd = await oidcJourney(wrong.app, { login: 'ada' })
  t.equal(odd.callback.statusCode, 500)
  t.equal(wrong.store.sessions.size, 0)
})

t.test('cancel at the provider: "Sign-in with … was cancelled", not counted', async (t) => {
  const { app, store } = await build(t, { loginRateLimit: { max: 1 } })
  for (let i = 0; i < 2; i++) {
    const { callback } = await oidcJourney(app, { login: 'cancel', back: MATHS })
    t.equal(callback.statusCode, 403)
    t.match(callback.body, 'Sign-in with your school account was cancelled.')
  }
  t.equal(store.sessions.size, 0)
  t.equal((await oidcJourney(app, { login: 'ada' })).callback.statusCode, 303, 'cancels are not failures')
})

t.test('a missing, stale or forged state cookie restarts once, then says what happened', async (t) => {
  const { app, store } = await build(t)
  const start = await app.inject(`/Security/login/oidc/school?BackURL=${encodeURIComponent(MATHS)}`)
  const back = await atProvider(start.headers.location as string, 'ada')
  for (const cookie of ['', 'sr_oidc_school=forged', `sr_oidc_school=${encodeURIComponent(start.cookies[0].value.replace(/\.[^.]+$/, '.AAAA'))}`]) {
    const lost = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie } })
    t.equal(lost.statusCode, 302, `cookie ${JSON.stringify(cookie.slice(0, 20))}`)
    t.equal(lost.headers.location, '/Security/login/oidc/school?retry=1', 'the restart has no return address')
  }
  // An identity-provider-initiated launch: no state at all.
  const launched = await app.inject('/Security/login/oidc/school/callback?iss=x&code=y')
  t.equal(launched.headers.location, '/Security/login/oidc/school?retry=1')

  const restart = await app.inject('/Security/login/oidc/school?retry=1')
  const again = await atProvider(restart.headers.location as string, 'ada')
  const second = await app.inject({ url: `${again.pathname}${again.search}` })
  t.equal(second.statusCode, 403, 'the second miss')
  t.match(second.body, 'Your browser did not keep the sign-in cookie; please try again.')
  t.equal(store.sessions.size, 0)

  const ok = await app.inject({ url: `${again.pathname}${again.search}`, headers: { cookie: cookiesOf(restart) } })
  t.equal(ok.statusCode, 303)
  t.equal(ok.headers.location, `${BASE_URL}${INDEX}`, 'a restart ends on the section index')
})

t.test('a state cookie older than ten minutes is stale', async (t) => {
  const { app } = await build(t)
  const realNow = Date.now
  const start = await app.inject('/Security/login/oidc/school')
  const back = await atProvider(start.headers.location as string, 'ada')
  Date.now = () => realNow() + 11 * 60 * 1000
  t.teardown(() => { Date.now = realNow })
  const stale = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: cookiesOf(start) } })
  Date.now = realNow
  t.equal(stale.statusCode, 302)
  t.equal(stale.headers.location, '/Security/login/oidc/school?retry=1')
})

t.test('a replayed state, a code used twice, a state that does not match: refused, counted, no session', async (t) => {
  const failed = listen<SignInFailedEvent>(t, eventChannels.signInFailed)
  const { app, store } = await build(t, { loginRateLimit: { max: 3 } })
  const first = await app.inject('/Security/login/oidc/school')
  const back = await atProvider(first.headers.location as string, 'ada')
  const done = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: cookiesOf(first) } })
  t.equal(done.statusCode, 303)
  store.sessions.clear()
  // The same callback with the same cookie (a replay of the whole request): the code is spent.
  const replay = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: cookiesOf(first) } })
  t.equal(replay.statusCode, 403)
  t.match(replay.body, 'could not be completed')
  t.equal(store.sessions.size, 0)
  t.equal(failed.at(-1)!.reason, 'oidc-token')

  // A callback for another browser's sign-in (its state) with this browser's cookie.
  const mine = await app.inject('/Security/login/oidc/school')
  const theirs = await app.inject('/Security/login/oidc/school')
  const theirBack = await atProvider(theirs.headers.location as string, 'ada')
  const mixed = await app.inject({ url: `${theirBack.pathname}${theirBack.search}`, headers: { cookie: cookiesOf(mine) } })
  t.equal(mixed.statusCode, 403)
  t.equal(failed.at(-1)!.reason, 'oidc-state')
  t.equal(store.sessions.size, 0)

  // Counted under loginRateLimit per address: a third refusal, then the limit.
  const none = await oidcJourney(app, { login: 'stranger' })
  t.equal(none.callback.statusCode, 403)
  const limited = await oidcJourney(app, { login: 'ada' })
  t.equal(limited.callback.statusCode, 429)
  t.ok(Number(limited.callback.headers['retry-after']) > 0)
  t.equal(store.sessions.size, 0)
})

t.test('one bound on a member\'s new sessions, whichever way: the callback past it shows the login page, 429', async (t) => {
  const failed = listen<SignInFailedEvent>(t, eventChannels.signInFailed)
  // The provider's account is the password form's teacher: one member, two ways in.
  const { app, store } = await build(t, { lockout: { maxNewSessionsPerMinute: 2 }, oidc: { providers: [provider()], resolveMember: async () => TEACHER_MEMBER } })
  t.ok(await signIn(app), 'the password form: the first session')
  t.equal((await oidcJourney(app, { login: 'ada' })).callback.statusCode, 303, 'the provider: the second')
  const { callback } = await oidcJourney(app, { login: 'ada', back: MATHS })
  t.equal(callback.statusCode, 429, 'a third in the minute')
  const retryAfter = Number(callback.headers['retry-after'])
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${retryAfter}`)
  t.equal(callback.headers['cache-control'], 'no-store')
  t.match(callback.body, /Too many sign-ins to this account in the last minute\. Try again after \d\d:\d\d(?: [AP]M)? UTC\./)
  t.match(callback.body, `name="BackURL" value="${MATHS}"`, 'the return address stays on the form')
  t.equal(callback.cookies.find((c) => c.name === 'sessionId'), undefined, 'no session cookie')
  t.equal(store.sessions.size, 2, 'no third session')
  t.match(failed.at(-1), { reason: 'too-many-sessions', provider: 'school', identifierHash: undefined })

  const start = await app.inject('/Security/login/oidc/school')
  const back = await atProvider(start.headers.location as string, 'ada')
  const json = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: cookiesOf(start), accept: 'application/json' } })
  t.equal(json.statusCode, 429)
  t.equal(json.json().code, 'FST_SR_SESSION_RATE_LIMITED')
  const password = await postLogin(app, TEACHER, { form: await openLoginForm(app) })
  t.equal(password.statusCode, 429, 'the password form is held by the same count')
  t.match(password.body, 'Too many sign-ins to this account in the last minute.')
  t.equal(store.sessions.size, 2)
})

t.test('what the session keeps through an OpenID sign-in is keepSessionData\'s, the list form too', async (t) => {
  const { app, store } = await buildTestApp({
    cookie: { secret: SECRET },
    plugin: { keepSessionData: ['language'], oidc: { providers: [provider()], resolveMember } } as PluginOptions,
    extend: (app) => {
      app.get('/my/choices', async (request) => {
        request.session.set('language', 'cy')
        request.session.set('basket', ['fraction-wall'])
        return 'kept'
      })
    }
  })
  t.teardown(() => app.close())
  const visit = await app.inject('/my/choices')
  t.equal(visit.statusCode, 200)
  const { callback } = await oidcJourney(app, { login: 'ada', cookie: cookiesOf(visit) })
  t.equal(callback.statusCode, 303)
  t.equal(store.sessions.size, 1, 'the visitor\'s session left the store')
  const [session] = [...store.sessions.values()].map((json) => JSON.parse(json) as Record<string, unknown>)
  t.same(Object.keys(session).filter((k) => k !== 'cookie').sort(), ['language', 'member', 'member.generation', 'member.provider', 'member.times'], 'the basket is left behind; the times and the generation start')
  t.equal(session.language, 'cy')
  t.same(session.member, MEMBERS['ada@school.example'])
  t.equal(session['member.provider'], 'school', 'set again at this sign-in')
})

t.test('JSON clients get the refusal\'s code', async (t) => {
  const { app, store } = await build(t)
  const start = await app.inject('/Security/login/oidc/school')
  const back = await atProvider(start.headers.location as string, 'stranger')
  const res = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: cookiesOf(start), accept: 'application/json' } })
  t.equal(res.statusCode, 403)
  t.match(res.json(), { code: 'FST_SR_OIDC_REFUSED', message: 'No member account for this address.' })
  t.equal(store.sessions.size, 0)
})

t.test('an unknown provider id: 404 on both routes', async (t) => {
  const { app } = await build(t)
  t.equal((await app.inject('/Security/login/oidc/nobody')).statusCode, 404)
  t.equal((await app.inject('/Security/login/oidc/nobody/callback?state=x&code=y')).statusCode, 404)
})

t.test('passwordSignIn: false: only the buttons, no password route, no authenticate', async (t) => {
  const { app } = await build(t, { passwordSignIn: false, authenticate: undefined })
  const page = await app.inject('/Security/login')
  t.match(page.body, 'Sign in with your school account')
  t.notMatch(page.body, 'type="password"')
  t.equal((await app.inject({ method: 'POST', url: '/Security/login', payload: { email: 'a', password: 'b' } })).statusCode, 404)
  t.equal((await oidcJourney(app, { login: 'ada' })).callback.statusCode, 303)
})

t.test('views.login receives providers and passwordForm', async (t) => {
  const seen: unknown[] = []
  const { app } = await build(t, {
    views: { login: (data) => { seen.push({ providers: data.providers, passwordForm: data.passwordForm }); return { title: 'x', body: 'x' } } }
  })
  await app.inject(`/Security/login?BackURL=${encodeURIComponent(MATHS)}`)
  t.same(seen, [{ providers: [{ id: 'school', label: 'your school account', href: `/Security/login/oidc/school?BackURL=${encodeURIComponent(MATHS)}` }], passwordForm: true }])
})

t.test('sign-out is local, then the provider\'s with endSession', async (t) => {
  const { app, store } = await build(t, {}, { endSession: true })
  const { cookie } = await oidcJourney(app, { login: 'ada' })
  const page = await app.inject({ url: INDEX, headers: { cookie } })
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: cookiesOf(page, cookie) }, payload: { _csrf: token } })
  t.equal(out.statusCode, 303)
  const to = new URL(out.headers.location as string)
  t.equal(to.origin, idp.issuer)
  t.equal(to.searchParams.get('client_id'), CLIENT_ID)
  t.equal(to.searchParams.get('post_logout_redirect_uri'), `${BASE_URL}${INDEX}`)
  t.equal(to.searchParams.get('id_token_hint'), null, 'no ID token is kept')
  t.equal(store.sessions.size, 0, 'signed out here first')

  const local = await build(t)
  const signedIn = await oidcJourney(local.app, { login: 'ada' })
  const localPage = await local.app.inject({ url: INDEX, headers: { cookie: signedIn.cookie } })
  const localToken = /name="_csrf" value="([^"]+)"/.exec(localPage.body)![1]
  const localOut = await local.app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: cookiesOf(localPage, signedIn.cookie) }, payload: { _csrf: localToken } })
  t.equal(localOut.headers.location, INDEX, 'without endSession: local only')
})

t.test('the provider down: 503 with Retry-After: 5, never a hang; the password form still works', async (t) => {
  const down = await startIdp(ACCOUNTS)
  const issuer = down.issuer
  await down.close()
  const { app } = await build(t, { oidc: { providers: [{ ...provider(), issuer }], resolveMember } })
  const res = await app.inject('/Security/login/oidc/school')
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '5')
  t.match(res.body, 'Sign-in with your school account is briefly unavailable')
  t.match(res.body, 'type="password"', 'the password form is on the page')
  const json = await app.inject({ url: '/Security/login/oidc/school', headers: { accept: 'application/json' } })
  t.equal(json.json().code, 'FST_SR_OIDC_UNAVAILABLE')
  t.ok(await signIn(app), 'the password sign-in works')
})

t.test('"Keep me signed in" through the provider: remember=1 on the start, the token at the callback', async (t) => {
  const succeeded = listen<SignInSucceededEvent>(t, eventChannels.signInSucceeded)
  const { app, store } = await build(t)
  const start = await app.inject(`/Security/login/oidc/school?BackURL=${encodeURIComponent(MATHS)}&remember=1`)
  t.equal(start.statusCode, 302)
  t.notMatch(start.headers.location as string, 'remember', 'nothing of it goes to the provider')
  const back = await atProvider(start.headers.location as string, 'ada')
  const callback = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: cookiesOf(start) } })
  t.equal(callback.statusCode, 303)
  const remember = callback.cookies.find((c) => c.name === 'sr_remember')
  t.match(remember, { path: '/', httpOnly: true, sameSite: 'Lax' }, 'the remember cookie')
  store.sessions.clear()
  const page = await app.inject({ url: MATHS, headers: { cookie: `sr_remember=${remember!.value}` } })
  t.equal(page.statusCode, 200, 'the device comes back signed in')
  t.match(succeeded.map((e) => e.method), ['oidc', 'remembered'])

  const plain = await oidcJourney(app, { login: 'ada' })
  t.equal(plain.callback.statusCode, 303)
  t.equal(plain.callback.cookies.find((c) => c.name === 'sr_remember'), undefined, 'without the box: no token')
  const restart = await app.inject('/Security/login/oidc/school?retry=1&remember=1')
  const again = await atProvider(restart.headers.location as string, 'ada')
  const afterRestart = await app.inject({ url: `${again.pathname}${again.search}`, headers: { cookie: cookiesOf(restart) } })
  t.equal(afterRestart.statusCode, 303)
  t.equal(afterRestart.cookies.find((c) => c.name === 'sr_remember'), undefined, 'a restart carries nothing, the box neither')

  const { app: off } = await build(t, { rememberMe: false })
  const offStart = await off.inject('/Security/login/oidc/school?remember=1')
  const offBack = await atProvider(offStart.headers.location as string, 'ada')
  const offCallback = await off.inject({ url: `${offBack.pathname}${offBack.search}`, headers: { cookie: cookiesOf(offStart) } })
  t.equal(offCallback.statusCode, 303)
  t.equal(offCallback.cookies.find((c) => c.name === 'sr_remember'), undefined, 'rememberMe: false: none')
})
