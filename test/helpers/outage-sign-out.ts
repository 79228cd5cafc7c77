import type { Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { RedisAttemptStore, RedisSessionStore } from '../../lib/stores/redis/index.js'
import type { RedisCommandClient } from '../../lib/stores/redis/client.js'
import { buildTestApp, formToken, signIn, withCookies } from './app.js'

// Issue 19: a sign-out while the session store is down left the browser signed in (a 503 without
// Set-Cookie; on a shared classroom computer the teacher stayed a member for the cookie's 8 hours).
// The same tests run in process, on a stand-in Redis that stops answering (test/pages/unavailable.test.ts), and against
// a real redis-server held with CLIENT PAUSE (test/redis/): every session read times out.

const index = '/schools/resources/'
export const OUTAGE_TIMEOUT_MS = 300
/** The stores' breaker opens after the outage's failures; this short, it lets them try again soon after. */
export const OUTAGE_BREAKER = { failures: 5, openMs: 100 }

/** A Redis the stores talk to, and a way to make it stop answering for a while. */
export interface StoreOutage {
  client: RedisCommandClient
  /** From now on, no command is answered (the stores' timeouts end each one). */
  stop (): Promise<void>
  /** Whether it is still not answering. */
  down (): boolean
  /** Resolves once it answers again and the stores' breaker lets them try it. */
  back (): Promise<void>
}

async function outageApp (t: Test, outage: (t: Test) => Promise<StoreOutage>, cookieName?: string, fastify?: { trustProxy: boolean }) {
  const store = await outage(t)
  const { app } = await buildTestApp({
    // With trustProxy, also a cookie secret: the CSRF cookie is then signed, as in the example.
    ...(fastify === undefined ? {} : { fastify, cookie: { secret: 'a-cookie-secret-of-32-characters-or-more' } }),
    session: { store: new RedisSessionStore(store.client, { timeoutMs: OUTAGE_TIMEOUT_MS, breaker: OUTAGE_BREAKER }), saveUninitialized: false, cookie: { secure: false }, ...(cookieName === undefined ? {} : { cookieName }) },
    plugin: { lockout: { store: new RedisAttemptStore(store.client, { timeoutMs: OUTAGE_TIMEOUT_MS, breaker: OUTAGE_BREAKER }) }, loginRateLimit: false, ...(cookieName === undefined ? {} : { cookieName }) }
  })
  t.teardown(() => app.close())
  return { app, store }
}

/** The Set-Cookie that removes `name`, if the answer has one. */
function expiry (res: LightMyRequestResponse, name: string) {
  return res.cookies.find((c) => c.name === name && c.value === '' && (c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() <= Date.now())))
}

