import t from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import helmet from '@fastify/helmet'
import schoolsResources, { InMemoryCatalog } from '../lib/index.js'
import { SECRET, buildTestApp, signIn, teacherOnly } from './helpers/app.js'

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
    t.ok(res.headers['strict-transport-security'], 'HSTS')
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
