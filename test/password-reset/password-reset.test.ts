import t, { type Test } from 'tap'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { errorCodes, eventChannels, MemoryAttemptStore, MemoryTokenStore, type Member, type PasswordResetEvent, type PasswordResetOptions, type SignInSucceededEvent } from '../../lib/index.js'
import { RESET_COOKIE } from '../../lib/password-reset/routes.js'
import { RESET_OWNER_PREFIX } from '../../lib/password-reset/tokens.js'
import { BASE_URL, buildTestApp, CountingCatalog, SECRET, formToken, postLogin, sessionCookie, withCookies, type BuildOptions } from '../helpers/app.js'
import { mailServer, resetLink } from '../helpers/mail-server.js'
import { capturedLog } from '../helpers/log-capture.js'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources from '../../lib/index.js'
import { resolveOptions } from '../../lib/options.js'
import { RedisAttemptStore, RedisTokenStore } from '../../lib/stores/redis/index.js'
import { AsyncStore } from '../helpers/async-store.js'
import { REDIS_URL, connectedClient, deleteKeys, uniquePrefix } from '../helpers/redis.js'

// "Forgotten your password?": the pages at the legacy addresses, the link sent through a real SMTP server
// in this process and read back, the link's life (never used up by a GET), the limits and the events.

const LOST = '/Security/lostpassword'
const CHANGE = '/Security/changepassword'
const MATHS = '/schools/resources/resources/maths/'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const SENT = 'If that address has an account, we have sent a link to it.'
const NEW_PASSWORD = 'a long walk by the quiet river'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Members with passwords the test can change: `setPassword` writes here, `authenticate` reads here. */
function directory () {
  // By email as typed at sign-in; a member need not carry their email (the student's is the host's only).
  const passwords = new Map<string, string>([['teacher@example.org', 'old password of the teacher'], ['parent@example.org', 'old password of the parent'], ['student@example.org', 'old password of the student']])
  const members: Record<string, Member> = {
    'teacher@example.org': { id: 't-1', name: 'Ada Teacher', email: 'teacher@example.org' },
    'parent@example.org': { id: 7, name: 'Pat Parent', email: 'parent@example.org', groups: ['parents'] },
    'student@example.org': { id: 42, name: 'Sam Student' }
  }
  const emailOf = (member: Member) => Object.keys(members).find((email) => members[email].id === member.id)!
  return {
    passwords,
    members,
    emailOf,
    async authenticate ({ email, password }: { email: string, password: string }) {
      return passwords.get(email) === password ? members[email] : null
    },
    findMemberByEmail: async (email: string) => members[email.toLowerCase()] ?? null,
    setPassword: async (member: Member, password: string) => { passwords.set(emailOf(member), password) }
  }
}

function events (t: Test): PasswordResetEvent[] {
  const seen: PasswordResetEvent[] = []
  const listener = (message: unknown) => { seen.push(message as PasswordResetEvent) }
  subscribe(eventChannels.passwordReset, listener)
  t.teardown(() => unsubscribe(eventChannels.passwordReset, listener))
  return seen
}

/** Until `seen` holds `count` events (the link is made after the answer). */
async function eventsArrive (seen: unknown[], count: number) {
  for (let i = 0; i < 200 && seen.length < count; i++) await sleep(5)
}

async function setup (t: Test, reset: Partial<PasswordResetOptions> = {}, build: BuildOptions = {}) {
  const people = directory()
  const mail = await mailServer(t)
  const passwordReset: PasswordResetOptions = {
    findMemberByEmail: people.findMemberByEmail,
    setPassword: people.setPassword,
    async sendResetEmail ({ member, url, expiresAt }) {
      await mail.transport.sendMail({ from: 'office@example.org', to: people.emailOf(member), subject: 'Choose a new password', text: `Choose a new password here until ${expiresAt.toISOString()}:\n${url}\n` })
    },
    ...reset
  }
  const { app } = await buildTestApp({ ...build, plugin: { authenticate: people.authenticate, passwordReset, ...build.plugin } })
  t.teardown(() => app.close())
  return { app, people, mail }
}

/** Opens the lost-password form and posts `email` from `remoteAddress`. */
async function requestLink (app: FastifyInstance, email: string, remoteAddress = '127.0.0.1') {
  const form = await app.inject({ url: LOST, remoteAddress })
  return app.inject({
    method: 'POST',
    url: LOST,
    remoteAddress,
    headers: { ...FORM, cookie: withCookies(undefined, form) },
    payload: new URLSearchParams({ _csrf: formToken(form.body), email }).toString()
  })
}

