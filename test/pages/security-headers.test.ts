import t from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import helmet from '@fastify/helmet'
import helmetMiddleware from 'helmet'
import schoolsResources, { CONTENT_SECURITY_POLICY, InMemoryCatalog } from '../../lib/index.js'
import { SECRET, buildTestApp, signIn, teacherOnly } from '../helpers/app.js'

const CSP = "default-src 'none';style-src 'self';img-src 'self' data:;font-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'"

t.test('the plugin\'s pages carry security headers and a CSP they satisfy', async (t) => {
  const { app } = await buildTestApp({ extend: (app) => { app.get('/host-page', async () => 'host') } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  for (const [url, headers] of [
    ['/schools/resources/', {}],
    ['/Security/login?BackURL=%2Fx', {}],
    ['/schools/resources/resources/maths/', { cookie }],
    ['/schools/resources/resources/maths/', {}]
  ] as const) {
    const res = await app.inject({ url, headers })
    t.equal(res.headers['content-security-policy'], CSP, `${url}: CSP`)
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.equal(res.headers['x-frame-options'], 'SAMEORIGIN')
    t.equal(res.headers['referrer-policy'], 'no-referrer')
    t.equal(res.headers['strict-transport-security'], undefined, `${url}: no HSTS unless the host asks for it`)
    // The policy allows no inline script or style: the pages must not need any.
    t.notMatch(res.body, /<script|<style|\sstyle=|\son[a-z]+=/i, `${url}: nothing inline`)
  }
  const host = await app.inject('/host-page')
  t.equal(host.headers['content-security-policy'], undefined, 'the host\'s own routes are untouched')
})

t.test('helmet options: false turns them off; a host-registered helmet wins', async (t) => {
  const off = await buildTestApp({ plugin: { helmet: false } })
  t.teardown(() => off.app.close())
  t.equal((await off.app.inject('/schools/resources/')).headers['content-security-policy'], undefined)

  const custom = await buildTestApp({ plugin: { helmet: { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"] } } } } })
  t.teardown(() => custom.app.close())
  t.match((await custom.app.inject('/schools/resources/')).headers['content-security-policy'], /default-src 'self'/)

  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  await app.register(helmet, { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], styleSrc: ["'self'", 'https://cdn.example.org'] } } })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }), authenticate: teacherOnly })
  t.match((await app.inject('/schools/resources/')).headers['content-security-policy'], /style-src 'self' https:\/\/cdn\.example\.org/)

  await t.rejects(buildTestApp({ plugin: { helmet: 'strict' as never } }), { code: 'FST_SR_INVALID_OPTION', message: /"helmet"/ })
})

t.test('fixed options: the headers are exactly the ones helmet\'s middleware sets on a response', async (t) => {
  const { app } = await buildTestApp({ plugin: { helmet: { crossOriginEmbedderPolicy: true, hsts: { maxAge: 600 } } } })
  t.teardown(() => app.close())
  // helmet's own middleware on a real response, with the same options as the section uses.
  const direct = Fastify()
  t.teardown(() => direct.close())
  const run = helmetMiddleware({ contentSecurityPolicy: { ...CONTENT_SECURITY_POLICY, directives: { ...CONTENT_SECURITY_POLICY.directives, styleSrc: ["'self'"] } }, crossOriginEmbedderPolicy: true, hsts: { maxAge: 600 } })
  direct.get('/', (request, reply) => {
    reply.raw.setHeader('X-Powered-By', 'something')
    run(request.raw, reply.raw, () => { reply.send('') })
  })
  const expected = (await direct.inject('/')).headers
  const ours = (await app.inject('/schools/resources/')).headers
  const pick = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => name in expected && !['content-type', 'content-length', 'date', 'connection'].includes(name)))
  t.same(pick(ours), pick(expected))
  t.equal(expected['x-powered-by'], undefined, 'helmet removes X-Powered-By')
  t.equal(ours['x-powered-by'], undefined)
  t.equal(ours['cross-origin-embedder-policy'], 'require-corp')
  t.equal(ours['strict-transport-security'], 'max-age=600; includeSubDomains')
})

