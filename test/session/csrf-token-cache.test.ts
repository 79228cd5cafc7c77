import t, { type Test } from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import csrfProtection from '@fastify/csrf-protection'
import { CSRF_TOKENS_KEPT, CsrfTokenCache } from '../../lib/session/csrf.js'
import { CSRF_COOKIE, buildTestApp, formBody, formToken, signIn, withCookies } from '../helpers/app.js'

const MATHS = '/schools/resources/resources/maths/'

/** A bare app with the section's CSRF mode (secret in a cookie) and a page that hands out the cache's token. */
async function tokenApp (t: Test, secret?: string) {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie, secret === undefined ? {} : { secret })
  await app.register(csrfProtection, { sessionPlugin: '@fastify/cookie', cookieOpts: { signed: secret !== undefined, path: '/' } })
  const cache = new CsrfTokenCache('_csrf', secret !== undefined)
  app.get('/page', async (_request, reply) => ({ token: cache.tokenFor(reply) }))
  app.post('/form', { preHandler: app.csrfProtection }, async () => 'accepted')
  const page = async (cookie?: string) => {
    const res = await app.inject({ url: '/page', headers: cookie === undefined ? {} : { cookie } })
    return { token: res.json().token as string, setCookie: res.cookies.find((c) => c.name === '_csrf'), cookie: withCookies(cookie, res) }
  }
  const post = async (cookie: string, token: string) => (await app.inject({ method: 'POST', url: '/form', headers: { cookie, 'csrf-token': token } })).statusCode
  return { app, cache, page, post }
}

t.test('a browser that keeps its CSRF cookie gets the same token on every page, and it works', async (t) => {
  for (const secret of [undefined, 'a-cookie-secret-of-32-characters-at-least']) {
    const what = secret === undefined ? 'unsigned' : 'signed'
    const { cache, page, post } = await tokenApp(t, secret)
    const first = await page()
    t.ok(first.setCookie, `${what}: no cookie yet: a new secret is set`)
    t.equal(cache.size, 0, `${what}: nothing kept for a request without the cookie`)
    const second = await page(first.cookie)
    const third = await page(first.cookie)
    t.notOk(second.setCookie, `${what}: the secret is kept`)
    t.equal(cache.size, 1)
    t.equal(third.token, second.token, `${what}: the token is made once per secret`)
    t.equal(await post(first.cookie, third.token), 200, `${what}: the kept token is valid for its cookie`)
    const other = await page()
    t.equal(await post(other.cookie, third.token), 403, `${what}: and only for its cookie`)
  }
})

t.test('a forged or empty CSRF cookie gets a new secret and is not kept', async (t) => {
  const { cache, page, post } = await tokenApp(t, 'a-cookie-secret-of-32-characters-at-least')
  for (const cookie of ['_csrf=forged.signature', '_csrf=']) {
    const res = await page(cookie)
    t.ok(res.setCookie, `${cookie}: a new secret`)
    t.equal(cache.size, 0, `${cookie}: nothing kept`)
    t.equal(await post(res.cookie, res.token), 200, `${cookie}: the token goes with the new cookie`)
  }
})

t.test('at most CSRF_TOKENS_KEPT cookies are kept, the oldest going first', async (t) => {
  const { cache, page } = await tokenApp(t)
  const first = await page('_csrf=secret-0')
  for (let i = 1; i <= CSRF_TOKENS_KEPT; i++) await page(`_csrf=secret-${i}`)
  t.equal(cache.size, CSRF_TOKENS_KEPT)
  t.equal((await page(`_csrf=secret-${CSRF_TOKENS_KEPT}`)).token, (await page(`_csrf=secret-${CSRF_TOKENS_KEPT}`)).token, 'the newest is kept')
  t.not((await page('_csrf=secret-0')).token, first.token, 'the oldest went: a new token (a new salt) for it')
})

t.test('the section: a member\'s pages carry the same logout token, which signs out; sign-in renews it', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const signedIn = await signIn(app)
  const first = await app.inject({ url: MATHS, headers: { cookie: signedIn } })
  const cookie = withCookies(signedIn, first)
  const pages = await Promise.all([MATHS, '/schools/resources/', MATHS].map((url) => app.inject({ url, headers: { cookie } })))
  for (const p of pages) {
    t.equal(p.statusCode, 200)
    // (The test app's session is rolling, so its cookie is set on every answer; the CSRF secret is not.)
    t.notOk(p.cookies.some((c) => c.name === CSRF_COOKIE), 'a browser keeps its CSRF cookie: no new secret')
  }
  const tokens = new Set(pages.map((p) => formToken(p.body)))
  t.equal(tokens.size, 1, 'one token for the secret')
  // A client that sends the session cookie alone gets a new secret with each page, as before.
  const bare = await app.inject({ url: MATHS, headers: { cookie: signedIn } })
  t.ok(bare.cookies.some((c) => c.name === CSRF_COOKIE), 'without the CSRF cookie: a new secret')
  t.not(formToken(bare.body), formToken(pages[0].body))
  const body = formBody({ _csrf: [...tokens][0] })
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie, ...body.headers }, payload: body.payload })
  t.equal(out.statusCode, 303, 'the kept token signs out')
})