export function outageSignOutTests (t: Test, outage: (t: Test) => Promise<StoreOutage>): void {
  t.test('a sign-out while the store does not answer expires the session cookie, and says the store may not know', async (t) => {
    const { app, store } = await outageApp(t, outage)
    const cookie = await signIn(app)
    const page = await app.inject({ url: index, headers: { cookie } })
    t.equal(page.statusCode, 200)
    const browser = withCookies(cookie, page)
    const token = formToken(page.body)

    // Every request below is sent at once and answered within the store's timeout, while it is still down.
    await store.stop()
    const post = (headers: Record<string, string>, payload?: string) => app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: browser, ...headers }, ...(payload === undefined ? {} : { payload }) })
    const form = 'application/x-www-form-urlencoded'
    // Another site's page can make the browser post here, but it has no token: nothing changes.
    const refused = [
      ['a forged token', { 'content-type': form }, '_csrf=forged'],
      ['no token', { 'content-type': form }, 'BackURL=%2F'],
      ['a form too large to be a sign-out form', { 'content-type': form }, `_csrf=${token}&pad=${'x'.repeat(20_000)}`],
      ['a body of another type', { 'content-type': 'text/plain' }, `_csrf=${token}`],
      ['JSON that does not parse', { 'content-type': 'application/json' }, '{"_csrf":']
    ] as const
    const csrfCookieOnly = browser.split('; ').filter((c) => !c.startsWith('sessionId=')).join('; ')
    const [signedOut, json, noCsrfCookie, other, noSession, ...others] = await Promise.all([
      post({ 'content-type': form }, new URLSearchParams({ _csrf: token }).toString()),
      post({ 'csrf-token': token, accept: 'application/json' }),
      app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie, 'csrf-token': token } }),
      app.inject({ url: index, headers: { cookie: browser } }),
      // No session cookie: @fastify/session reads nothing, the route runs and the store fails at destroy().
      app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: csrfCookieOnly, 'content-type': form }, payload: new URLSearchParams({ _csrf: token }).toString() }),
      ...refused.map(([, headers, payload]) => post(headers, payload))
    ])
    t.ok(store.down(), 'all answered while the store was still down')

    t.equal(signedOut.statusCode, 503, 'still the outage answer: the store did not take the sign-out')
    t.equal(signedOut.headers['retry-after'], '5')
    const expired = expiry(signedOut, 'sessionId')
    t.ok(expired, 'the session cookie is expired')
    t.equal(expired?.path, '/', 'at the path @fastify/session sets it')
    t.ok(expired?.httpOnly)
    t.match(signedOut.body, 'Signed out on this browser')
    t.match(signedOut.body, 'may not have reached every server')
    t.notMatch(signedOut.body, 'Ada Teacher')

    t.equal(json.statusCode, 503)
    t.ok(expiry(json, 'sessionId'), 'a JSON client with the token in a header: expired too')
    t.match(json.json(), { code: 'FST_SR_STORE_UNAVAILABLE', signedOut: true, message: /may not have reached every server/ })

    others.forEach((res, i) => {
      const label = refused[i][0]
      t.equal(res.statusCode, 503, label)
      t.equal(res.headers['set-cookie'], undefined, `${label}: no Set-Cookie, the visitor keeps their cookie`)
      t.match(res.body, 'Temporarily unavailable', label)
    })
    t.equal(noCsrfCookie.headers['set-cookie'], undefined, 'a token without the CSRF cookie it was made for: no Set-Cookie')
    t.equal(noSession.statusCode, 503, 'a sign-out the route itself could not finish (the store failed at destroy)')
    t.ok(expiry(noSession, 'sessionId'), 'expires the cookie all the same')
    // Any other page during the outage keeps the cookie, as before.
    t.equal(other.statusCode, 503)
    t.equal(other.headers['set-cookie'], undefined)

    await store.back()
    // The browser dropped its cookie, so it is a visitor again; the session itself was not deleted, which
    // is what the page says (a copy of the old cookie still works until it expires or signs out again).
    const after = await app.inject({ url: index, headers: { cookie: withCookies(browser, signedOut) } })
    t.equal(after.statusCode, 200)
    t.notMatch(after.body, 'Ada Teacher', 'the browser that signed out is signed out')
    const copy = await app.inject({ url: index, headers: { cookie: browser } })
    t.match(copy.body, 'Ada Teacher', 'the old cookie, kept elsewhere, still finds its session')
  })

  t.test('the cookie expired is the one the cookieName option names, Secure where it must be', async (t) => {
    const { app, store } = await outageApp(t, outage, '__Host-sid', { trustProxy: true })
    const login = await app.inject({ url: '/Security/login' })
    const loginForm = withCookies(undefined, login)
    const signedIn = await app.inject({
      method: 'POST',
      url: '/Security/login',
      headers: { cookie: loginForm, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: formToken(login.body), email: 'teacher@example.org', password: 'correct horse battery staple' }).toString()
    })
    t.equal(signedIn.statusCode, 303)
    const page = await app.inject({ url: index, headers: { cookie: withCookies(loginForm, signedIn) } })
    await store.stop()
    const headers = { cookie: withCookies(withCookies(loginForm, signedIn), page), 'csrf-token': formToken(page.body) }
    const [res, https] = await Promise.all([
      app.inject({ method: 'POST', url: '/Security/logout', headers }),
      app.inject({ method: 'POST', url: '/Security/logout', headers: { ...headers, 'x-forwarded-proto': 'https' } })
    ])
    t.equal(res.statusCode, 503)
    const expired = expiry(res, '__Host-sid')
    t.ok(expired, '__Host-sid is expired')
    t.equal(expired?.secure, true, 'Secure, as a __Host- cookie must be, even over http')
    t.notOk(res.cookies.some((c) => c.name === 'sessionId'), 'and no cookie of another name')
    t.equal(expiry(https, '__Host-sid')?.secure, true, 'Secure over https')
    await store.back()
  })
}
