import t from 'tap'
import { errorCodes, storeErrorHandler } from '../../lib/index.js'
import { AsyncStore } from '../helpers/async-store.js'
import { buildTestApp, formToken, sessionCookie, signIn, TEACHER } from '../helpers/app.js'

const { FST_SR_STORE_UNAVAILABLE } = errorCodes

/** Reads work; writes fail as a store that is full, read-only or gone would fail them. Counts the writes tried. */
class WritesFailStore extends AsyncStore {
  failing = false
  tried = 0

  override set (sessionId: string, session: unknown, callback: (err?: unknown) => void): void {
    if (!this.failing) return super.set(sessionId, session, callback)
    this.tried++
    setImmediate(() => callback(new FST_SR_STORE_UNAVAILABLE('SET failed')))
  }
}

async function build (session: Record<string, unknown> = {}) {
  const store = new WritesFailStore()
  const responses: number[] = []
  const built = await buildTestApp({
    session: { store, ...session },
    extend: (app) => {
      app.addHook('onResponse', async (_request, reply) => { responses.push(reply.statusCode) })
    }
  })
  return { ...built, store, responses }
}

t.test('a session that cannot be saved gets the 503 page once: no second try of the store, no fallback error', async (t) => {
  const { app, store, responses } = await build()
  t.teardown(() => app.close())
  store.failing = true
  // The login form puts a CSRF secret in a new session, which @fastify/session saves in onSend.
  const page = await app.inject({ url: '/Security/login', headers: { accept: 'text/html' } })
  t.equal(page.statusCode, 503)
  t.equal(page.headers['retry-after'], '5')
  t.equal(page.headers['cache-control'], 'no-store')
  t.equal(page.headers['set-cookie'], undefined)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, /<h1>Temporarily unavailable<\/h1>/)
  t.notMatch(page.body, /fastify-schools-resources: the store/, 'no internal message')
  t.match(page.headers['content-security-policy'], /default-src 'none'/, 'the security headers set before stay')
  t.equal(page.headers['content-length'], String(Buffer.byteLength(page.body)))
  t.equal(store.tried, 1, 'the store was asked to save once')
  t.same(responses, [503], 'onResponse hooks still run')

  const json = await app.inject({ url: '/Security/login', headers: { accept: 'application/json' } })
  t.equal(json.statusCode, 503)
  t.same(json.json(), { statusCode: 503, code: 'FST_SR_STORE_UNAVAILABLE', error: 'Service Unavailable', message: 'This part of the site is briefly unavailable. Please try again in a moment.' })
  t.equal(store.tried, 2)

  const head = await app.inject({ method: 'HEAD', url: '/Security/login' })
  t.equal(head.statusCode, 503)
  t.equal(head.body, '')
})

t.test('sign-in whose new session cannot be saved: 503, and the visitor is not signed in', async (t) => {
  const { app, store } = await build()
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  const cookie = sessionCookie(form)!
  store.failing = true
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie },
    payload: { ...TEACHER, _csrf: formToken(form.body), BackURL: '/schools/resources/resources/maths/' }
  })
  t.equal(res.statusCode, 503)
  t.equal(res.headers.location, undefined, 'no redirect as if signed in')
  t.equal(res.headers['set-cookie'], undefined, 'no new session cookie')
  t.ok(store.tried >= 1)
  store.failing = false
  const after = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(after.statusCode, 302, 'still signed out')
})

t.test('with rolling sessions, a member page whose save fails is a 503, not the page and not a 500', async (t) => {
  const { app, store } = await build({ rolling: true })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  store.failing = true
  const res = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(res.statusCode, 503)
  t.notMatch(res.body, /Mathematics/)
  t.equal(store.tried, 1)
})

t.test('storeErrorHandler on a host route: store errors become the 503, others go on to the next handler', async (t) => {
  const { app } = await buildTestApp({
    extend: (app) => {
      app.register(async (host) => {
        host.setErrorHandler(storeErrorHandler)
        host.get('/host/down', async () => { throw new FST_SR_STORE_UNAVAILABLE('GET failed') })
        host.get('/host/bug', async () => { throw Object.assign(new Error('a bug'), { statusCode: 500 }) })
      })
    }
  })
  t.teardown(() => app.close())
  const down = await app.inject('/host/down')
  t.equal(down.statusCode, 503)
  t.equal(down.headers['retry-after'], '5')
  const bug = await app.inject('/host/bug')
  t.equal(bug.statusCode, 500)
  t.equal(bug.json().message, 'a bug')
})