/** Opens a link as a browser does (the redirect followed): the cookies it holds then, and the page. */
async function openLink (app: FastifyInstance, link: string, cookie = '') {
  const first = await app.inject({ url: link.slice(BASE_URL.length), headers: { cookie } })
  const jar = withCookies(cookie, first)
  const page = await app.inject({ url: CHANGE, headers: { cookie: jar } })
  return { first, page, cookie: withCookies(jar, page) }
}

async function postChange (app: FastifyInstance, browser: { page: LightMyRequestResponse, cookie: string }, password: string, confirm = password, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: CHANGE,
    headers: { ...FORM, cookie: browser.cookie, ...headers },
    payload: new URLSearchParams({ _csrf: formToken(browser.page.body), password, confirm }).toString()
  })
}

async function signedInAs (app: FastifyInstance, email: string, password: string) {
  const res = await postLogin(app, { email, password })
  return res.statusCode === 303 ? sessionCookie(res) : undefined
}

const status = async (app: FastifyInstance, cookie: string) => (await app.inject({ url: MATHS, headers: { cookie } })).statusCode

t.test('the journey: a scanner GET uses nothing up, the change signs every other session out and this browser in', async (t) => {
  const { app, people, mail } = await setup(t)
  const seen = events(t)
  const signIns: SignInSucceededEvent[] = []
  const onSignIn = (m: unknown) => { signIns.push(m as SignInSucceededEvent) }
  subscribe(eventChannels.signInSucceeded, onSignIn)
  t.teardown(() => unsubscribe(eventChannels.signInSucceeded, onSignIn))

  const login = await app.inject({ url: '/Security/login' })
  t.match(login.body, '<a href="/Security/lostpassword">Forgotten your password?</a>', 'the login page links to it')
  const otherBrowser = (await signedInAs(app, 'teacher@example.org', 'old password of the teacher'))!
  t.equal(await status(app, otherBrowser), 200)

  const form = await app.inject({ url: LOST })
  t.equal(form.statusCode, 200)
  t.match(form.body, /<h1>Forgotten your password\?<\/h1>/)
  t.match(form.body, /<label for="email">Email<\/label>/)
  t.equal(form.headers['cache-control'], 'no-store')
  const answer = await requestLink(app, ' teacher@example.org ')
  t.equal(answer.statusCode, 200)
  t.match(answer.body, SENT)
  const arrived = await mail.next()
  t.same(arrived.to, ['teacher@example.org'])
  const link = resetLink(arrived)
  t.match(link, /^https:\/\/www\.example\.org\/Security\/changepassword\?m=[\w-]{22}&t=[\w-]{43}$/)

  // A mail scanner fetches the link first, twice, and keeps no cookie.
  for (let i = 0; i < 2; i++) {
    const scanner = await app.inject({ url: link.slice(BASE_URL.length) })
    t.equal(scanner.statusCode, 303)
    t.equal(scanner.headers.location, `${BASE_URL}${CHANGE}`, 'to the address without the token')
    const cookie = scanner.cookies.find((c) => c.name === RESET_COOKIE)!
    t.match(cookie, { path: CHANGE, httpOnly: true, sameSite: 'Lax', maxAge: 900, secure: true })
  }
  const browser = await openLink(app, link)
  t.equal(browser.page.statusCode, 200)
  t.match(browser.page.body, /<label for="password">New password<\/label>/)
  t.notMatch(browser.page.body, link.split('t=')[1], 'the token is in no page')

  const changed = await postChange(app, browser, NEW_PASSWORD)
  t.equal(changed.statusCode, 303)
  t.equal(changed.headers.location, `${BASE_URL}/schools/resources/`)
  t.ok(changed.cookies.some((c) => c.name === RESET_COOKIE && c.value === ''), 'the link cookie is cleared')
  t.equal(people.passwords.get('teacher@example.org'), NEW_PASSWORD)
  const here = sessionCookie(changed)!
  t.equal(await status(app, here), 200, 'this browser is signed in')
  t.equal(await status(app, otherBrowser), 302, 'the other browser is signed out')
  t.equal(await signedInAs(app, 'teacher@example.org', 'old password of the teacher'), undefined, 'the old password is refused')
  t.ok(await signedInAs(app, 'teacher@example.org', NEW_PASSWORD), 'the new one works')
  t.match(signIns.find((e) => e.method === 'password-reset'), { memberId: 't-1' })

  const again = await openLink(app, link)
  t.equal(again.page.statusCode, 400, 'a used link')
  t.match(again.page.body, 'This link has expired or has already been used.')
  t.match(again.page.body, '<a href="/Security/lostpassword">Ask for a new link</a>')

  t.same(seen.map((e) => [e.stage, e.reason, e.memberId]), [['requested', undefined, 't-1'], ['changed', undefined, 't-1']])
  for (const event of seen) {
    const text = JSON.stringify({ ...event, app: undefined })
    t.notMatch(text, 'teacher@example.org', 'no address in the event')
    t.notMatch(text, link.split('t=')[1], 'no token in the event')
    t.notMatch(text, link.split('m=')[1].split('&')[0], 'no selector either')
  }
  t.type(seen[0].identifierHash, 'string')
})

