import t from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import rateLimit from '@fastify/rate-limit'
import schoolsResources, { InMemoryCatalog } from '../../lib/index.js'
import { SECRET, TEACHER, buildTestApp, formBody, openLoginForm, teacherOnly } from '../helpers/app.js'

t.test('one address is limited; other addresses are not', async (t) => {
  const { app } = await buildTestApp({ plugin: { loginRateLimit: { max: 3, timeWindow: '1 minute' }, lockout: false } })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const post = (remoteAddress: string, headers: Record<string, string> = {}) => {
    const body = formBody({ _csrf: form.token, email: `user${Math.random()}@example.org`, password: 'x' })
    return app.inject({ method: 'POST', url: '/Security/login', remoteAddress, headers: { cookie: form.cookie, ...body.headers, ...headers }, payload: body.payload })
  }
  for (let i = 0; i < 3; i++) t.equal((await post('203.0.113.7')).statusCode, 401)
  const limited = await post('203.0.113.7')
  t.equal(limited.statusCode, 429)
  t.match(limited.body, /role="alert"[^>]*>Too many sign-in attempts from this address\. Try again in 1 minute\.</)
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After is set')
  const json = await post('203.0.113.7', { accept: 'application/json' })
  t.equal(json.statusCode, 429)
  t.equal(json.json().code, 'FST_SR_LOGIN_RATE_LIMITED')
  t.equal((await post('198.51.100.2')).statusCode, 401, 'another address is not limited')
  const page = await app.inject({ url: '/schools/resources/', remoteAddress: '203.0.113.7' })
  t.equal(page.statusCode, 200, 'only sign-in attempts are limited')
})

t.test('with a host-registered @fastify/rate-limit the plugin uses it', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
  await app.register(rateLimit, { global: false })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }), authenticate: teacherOnly, loginRateLimit: { max: 1 } })
  const form = await openLoginForm(app)
  const post = () => app.inject({ method: 'POST', url: '/Security/login', headers: { cookie: form.cookie }, payload: { _csrf: form.token, email: TEACHER.email, password: 'x' } })
  t.equal((await post()).statusCode, 401)
  t.equal((await post()).statusCode, 429)
})

t.test('bad rate-limit options fail at startup', async (t) => {
  for (const [loginRateLimit, name] of [[{ max: -1 }, 'loginRateLimit.max'], [{ timeWindow: 0 }, 'loginRateLimit.timeWindow'], [[], 'loginRateLimit']] as const) {
    await t.rejects(buildTestApp({ plugin: { loginRateLimit: loginRateLimit as never } }), { code: 'FST_SR_INVALID_OPTION', message: new RegExp(`"${name.replace('.', '\\.')}"`) }, name)
  }
})

t.test('IPv6 clients share one budget per /64; IPv4 (mapped or not) per address', async (t) => {
  const { app } = await buildTestApp({ plugin: { loginRateLimit: { max: 3, timeWindow: '1 minute' }, lockout: false } })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const post = (remoteAddress: string) => app.inject({
    method: 'POST', url: '/Security/login', remoteAddress, headers: { cookie: form.cookie }, payload: { _csrf: form.token, email: 'a@example.org', password: 'x' }
  })
  // Four addresses of one /64, written every way an address can be.
  const statuses = []
  for (const address of ['2001:db8:1:2::1', '2001:0db8:0001:0002:0000:0000:0000:0002', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:DB8:1:2::abcd%eth0']) {
    statuses.push((await post(address)).statusCode)
  }
  t.same(statuses, [401, 401, 401, 429], 'a fresh address in the same /64 gets no fresh budget')
  t.equal((await post('2001:db8:1:3::1')).statusCode, 401, 'the next /64 has its own')
  t.equal((await post('::1')).statusCode, 401, 'loopback')
  for (let i = 0; i < 3; i++) await post('::ffff:192.0.2.1')
  t.equal((await post('192.0.2.1')).statusCode, 429, 'an IPv4-mapped address counts as the IPv4 address')
  t.equal((await post('192.0.2.2')).statusCode, 401, 'IPv4 addresses each have their own')
})