t.test('HSTS is off by default, on https too: the host turns it on through the helmet option', async (t) => {
  // Over https (behind a proxy that says so): helmet's default would pin every subdomain for a year.
  const off = await buildTestApp({ fastify: { trustProxy: '127.0.0.1' }, plugin: { helmet: { hsts: undefined, strictTransportSecurity: undefined } } })
  t.teardown(() => off.app.close())
  const cookie = await signIn(off.app)
  for (const url of ['/schools/resources/', '/Security/login', '/schools/resources/no-such-page', '/schools/resources/resources/maths/']) {
    const res = await off.app.inject({ url, headers: { cookie, 'x-forwarded-proto': 'https' } })
    t.equal(res.headers['strict-transport-security'], undefined, url)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url}: helmet's other headers stay`)
  }
  for (const [helmet, expected] of [
    [{ strictTransportSecurity: true }, 'max-age=31536000; includeSubDomains'],
    [{ strictTransportSecurity: { maxAge: 600, includeSubDomains: false } }, 'max-age=600'],
    [{ hsts: { maxAge: 86400 } }, 'max-age=86400; includeSubDomains']
  ] as const) {
    const on = await buildTestApp({ plugin: { helmet } })
    t.teardown(() => on.app.close())
    t.equal((await on.app.inject('/schools/resources/')).headers['strict-transport-security'], expected, JSON.stringify(helmet))
  }
  // With a function option (a CSP nonce) the headers are set per request: still no HSTS by default.
  const nonce = await buildTestApp({ plugin: { helmet: { contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], scriptSrc: [() => "'nonce-1'"] } } } } })
  t.teardown(() => nonce.app.close())
  const res = await nonce.app.inject('/schools/resources/')
  t.match(res.headers['content-security-policy'], "'nonce-1'")
  t.equal(res.headers['strict-transport-security'], undefined)
})

t.test('options that refer to themselves are read once, not followed round the loop', async (t) => {
  const hsts: Record<string, unknown> = { maxAge: 600 }
  hsts.self = hsts
  const { app } = await buildTestApp({ plugin: { helmet: { hsts } as never } })
  t.teardown(() => app.close())
  t.equal((await app.inject('/schools/resources/')).headers['strict-transport-security'], 'max-age=600; includeSubDomains')
})

t.test('an option that is a function (a CSP nonce) is run for every request', async (t) => {
  let n = 0
  const { app } = await buildTestApp({
    plugin: { helmet: { contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], scriptSrc: [() => `'nonce-${++n}'`] } } } }
  })
  t.teardown(() => app.close())
  const first = (await app.inject('/schools/resources/')).headers['content-security-policy']
  const second = (await app.inject('/schools/resources/')).headers['content-security-policy']
  t.match(first, "script-src 'nonce-1'")
  t.match(second, "script-src 'nonce-2'")
})

t.test('a CSP function that fails: the 500 page under a policy that allows nothing, never a page without one', async (t) => {
  let value: () => string = () => "'nonce-1'"
  const { app } = await buildTestApp({
    plugin: { helmet: { contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], scriptSrc: [() => value()] } } } }
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/schools/resources/')).statusCode, 200)
  value = () => { throw new Error('no nonce today') }
  const thrown = await app.inject('/schools/resources/')
  t.equal(thrown.statusCode, 500)
  t.notMatch(thrown.body, 'no nonce today')
  t.match(thrown.body, '<h1>Something went wrong</h1>')
  t.notMatch(thrown.body, 'Resources', 'not the page it was about to send')
  t.equal(thrown.headers['content-security-policy'], "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
  // helmet refuses a value that would break out of its directive, through next(err).
  value = () => "'nonce-x'; script-src *"
  const refused = await app.inject({ url: '/schools/resources/', headers: { accept: 'application/json' } })
  t.equal(refused.statusCode, 500)
  t.equal(refused.json().code, 'FST_SR_INTERNAL_ERROR')
  t.notMatch(refused.body, /Content-Security-Policy/)
  t.match(refused.headers['content-security-policy'], /^default-src 'none'/)
})