t.test('an unknown address: the same answer, no mail', async (t) => {
  const { app, mail } = await setup(t)
  const seen = events(t)
  const known = await requestLink(app, 'parent@example.org')
  const unknown = await requestLink(app, 'nobody@example.org')
  t.equal(unknown.statusCode, known.statusCode)
  t.equal(unknown.body, known.body, 'the same page, byte for byte')
  await mail.next()
  await eventsArrive(seen, 2)
  await sleep(50)
  t.equal(mail.arrived.length, 0, 'no mail for the unknown address')
  t.same(seen.map((e) => [e.stage, e.reason]).sort(), [['refused', 'unknown-address'], ['requested', undefined]])
})

t.test('the answer goes before the lookup and the mail: a hanging send, a failing one', async (t) => {
  const { lines, logger } = capturedLog('error')
  let sends = 0
  const { app } = await setup(t, { sendResetEmail: () => { sends++; return new Promise(() => {}) } })
  const started = Date.now()
  const res = await requestLink(app, 'teacher@example.org')
  t.equal(res.statusCode, 200)
  t.ok(Date.now() - started < 2000, 'answered at once')
  await sleep(50)
  t.equal(sends, 1, 'the send was started, and never ended')

  const failing = await setup(t, { sendResetEmail: async () => { throw new Error('SMTP refused') } }, { fastify: { logger } })
  t.equal((await requestLink(failing.app, 'teacher@example.org')).statusCode, 200)
  for (let i = 0; i < 100 && lines.length === 0; i++) await sleep(5)
  t.match(lines, [{ code: 'FST_SR_RESET_EMAIL_FAILED', err: { message: 'SMTP refused' } }])
})

t.test('a slow directory changes no answer\'s time: known and unknown addresses alike', async (t) => {
  const people = directory()
  // A lookup that takes 300 ms for an address with an account, and none for one without.
  const { app, mail } = await setup(t, { findMemberByEmail: async (email) => { const m = await people.findMemberByEmail(email); if (m !== null) await sleep(300); return m } })
  const timed = async (email: string) => {
    const started = performance.now()
    const res = await requestLink(app, email)
    t.equal(res.statusCode, 200)
    return performance.now() - started
  }
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 3; i++) {
    known.push(await timed('teacher@example.org'))
    unknown.push(await timed(`nobody${i}@example.org`))
  }
  t.ok(Math.max(...known) < 300, `answered before the lookup ended: ${known.map((ms) => ms.toFixed(0)).join(', ')} ms (unknown: ${unknown.map((ms) => ms.toFixed(0)).join(', ')} ms)`)
  for (let i = 0; i < 3; i++) await mail.next()
})

t.test('findMemberByEmail giving no member: one warning, the same answer', async (t) => {
  const { lines, logger } = capturedLog('warn')
  const { app } = await setup(t, { findMemberByEmail: async () => ({ name: 'no id' }) as never }, { fastify: { logger } })
  t.match((await requestLink(app, 'teacher@example.org')).body, SENT)
  for (let i = 0; i < 100 && lines.length < 2; i++) await sleep(5)
  t.match(lines, [{ code: 'FST_SR_INVALID_MEMBER', option: 'findMemberByEmail' }, { code: 'FST_SR_RESET_EMAIL_FAILED' }])
})

