import t from 'tap'
import { BASE_URL, buildTestApp, capturedLogs, postLogin, sessionCookie, TEACHER } from '../helpers/app.js'

// An https site reached over what Fastify sees as plain http (a TLS proxy without X-Forwarded-Proto, or
// not trusted; issue 18, item 5): @fastify/session writes no Secure cookie there, so a "successful"
// sign-in would lead back to the login page. The sign-in is refused instead, and the log says why once.

const WARNING = 'FST_SR_SECURE_COOKIE_OVER_HTTP'
const CREDENTIALS = { email: TEACHER.email, password: TEACHER.password, BackURL: '/schools/resources/resources/maths/' }

t.test('a Secure session cookie on a sign-in Fastify sees as http: refused, nothing stored, one log line with the fix', async (t) => {
  const logs = capturedLogs()
  // @fastify/session's default cookie.secure is true; inject() speaks plain http, as a TLS proxy does to Node.
  const { app, store } = await buildTestApp({ session: { cookie: {} }, fastify: { logger: logs.logger } })
  t.teardown(() => app.close())
  for (let i = 0; i < 3; i++) {
    const res = await postLogin(app, CREDENTIALS)
    t.equal(res.statusCode, 500, 'not a 303 that no cookie backs')
    t.equal(sessionCookie(res), undefined, 'no session cookie')
    t.match(res.body, 'You cannot be signed in over this connection')
    t.match(res.body, 'name="BackURL" value="/schools/resources/resources/maths/"', 'the form again, with its return address')
    t.notMatch(res.body, /trustProxy|X-Forwarded|Secure/, 'the fix is for the log, not the visitor')
    const json = await postLogin(app, CREDENTIALS, { headers: { accept: 'application/json' } })
    t.equal(json.statusCode, 500)
    t.match(json.json(), { code: 'FST_SR_INSECURE_SIGN_IN' })
  }
  t.equal(store.sets, 0, 'no session saved')
  const lines = logs.withCode(WARNING)
  t.equal(lines.length, 1, 'one line for six sign-ins')
  t.match(lines[0].msg, /Sign-in refused: the session cookie is Secure but Fastify sees the request as plain http/)
  t.match(lines[0].msg, /X-Forwarded-Proto: https and set Fastify's trustProxy to that proxy's address or CIDR; or give @fastify\/session cookie.secure: 'auto'/)
  const errors = logs.withCode('FST_SR_INSECURE_SIGN_IN')
  t.equal(errors.length, 6, 'and, as every 500 of the section, an error line per refused sign-in')
  t.ok(errors.every((line) => line.level === 50 && typeof line.reqId === 'string' && line.msg === 'fastify-schools-resources: answered 500 (FST_SR_INSECURE_SIGN_IN) to POST /Security/login'))
})

t.test('either fix signs the member in', async (t) => {
  const logs = capturedLogs()
  const proxied = await buildTestApp({ session: { cookie: {} }, fastify: { trustProxy: '127.0.0.1', logger: logs.logger } })
  t.teardown(() => proxied.app.close())
  const form = await proxied.app.inject({ url: '/Security/login', headers: { 'x-forwarded-proto': 'https' } })
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]
  const cookie = form.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
  const res = await postLogin(proxied.app, CREDENTIALS, { headers: { 'x-forwarded-proto': 'https' }, form: { cookie, token } })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${BASE_URL}/schools/resources/resources/maths/`)
  t.match(res.cookies.find((c) => c.name === 'sessionId'), { secure: true }, 'the proxy\'s X-Forwarded-Proto counts: a Secure cookie')
  t.same(logs.withCode(WARNING), [], 'nothing to say')

  const autoLogs = capturedLogs()
  const auto = await buildTestApp({ session: { cookie: { secure: 'auto' } }, fastify: { logger: autoLogs.logger } })
  t.teardown(() => auto.app.close())
  for (let i = 0; i < 3; i++) {
    const signedIn = await postLogin(auto.app, CREDENTIALS)
    t.equal(signedIn.statusCode, 303, 'secure: \'auto\': signed in')
    t.ok(sessionCookie(signedIn))
  }
  const lines = autoLogs.withCode(WARNING)
  t.equal(lines.length, 1, 'an https baseUrl seen as http is still said, once')
  t.match(lines[0], { baseUrl: BASE_URL, protocol: 'http' })
  t.match(lines[0].msg, /goes out without Secure\. Behind a proxy that terminates TLS, have it send X-Forwarded-Proto/)
})

t.test('an http site with cookie.secure false: nothing to say', async (t) => {
  const logs = capturedLogs()
  const { app } = await buildTestApp({ plugin: { baseUrl: 'http://school.test' }, fastify: { logger: logs.logger } })
  t.teardown(() => app.close())
  t.equal((await postLogin(app, CREDENTIALS)).statusCode, 303)
  t.same(logs.withCode(WARNING), [])
})
