// Refusals made cheaper for a spray (docs/performance.md#refused-sign-ins) keep every guarantee: the same
// status, headers and message, a fresh CSRF token on every refused form, and the busy 503 answered
// without Fastify's error path, keeping what the visitor typed.
import t from 'tap'
import { errorCodes } from '../../lib/index.js'
import { MAX_KEPT_REFUSALS, refusalError } from '../../lib/sign-in/refusals.js'
import { TEACHER, buildTestApp, formBody, formToken, openLoginForm, postLogin } from '../helpers/app.js'

t.test('refusalError: the error each code makes, one per code and time, bounded', async (t) => {
  const invalid = refusalError('FST_SR_INVALID_CREDENTIALS')
  t.equal(invalid.message, new errorCodes.FST_SR_INVALID_CREDENTIALS().message, 'the message as the error class makes it')
  t.equal(invalid.statusCode, 401)
  t.equal(refusalError('FST_SR_INVALID_CREDENTIALS'), invalid, 'made once')
  // The time a visitor may try again, to the minute: its error names it as "09:15 UTC".
  const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 0, minutes, 30))
  const locked = refusalError('FST_SR_LOCKED_OUT', at(9 * 60 + 15))
  t.equal(locked.message, new errorCodes.FST_SR_LOCKED_OUT('09:15 UTC').message)
  t.not(refusalError('FST_SR_LOCKED_OUT', at(9 * 60 + 16)), locked, 'another time, another error')
  t.equal(refusalError('FST_SR_LOGIN_RATE_LIMITED', at(9 * 60 + 15)).code, 'FST_SR_LOGIN_RATE_LIMITED', 'codes do not share a time\'s error')
  for (let i = 0; i < MAX_KEPT_REFUSALS; i++) refusalError('FST_SR_LOCKED_OUT', at(10 * 60 + i))
  const again = refusalError('FST_SR_LOCKED_OUT', at(9 * 60 + 15))
  t.not(again, locked, 'past the bound the kept ones are dropped')
  t.equal(again.message, locked.message)
})

t.test('refused sign-ins: a fresh CSRF token each, the same answer each', async (t) => {
  const { app } = await buildTestApp({ plugin: { lockout: false, loginRateLimit: { max: 1 } } })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const wrong = await postLogin(app, { email: 'nobody@example.org', password: 'wrong' }, { form })
  t.equal(wrong.statusCode, 401)
  const first = await postLogin(app, { email: 'nobody@example.org', password: 'wrong' }, { form })
  const second = await postLogin(app, { email: 'other@example.org', password: 'wrong' }, { form })
  for (const res of [first, second]) {
    t.equal(res.statusCode, 429)
    t.ok(Number(res.headers['retry-after']) > 0)
    t.equal(res.headers['cache-control'], 'no-store')
    t.match(res.headers['content-security-policy'], /default-src 'none'/)
    t.match(res.body, 'Too many failed sign-ins from this address. Try again after ')
  }
  t.match(second.body, 'value="other@example.org"', 'each keeps its own email')
  const tokens = [form.token, formToken(first.body), formToken(second.body)]
  t.equal(new Set(tokens).size, 3, 'every refused form has a token of its own')
})

t.test('a full line: the busy 503 from the handler, with Retry-After, the email and a fresh token', async (t) => {
  let release: () => void = () => {}
  const held = new Promise<null>((resolve) => { release = () => resolve(null) })
  const { app } = await buildTestApp({ plugin: { authenticate: () => held, lockout: false, loginRateLimit: false, passwordChecks: { concurrent: 1, waiting: 0 } } })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const first = postLogin(app, { email: TEACHER.email, password: 'wrong' }, { form, remoteAddress: '198.51.100.1' }).then((res) => res)
  // The first check holds the only turn until released; these are refused at once.
  const busy = await postLogin(app, { email: 'ada@example.org', password: 'x', BackURL: '/schools/resources/resources/maths/' }, { form, remoteAddress: '198.51.100.2' })
  t.equal(busy.statusCode, 503)
  t.ok(Number(busy.headers['retry-after']) >= 1 && Number(busy.headers['retry-after']) <= 60, 'Retry-After 1 to 60 s')
  t.equal(busy.headers['cache-control'], 'no-store')
  t.match(busy.headers['content-security-policy'], /default-src 'none'/)
  t.match(busy.body, 'Sign-in is busy. Please try again in a moment.')
  t.match(busy.body, 'value="ada@example.org"', 'what the visitor typed is kept')
  t.match(busy.body, 'name="BackURL" value="/schools/resources/resources/maths/"')
  t.not(formToken(busy.body), form.token, 'a fresh token')
  const json = formBody({ _csrf: form.token, email: 'ada@example.org', password: 'x' })
  const jsonBusy = await app.inject({ method: 'POST', url: '/Security/login', remoteAddress: '198.51.100.3', headers: { cookie: form.cookie, accept: 'application/json', ...json.headers }, payload: json.payload })
  t.equal(jsonBusy.statusCode, 503)
  t.equal(jsonBusy.json().code, 'FST_SR_SIGN_IN_BUSY')
  t.ok(Number(jsonBusy.headers['retry-after']) >= 1)
  release()
  t.equal((await first).statusCode, 401, 'the held check still ends in its own answer')
})

t.test('a username\'s full line of turns: the busy 503 through the section\'s error handler', async (t) => {
  let release: () => void = () => {}
  const held = new Promise<null>((resolve) => { release = () => resolve(null) })
  const { app } = await buildTestApp({
    plugin: { authenticate: () => held, loginRateLimit: false, lockout: { maxConcurrent: 1 }, passwordChecks: { concurrent: 1, waiting: 200, perAddress: 200 } }
  })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  // One checked at once for the username and 100 waiting (MAX_WAITING_PER_USERNAME): of 110 at once, 9 or more are busy.
  const busy: Array<Awaited<ReturnType<typeof postLogin>>> = []
  const all = Array.from({ length: 110 }, (_, i) => postLogin(app, { email: 'shared@example.org', password: `p${i}`, BackURL: '/schools/resources/' }, { form })
    .then((res) => { if (res.statusCode === 503) busy.push(res); return res }))
  while (busy.length < 9) await new Promise((resolve) => setImmediate(resolve))
  release()
  const answers = await Promise.all(all)
  t.equal(answers.filter((res) => res.statusCode === 503).length, 9, 'exactly those past the line')
  const res = busy[0]
  t.equal(res.headers['retry-after'], '5')
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.body, 'Sign-in is busy. Please try again in a moment.')
  t.match(res.body, 'name="BackURL" value="/schools/resources/"')
  t.not(formToken(res.body), form.token, 'a fresh token')
})