t.test('a link ends: expired, a newer one, a sign-in, another member\'s token', async (t) => {
  t.test('expired in the store', async (t) => {
    const { app, mail } = await setup(t, { expiresInMs: 50 })
    await requestLink(app, 'teacher@example.org')
    const link = resetLink(await mail.next())
    await sleep(80)
    const browser = await openLink(app, link)
    t.equal(browser.page.statusCode, 400)
    t.match(browser.page.body, 'This link has expired')
    t.ok(browser.page.cookies.some((c) => c.name === RESET_COOKIE && c.value === ''), 'its cookie goes')
  })
  t.test('expired by its own time, a store that keeps it longer', async (t) => {
    const { app, mail } = await setup(t, { expiresInMs: 50, store: new MemoryTokenStore({ now: () => 0 }) })
    await requestLink(app, 'teacher@example.org')
    const link = resetLink(await mail.next())
    await sleep(80)
    t.equal((await openLink(app, link)).page.statusCode, 400)
  })
  t.test('a newer request ends the older link', async (t) => {
    const { app, mail } = await setup(t)
    await requestLink(app, 'teacher@example.org')
    const older = resetLink(await mail.next())
    await requestLink(app, 'teacher@example.org')
    const newer = resetLink(await mail.next())
    t.equal((await openLink(app, older)).page.statusCode, 400)
    const browser = await openLink(app, newer)
    t.equal(browser.page.statusCode, 200)
    t.equal((await postChange(app, browser, NEW_PASSWORD)).statusCode, 303)
  })
  t.test('a sign-in ends it', async (t) => {
    const { app, mail } = await setup(t)
    await requestLink(app, 'teacher@example.org')
    const link = resetLink(await mail.next())
    t.ok(await signedInAs(app, 'teacher@example.org', 'old password of the teacher'))
    t.equal((await openLink(app, link)).page.statusCode, 400)
  })
  t.test('the host\'s sign out everywhere (a leaver, a password changed) ends it', async (t) => {
    const { app, mail } = await setup(t)
    await requestLink(app, 'teacher@example.org')
    const link = resetLink(await mail.next())
    await app.schoolsResources.signOutEverywhere('t-1', { by: 'admin' })
    t.equal((await openLink(app, link)).page.statusCode, 400)
  })
  t.test('the selector of one link with the token of another', async (t) => {
    const { app, mail } = await setup(t)
    await requestLink(app, 'teacher@example.org')
    const teacher = resetLink(await mail.next())
    await requestLink(app, 'parent@example.org')
    const parent = resetLink(await mail.next())
    const mixed = `${teacher.split('&t=')[0]}&t=${parent.split('&t=')[1]}`
    const browser = await openLink(app, mixed)
    t.equal(browser.page.statusCode, 400)
    t.equal((await postChange(app, { page: (await app.inject({ url: LOST })), cookie: browser.cookie }, NEW_PASSWORD)).statusCode, 403, 'a token of another form')
    const own = await openLink(app, parent)
    t.equal(own.page.statusCode, 200, 'both links still work')
    t.equal((await openLink(app, teacher)).page.statusCode, 200)
  })
})

t.test('the passwords: differ, too short, the email, a common one, too long; the link stays', async (t) => {
  const { app, mail, people } = await setup(t)
  const seen = events(t)
  await requestLink(app, 'teacher@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  const cases: Array<[string, string, RegExp]> = [
    [NEW_PASSWORD, `${NEW_PASSWORD}!`, /The two passwords are not the same/],
    ['short one', 'short one', /at least 15 characters/],
    ['Teacher@Example.org', 'Teacher@Example.org', /not your email address/],
    ['mailcreated5240', 'mailcreated5240', /one of the most common/],
    ['x'.repeat(1025), 'x'.repeat(1025), /at most 1,024 characters/]
  ]
  for (const [password, confirm, message] of cases) {
    const res = await postChange(app, browser, password, confirm)
    t.equal(res.statusCode, 400, String(message))
    t.match(res.body, message)
    t.match(res.body, /role="alert" id="change-password-error"/)
    t.match(res.body, /aria-describedby="change-password-error"/)
  }
  t.equal(people.passwords.get('teacher@example.org'), 'old password of the teacher')
  t.same(seen.filter((e) => e.stage === 'refused').map((e) => e.reason), ['passwords-differ', 'weak-password', 'weak-password', 'weak-password', 'weak-password'])
  const withOwnRule = await setup(t, { validatePassword: async (password) => password.includes('river') ? undefined : 'Name a river.', limits: { changesPerLink: 10 } })
  await requestLink(withOwnRule.app, 'teacher@example.org')
  const other = await openLink(withOwnRule.app, resetLink(await withOwnRule.mail.next()))
  t.match((await postChange(withOwnRule.app, other, 'a long sentence with no water')).body, 'Name a river.')
  t.equal((await postChange(withOwnRule.app, other, 'river')).statusCode, 303, 'the host\'s rule decides')
})

