import t from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import rateLimit from '@fastify/rate-limit'
import schoolsResources, { InMemoryCatalog } from '../../lib/index.js'
import { SECRET, TEACHER, buildTestApp, formBody, openLoginForm, postLogin, teacherOnly } from '../helpers/app.js'
import { directory } from '../helpers/members.js'

t.test('one address is limited; other addresses are not', async (t) => {
  const { app } = await buildTestApp({ plugin: { loginRateLimit: { max: 3, timeWindow: 60_000 }, lockout: false } })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const post = (remoteAddress: string, headers: Record<string, string> = {}) => {
    const body = formBody({ _csrf: form.token, email: `user${Math.random()}@example.org`, password: 'x' })
    return app.inject({ method: 'POST', url: '/Security/login', remoteAddress, headers: { cookie: form.cookie, ...body.headers, ...headers }, payload: body.payload })
  }
  for (let i = 0; i < 3; i++) t.equal((await post('203.0.113.7')).statusCode, 401)
  const limited = await post('203.0.113.7')
  t.equal(limited.statusCode, 429)
  t.match(limited.body, /role="alert"[^>]*>Too many failed sign-ins from this address\. Try again after \d\d:\d\d(?: [AP]M)? UTC\.</)
  const retryAfter = Number(limited.headers['retry-after'])
  t.ok(retryAfter > 50 && retryAfter <= 60, `Retry-After ${retryAfter}s: the rest of the window`)
  const json = await post('203.0.113.7', { accept: 'application/json' })
  t.equal(json.statusCode, 429)
  t.equal(json.json().code, 'FST_SR_LOGIN_RATE_LIMITED')
  t.equal((await post('198.51.100.2')).statusCode, 401, 'another address is not limited')
  const page = await app.inject({ url: '/schools/resources/', remoteAddress: '203.0.113.7' })
  t.equal(page.statusCode, 200, 'only sign-in attempts are limited')
})

// Issue 18, item 3: a host's global @fastify/rate-limit (its default, global: true) used to switch the
// section's limit off (9 failures with max 5: 401 x 9). The section counts on its own now.
for (const order of ['before', 'after'] as const) {
  t.test(`a host's global @fastify/rate-limit registered ${order} the section: the section's limit still holds`, async (t) => {
    const app = Fastify()
    t.teardown(() => app.close())
    if (order === 'before') await app.register(rateLimit, { max: 1000, timeWindow: 60_000 })
    await app.register(fastifyCookie)
    await app.register(fastifySession, { secret: SECRET, cookie: { secure: false } })
    await app.register(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }), authenticate: teacherOnly, loginRateLimit: { max: 5, timeWindow: 60_000 } })
    if (order === 'after') await app.register(rateLimit, { max: 1000, timeWindow: 60_000 })
    const form = await openLoginForm(app)
    const statuses: number[] = []
    let hostLimit
    for (let i = 0; i < 9; i++) {
      const res = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie: form.cookie }, payload: { _csrf: form.token, email: `user${i}@example.org`, password: 'x' } })
      statuses.push(res.statusCode)
      hostLimit = res.headers['x-ratelimit-limit']
    }
    t.same(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429], 'five failures, then refused')
    if (order === 'before') t.equal(hostLimit, '1000', 'the host\'s own limit still runs too')
  })
}

t.test('cross-site POSTs without the form\'s token spend no budget', async (t) => {
  const { app } = await buildTestApp({ plugin: { loginRateLimit: { max: 3, timeWindow: 60_000 } } })
  t.teardown(() => app.close())
  // What any web page can make a visitor's browser send: no _csrf cookie, no token.
  const forged = []
  for (let i = 0; i < 60; i++) {
    forged.push((await app.inject({ method: 'POST', url: '/Security/login', payload: { email: `user${i}@example.org`, password: 'x' } })).statusCode)
  }
  t.same(new Set(forged), new Set([403]), '60 forged sign-ins: 403 each')
  t.equal((await postLogin(app, { email: TEACHER.email, password: TEACHER.password })).statusCode, 303, 'the address still signs in')
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await postLogin(app, { email: `user${i}@example.org`, password: 'x' })).statusCode)
  t.same(statuses, [401, 401, 401, 429], 'its whole budget of failures is left')
})

t.test('only failures count: 500 members signing in from one address all get in', async (t) => {
  // A school's morning (issue 19): every teacher and parent behind one public address. Before, the 51st
  // correct sign-in within 15 minutes was refused.
  const { members, authenticate } = directory(500)
  const { app } = await buildTestApp({ plugin: { authenticate } })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const statuses = new Map<number, number>()
  for (let batch = 0; batch < members.length; batch += 50) {
    const answers = await Promise.all(members.slice(batch, batch + 50).map((m) => postLogin(app, { email: m.email, password: m.password }, { form, remoteAddress: '203.0.113.7' })))
    for (const a of answers) statuses.set(a.statusCode, (statuses.get(a.statusCode) ?? 0) + 1)
  }
  t.same(Object.fromEntries(statuses), { 303: 500 }, '500 correct sign-ins from one address: 500 x 303')
  const wrong = []
  for (let i = 0; i < 51; i++) wrong.push((await postLogin(app, { email: members[i].email, password: 'wrong' }, { form, remoteAddress: '203.0.113.7' })).statusCode)
  t.same(wrong.slice(49), [401, 429], 'the 50 failures the address may have are all still there')
})

t.test('bad rate-limit options fail at startup', async (t) => {
  for (const [loginRateLimit, name] of [[{ max: -1 }, 'loginRateLimit.max'], [{ timeWindow: 0 }, 'loginRateLimit.timeWindow'], [{ timeWindow: 1.5 }, 'loginRateLimit.timeWindow'], [[], 'loginRateLimit']] as const) {
    await t.rejects(buildTestApp({ plugin: { loginRateLimit: loginRateLimit as never } }), { code: 'FST_SR_INVALID_OPTION', message: new RegExp(`"${name.replace('.', '\\.')}"`) }, name)
  }
})

t.test('IPv6 clients share one budget per /64; IPv4 (mapped or not) per address', async (t) => {
  const { app } = await buildTestApp({ plugin: { loginRateLimit: { max: 3, timeWindow: 60_000 }, lockout: false } })
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
