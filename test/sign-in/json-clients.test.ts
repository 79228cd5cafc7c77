import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { BASE_URL, TEACHER, buildTestApp, sessionCookie, withCookies } from '../helpers/app.js'

// JSON in gives JSON out: a client that posts JSON (or asks for it) gets its refusals as JSON with
// their codes, and the documented absolute 303 on success. The anonymous category redirect stays the
// spec's 302 for every client.

const MATHS = '/schools/resources/resources/maths/'

/** A JSON client's session: the CSRF token from GET /Security/login, sent back in a header. */
async function jsonSession (app: FastifyInstance) {
  const res = await app.inject({ url: '/Security/login', headers: { accept: 'application/json' } })
  return { cookie: withCookies(undefined, res), token: res.json().csrfToken as string }
}

async function postJson (app: FastifyInstance, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const { cookie, token } = await jsonSession(app)
  return app.inject({ method: 'POST', url: '/Security/login', headers: { cookie, 'csrf-token': token, ...headers }, payload: body })
}

t.test('a JSON sign-in gets JSON refusals with codes, whatever its Accept header', async (t) => {
  const { app } = await buildTestApp({ plugin: { lockout: { maxAttempts: 2 } } })
  t.teardown(() => app.close())
  for (const accept of [undefined, '*/*', 'application/json']) {
    const headers: Record<string, string> = accept === undefined ? {} : { accept }
    const wrong = await postJson(app, { email: `x${accept}@example.org`, password: 'wrong' }, headers)
    t.equal(wrong.statusCode, 401)
    t.match(wrong.headers['content-type'], 'application/json')
    t.same(wrong.json(), { statusCode: 401, code: 'FST_SR_INVALID_CREDENTIALS', error: 'Unauthorized', message: 'The email address or password is incorrect.' }, `Accept ${accept}`)
    const missing = await postJson(app, { email: TEACHER.email }, headers)
    t.same(missing.json(), { statusCode: 400, code: 'FST_SR_MISSING_CREDENTIALS', error: 'Bad Request', message: 'Enter your email address and password.' })
  }
  const forged = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie: (await jsonSession(app)).cookie, 'csrf-token': 'forged' }, payload: { email: TEACHER.email, password: TEACHER.password } })
  t.equal(forged.statusCode, 403)
  t.match(forged.json(), { statusCode: 403, code: 'FST_CSRF_INVALID_TOKEN', error: 'Forbidden' })

  await postJson(app, { email: 'locked@example.org', password: 'a' })
  const locked = await postJson(app, { email: 'locked@example.org', password: 'b' })
  t.equal(locked.statusCode, 429)
  t.match(locked.json(), { statusCode: 429, code: 'FST_SR_LOCKED_OUT', message: /Try again after \d\d:\d\d(?: [AP]M)? UTC\./ })
  t.ok(Number(locked.headers['retry-after']) > 0, 'with Retry-After')
})

t.test('a form post that asks for JSON gets JSON too', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const { cookie, token } = await jsonSession(app)
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie, accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: token, email: TEACHER.email, password: 'wrong' }).toString()
  })
  t.equal(res.json().code, 'FST_SR_INVALID_CREDENTIALS')
})

t.test('a JSON sign-in succeeds with the documented absolute 303, with and without BackURL', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const back = await postJson(app, { email: TEACHER.email, password: TEACHER.password, BackURL: MATHS })
  t.equal(back.statusCode, 303)
  t.equal(back.headers.location, `${BASE_URL}${MATHS}`)
  const plain = await postJson(app, { email: TEACHER.email, password: TEACHER.password })
  t.equal(plain.statusCode, 303)
  t.equal(plain.headers.location, `${BASE_URL}/schools/resources/`, 'absolute without BackURL too')
  const page = await app.inject({ url: MATHS, headers: { cookie: sessionCookie(plain)!, accept: 'application/json' } })
  t.equal(page.json().category.slug, 'maths')
})

t.test('the anonymous category redirect is the spec\'s 302 for every client, JSON ones included', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  for (const accept of ['application/json', 'text/html', '*/*']) {
    const res = await app.inject({ url: MATHS, headers: { accept } })
    t.equal(res.statusCode, 302, accept)
    t.equal(res.headers.location, `${BASE_URL}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`, accept)
  }
})