t.test('the reset pages\' errors in the browser\'s language', async (t) => {
  const { app, mail } = await setup(t)
  await requestLink(app, 'teacher@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  const french = { 'accept-language': 'fr' }
  const differ = await postChange(app, browser, NEW_PASSWORD, `${NEW_PASSWORD}!`, french)
  t.equal(differ.statusCode, 400)
  t.match(differ.body, 'Les deux mots de passe ne sont pas identiques. Saisissez deux fois le nouveau mot de passe.')
  t.equal(differ.headers['content-language'], 'fr')
  t.match((await postChange(app, browser, 'short one', 'short one', french)).body, 'd’au moins 15 caractères')
  t.match((await postChange(app, browser, 'x'.repeat(1025), 'x'.repeat(1025), french)).body, 'd’au plus 1\u202f024 caractères', 'the number as French writes it')
  t.match((await postChange(app, browser, 'mailcreated5240', 'mailcreated5240', { 'accept-language': 'de' })).body, 'Dieses Passwort gehört zu den häufigsten')
  const incomplete = await app.inject({ url: CHANGE, headers: { 'accept-language': 'es' } })
  t.equal(incomplete.statusCode, 400)
  t.match(incomplete.body, 'Este enlace no está completo')
  const form = await app.inject({ url: LOST })
  const empty = await app.inject({
    method: 'POST',
    url: LOST,
    headers: { ...FORM, cookie: withCookies('', form), 'accept-language': 'cy' },
    payload: new URLSearchParams({ _csrf: formToken(form.body), email: ' ' }).toString()
  })
  t.equal(empty.statusCode, 400)
  t.match(empty.body, 'Rhowch y cyfeiriad e-bost rydych chi’n mewngofnodi ag ef.')
})

t.test('setPassword failing keeps the link; passwordReset.signIn false ends on the login page; no lockout to clear', async (t) => {
  let fail = true
  const people = directory()
  const { app, mail } = await setup(t, {
    setPassword: async (member, password) => {
      if (fail) throw new Error('database down')
      await people.setPassword(member, password)
    },
    signIn: false
  }, { plugin: { lockout: false } })
  await requestLink(app, 'parent@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  const failed = await postChange(app, browser, NEW_PASSWORD)
  t.equal(failed.statusCode, 500)
  t.match(failed.body, 'Your password could not be changed')
  fail = false
  const done = await postChange(app, browser, NEW_PASSWORD)
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, `${BASE_URL}/Security/login`)
  t.equal(sessionCookie(done), undefined, 'nobody signed in')
  t.equal(people.passwords.get('parent@example.org'), NEW_PASSWORD)
})

t.test('a session that could not be kept: the change is made, then the login page', async (t) => {
  // A Secure session cookie over what Fastify sees as plain http: @fastify/session would write no cookie.
  const { app, mail, people } = await setup(t, {}, { session: { cookie: { secure: true } } })
  await requestLink(app, 'teacher@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  const res = await postChange(app, browser, NEW_PASSWORD)
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${BASE_URL}/Security/login`)
  t.equal(people.passwords.get('teacher@example.org'), NEW_PASSWORD)
})

t.test('the limits: mails per address, requests per client address (in parallel), changes per link', async (t) => {
  t.test('3 mails an hour per email address', async (t) => {
    const { app, mail } = await setup(t)
    const seen = events(t)
    for (let i = 0; i < 4; i++) t.match((await requestLink(app, 'teacher@example.org', `10.0.0.${i}`)).body, SENT)
    await eventsArrive(seen, 4)
    await sleep(50)
    t.equal(seen.filter((e) => e.reason === 'mail-limit').length, 1)
    for (let i = 0; i < 3; i++) await mail.next()
    await sleep(50)
    t.equal(mail.arrived.length, 0, 'the fourth was not sent')
  })
  t.test('20 requests per client address per 15 minutes, counted in the lockout store', async (t) => {
    const store = new MemoryAttemptStore()
    const { app } = await setup(t, {}, { plugin: { lockout: { store } } })
    const seen = events(t)
    const answers = await Promise.all(Array.from({ length: 22 }, (_, i) => requestLink(app, `someone${i}@example.org`, '10.9.9.9')))
    t.same(new Set(answers.map((a) => a.statusCode)), new Set([200]))
    t.ok(answers.every((a) => a.body === answers[0].body), 'the same page for all')
    await eventsArrive(seen, 22)
    t.equal(seen.filter((e) => e.reason === 'address-limit').length, 2)
    t.equal((await store.get('reset-address:10.9.9.9'))?.count, 22)
  })
  t.test('5 change attempts per link', async (t) => {
    const { app, mail } = await setup(t)
    await requestLink(app, 'teacher@example.org')
    const browser = await openLink(app, resetLink(await mail.next()))
    for (let i = 0; i < 5; i++) t.equal((await postChange(app, browser, NEW_PASSWORD, 'different')).statusCode, 400)
    const sixth = await postChange(app, browser, NEW_PASSWORD)
    t.equal(sixth.statusCode, 400)
    t.match(sixth.body, 'tried too many times')
  })
})

t.test('the lockout of the username is cleared by a change', async (t) => {
  const { app, mail } = await setup(t, {}, { plugin: { lockout: { maxAttempts: 2 } } })
  for (let i = 0; i < 2; i++) await postLogin(app, { email: 'teacher@example.org', password: 'a wrong guess' })
  t.equal((await postLogin(app, { email: 'teacher@example.org', password: 'old password of the teacher' })).statusCode, 429, 'locked')
  await requestLink(app, 'teacher@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  t.equal((await postChange(app, browser, NEW_PASSWORD)).statusCode, 303)
  t.ok(await signedInAs(app, 'teacher@example.org', NEW_PASSWORD), 'no longer locked')
})

t.test('mistakes answer with the page again, never a 500', async (t) => {
  const { app, mail } = await setup(t)
  const seen = events(t)
  for (const email of ['', 'x'.repeat(250) + '@example.org']) {
    const res = await requestLink(app, email)
    t.equal(res.statusCode, 400)
    t.match(res.body, 'Enter the email address you sign in with.')
  }
  const form = await app.inject({ url: LOST })
  const json = await app.inject({ method: 'POST', url: LOST, headers: { cookie: withCookies(undefined, form) }, payload: { _csrf: formToken(form.body), email: 5 } })
  t.equal(json.statusCode, 400, 'an email that is no string')
  const noToken = await app.inject({ method: 'POST', url: LOST, headers: FORM, payload: 'email=teacher%40example.org' })
  t.equal(noToken.statusCode, 403)
  t.match(noToken.body, 'This form has expired')
  t.match(noToken.body, /name="_csrf"/)

  for (const query of ['?m=short&t=short', '?m=' + 'a'.repeat(22), '?t=' + 'a'.repeat(43)]) {
    const res = await app.inject({ url: CHANGE + query })
    t.equal(res.statusCode, 400, query)
    t.match(res.body, 'This link is not complete')
  }
  t.equal((await app.inject({ url: CHANGE })).statusCode, 400, 'no link at all')
  t.equal((await app.inject({ url: CHANGE, headers: { cookie: `${RESET_COOKIE}=tampered.value` } })).statusCode, 400, 'a tampered cookie')

  await requestLink(app, 'teacher@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  const noCookie = await postChange(app, { page: browser.page, cookie: browser.cookie.split('; ').filter((c) => !c.startsWith(RESET_COOKIE)).join('; ') }, NEW_PASSWORD)
  t.equal(noCookie.statusCode, 400, 'a POST without the link cookie')
  t.match(noCookie.body, 'This link is not complete')
  const badCsrf = await app.inject({ method: 'POST', url: CHANGE, headers: { ...FORM, cookie: browser.cookie }, payload: `_csrf=wrong&password=${NEW_PASSWORD}&confirm=${NEW_PASSWORD}` })
  t.equal(badCsrf.statusCode, 403)
  t.match(badCsrf.body, /New password/, 'the form again, the link still good')
  const jsonChange = await app.inject({ method: 'POST', url: CHANGE, headers: { cookie: browser.cookie }, payload: { _csrf: formToken(browser.page.body), password: 5 } })
  t.equal(jsonChange.statusCode, 400, 'a password that is no string')
  const noLink = await app.inject({ method: 'POST', url: CHANGE, headers: { ...FORM, cookie: `${browser.cookie.split('; ').filter((c) => !c.startsWith(RESET_COOKIE)).join('; ')}; ${RESET_COOKIE}=${'a'.repeat(22)}.${'b'.repeat(43)}` }, payload: `_csrf=${encodeURIComponent(formToken(browser.page.body))}&password=x&confirm=x` })
  t.equal(noLink.statusCode, 400, 'a well-formed link no record stands for')
  t.match(noLink.body, 'This link has expired')
  t.ok(seen.some((e) => e.reason === 'csrf') && seen.some((e) => e.reason === 'invalid-email') && seen.some((e) => e.reason === 'invalid-link'))
})

t.test('a member without an email in it; a validatePassword that throws is a 500', async (t) => {
  const { app, mail, people } = await setup(t)
  await requestLink(app, 'student@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  t.equal((await postChange(app, browser, NEW_PASSWORD)).statusCode, 303)
  t.equal(people.passwords.get('student@example.org'), NEW_PASSWORD)

  const throwing = await setup(t, { validatePassword: () => { throw new Error('bug') } })
  await requestLink(throwing.app, 'teacher@example.org')
  const other = await openLink(throwing.app, resetLink(await throwing.mail.next()))
  t.equal((await postChange(throwing.app, other, NEW_PASSWORD)).statusCode, 500)
})

t.test('two changes at once: one takes the link', async (t) => {
  // Both pass the checks before either takes the link.
  const { app, mail } = await setup(t, { validatePassword: async () => { await sleep(20) } })
  await requestLink(app, 'teacher@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  const [a, b] = await Promise.all([postChange(app, browser, NEW_PASSWORD), postChange(app, browser, NEW_PASSWORD)])
  t.same([a.statusCode, b.statusCode].sort(), [303, 400])
})

t.test('a store outage answers 503', async (t) => {
  const store = new MemoryTokenStore()
  const { app, mail } = await setup(t, { store })
  await requestLink(app, 'teacher@example.org')
  const link = resetLink(await mail.next())
  store.get = async () => { throw new errorCodes.FST_SR_STORE_UNAVAILABLE('down') }
  t.equal((await openLink(app, link)).page.statusCode, 503)
})

t.test('the store of sign out everywhere down at a change: no password changed with the old sessions left running', async (t) => {
  const counts = new MemoryAttemptStore()
  let down = false
  const flaky = {
    increment: async (key: string, ms: number) => { if (down) throw new errorCodes.FST_SR_STORE_UNAVAILABLE('down'); return counts.increment(key, ms) },
    hold: (key: string, ms: number) => counts.hold(key, ms),
    get: (key: string) => counts.get(key),
    reset: (key: string) => counts.reset(key)
  }
  const { app, people, mail } = await setup(t, {}, { plugin: { signOutEverywhere: { store: flaky } } })
  const otherBrowser = (await signedInAs(app, 'teacher@example.org', 'old password of the teacher'))!
  await requestLink(app, 'teacher@example.org')
  const browser = await openLink(app, resetLink(await mail.next()))
  down = true
  const failed = await postChange(app, browser, NEW_PASSWORD)
  t.equal(failed.statusCode, 503)
  t.equal(people.passwords.get('teacher@example.org'), 'old password of the teacher', 'the password is not changed')
  down = false
  t.equal((await postChange(app, browser, NEW_PASSWORD)).statusCode, 303, 'the link still works once the store is back')
  t.equal(people.passwords.get('teacher@example.org'), NEW_PASSWORD)
  t.equal(await status(app, otherBrowser), 302, 'and the other browser is signed out')
})

t.test('a record the store holds but this package did not write is no link', async (t) => {
  const store = new MemoryTokenStore()
  const { app } = await setup(t, { store })
  const selector = 'a'.repeat(22)
  const cookie = `${RESET_COOKIE}=${selector}.${'b'.repeat(43)}`
  for (const data of ['{', '{}', 'null']) {
    // Under the key the package's own records have (lib/password-reset/tokens.ts).
    await store.set(`${RESET_OWNER_PREFIX}${selector}`, { memberId: `${RESET_OWNER_PREFIX}t-1`, data }, 60_000)
    t.equal((await app.inject({ url: CHANGE, headers: { cookie } })).statusCode, 400, data)
  }
})

t.test('start-up fails on a passwordReset it cannot serve safely', async (t) => {
  const people = directory()
  const hooks = { findMemberByEmail: people.findMemberByEmail, setPassword: people.setPassword, sendResetEmail: () => {} }
  const base = { catalog: new CountingCatalog(), authenticate: people.authenticate, baseUrl: BASE_URL }
  const refused: Array<[object, RegExp]> = [
    [{ passwordReset: 'on' }, /"passwordReset": must be an object/],
    [{ passwordReset: hooks, baseUrl: undefined }, /"passwordReset": needs baseUrl/],
    [{ passwordReset: hooks, signOutEverywhere: false }, /"passwordReset": needs signOutEverywhere/],
    [{ passwordReset: hooks, signIn: false, authenticate: undefined, getMember: () => null }, /"passwordReset": needs the section's own password form/],
    [{ passwordReset: hooks, passwordSignIn: false, authenticate: undefined, oidc: { providers: [] } }, /"passwordReset": needs the section's own password form|"oidc/],
    [{ passwordReset: { ...hooks, mailer: {} } }, /"passwordReset\.mailer": is not a setting/],
    [{ passwordReset: { ...hooks, setPassword: undefined } }, /"passwordReset\.setPassword": must be a function \(required\)/],
    [{ passwordReset: { ...hooks, validatePassword: 'strong' } }, /"passwordReset\.validatePassword": must be a function, or left out/],
    [{ passwordReset: { ...hooks, signIn: 'yes' } }, /"passwordReset\.signIn": must be true/],
    [{ passwordReset: { ...hooks, store: new MemoryAttemptStore() } }, /"passwordReset\.store": must implement get, set, take, deleteAll/],
    [{ passwordReset: { ...hooks, limits: false } }, /"passwordReset\.limits": must be an object/],
    [{ passwordReset: { ...hooks, limits: { perHour: 3 } } }, /"passwordReset\.limits\.perHour": is not a limit/],
    [{ passwordReset: { ...hooks, limits: { perAddress: 0 } } }, /"passwordReset\.limits\.perAddress": must be a positive whole number/],
    [{ passwordReset: { ...hooks, expiresInMs: -1 } }, /"passwordReset\.expiresInMs"/]
  ]
  for (const [options, message] of refused) t.throws(() => resolveOptions({ ...base, ...options }), { code: 'FST_SR_INVALID_OPTION', message }, String(message))
  const resolved = resolveOptions({ ...base, lockout: false, passwordReset: hooks }).passwordReset!
  t.match(resolved, { expiresInMs: 2 * 24 * 60 * 60 * 1000, signIn: true, limits: { mailsPerEmail: 3, perAddress: 20, changesPerLink: 5 } })
  t.ok(resolved.store instanceof MemoryTokenStore)
  t.ok(resolved.limits.store instanceof MemoryAttemptStore, 'in this process without the lockout')
  t.equal(resolveOptions(base).passwordReset, undefined)
  t.throws(() => resolveOptions({ ...base, views: { lostPassword: 'x' } as never }), { message: /"views.lostPassword": must be a function/ })

  // Two sections on one login path serve one set of pages: they must agree.
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  t.teardown(() => app.close())
  await t.rejects(async () => {
    await app.register(schoolsResources, { ...base, passwordReset: hooks })
    await app.register(schoolsResources, { ...base, prefix: '/staff/resources', passwordReset: { ...hooks } })
    await app.ready()
  }, { code: 'FST_SR_SHARED_SIGN_IN', message: /returnParam and passwordReset/ })
})

t.test('no passwordReset: no routes, no link; the views can be replaced', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: LOST })).statusCode, 404)
  t.equal((await app.inject({ url: CHANGE })).statusCode, 404)
  t.notMatch((await app.inject({ url: '/Security/login' })).body, 'Forgotten your password?')

  const { app: own } = await setup(t, {}, {
    plugin: {
      loginPath: '/account/login',
      baseUrl: 'http://localhost:3000',
      views: { lostPassword: (data) => ({ title: 'Lost', body: `<p>own ${data.action}</p>` }), changePassword: (data) => ({ title: 'Change', body: `<p>own ${String(data.linkValid)}</p>` }) }
    }
  })
  t.match((await own.inject({ url: '/account/lostpassword' })).body, '<p>own /account/lostpassword</p>', 'in the login page\'s folder')
  t.match((await own.inject({ url: '/account/changepassword' })).body, '<p>own false</p>')
})

if (REDIS_URL !== undefined) {
  t.test('with RedisTokenStore (real Redis): a link asked for on one instance is used on another, once', async (t) => {
    const client = await connectedClient(t, REDIS_URL!)
    const prefix = uniquePrefix('reset')
    t.teardown(() => deleteKeys(client, prefix))
    const sessions = new AsyncStore()
    const shared: BuildOptions = {
      session: { store: sessions },
      plugin: { lockout: { store: new RedisAttemptStore(client, { prefix: `${prefix}counts:` }) } }
    }
    const store = new RedisTokenStore(client, { prefix: `${prefix}tokens:` })
    const a = await setup(t, { store }, shared)
    const b = await setup(t, { store }, shared)
    await requestLink(a.app, 'teacher@example.org')
    const link = resetLink(await a.mail.next())
    const selector = new URL(link).searchParams.get('m')!
    const stored = String(await client.sendCommand(['GET', `${prefix}tokens:token:${selector}`]))
    t.notMatch(stored, new URL(link).searchParams.get('t')!, 'only the token\'s hash is in Redis')
    const browser = await openLink(b.app, link)
    t.equal(browser.page.statusCode, 200)
    t.equal((await postChange(b.app, browser, NEW_PASSWORD)).statusCode, 303)
    t.equal(await client.sendCommand(['EXISTS', `${prefix}tokens:token:${selector}`]), 0, 'taken')
    t.equal((await openLink(a.app, link)).page.statusCode, 400, 'used up on the other instance too')
  })
}

t.test('one store for reset links and remembered devices: each ends only its own', async (t) => {
  const shared = new MemoryTokenStore()
  const { app, mail } = await setup(t, { store: shared }, { plugin: { rememberMe: { store: shared } } })
  t.equal((await requestLink(app, 'teacher@example.org')).statusCode, 200)
  const link = resetLink(await mail.next())
  // A sign-in with the box ticked ends the member's links, and must keep the device it just remembered.
  const signIn = await postLogin(app, { email: 'teacher@example.org', password: 'old password of the teacher', remember: '1' })
  t.equal(signIn.statusCode, 303)
  const remember = signIn.cookies.find((c) => c.name === 'sr_remember')
  t.ok(remember !== undefined, 'the device is remembered')
  t.equal(shared.size, 1, 'the link is gone, the remembered device stays')
  const back = await app.inject({ url: MATHS, headers: { cookie: `sr_remember=${remember!.value}` } })
  t.equal(back.statusCode, 200, 'and it signs the device in')
  const { page } = await openLink(app, link)
  t.match(page.body, 'Ask for a new link', 'the link asked for before the sign-in no longer works')

  // Sign out everywhere ends both, each under its own owner.
  // The device's records (its token, and the one it was rotated from, kept for its grace), and a new link.
  const deviceRecords = shared.size
  t.equal((await requestLink(app, 'teacher@example.org')).statusCode, 200)
  await mail.next()
  t.equal(shared.size, deviceRecords + 1, 'a new link beside the remembered device')
  await app.schoolsResources.signOutEverywhere('t-1')
  t.equal(shared.size, 0, 'signing out everywhere ends the link and forgets the device')
})
