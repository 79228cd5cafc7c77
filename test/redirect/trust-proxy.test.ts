import t from 'tap'
import Fastify, { type FastifyServerOptions } from 'fastify'
import schoolsResources, { InMemoryCatalog } from '../../lib/index.js'
import { fastifyOption } from '../../lib/redirect/site-origin.js'
import { buildTestApp, capturedLogs, postLogin, TEACHER } from '../helpers/app.js'

// Fastify's trustProxy as hosts set it (issue 18, item 4): what Fastify 5 really does with each value, over
// a real socket; the section's one start-up line for the unsafe ones; and the login limit with the fix.

const WARNING = 'FST_SR_TRUST_PROXY'

/** What a Fastify app with this trustProxy makes of one request from 127.0.0.1 carrying forwarding headers. */
async function seenBy (trustProxy: unknown, headers: Record<string, string>) {
  // Fastify's types leave numbers out; JavaScript hosts (and the example's TRUST_PROXY=1) pass them all the same.
  const app = Fastify({ trustProxy: trustProxy as FastifyServerOptions['trustProxy'] })
  app.get('/', async (request) => ({ ip: request.ip, protocol: request.protocol }))
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  try {
    return await (await fetch(origin, { headers })).json() as { ip: string, protocol: string }
  } finally {
    await app.close()
  }
}

t.test('what Fastify 5 makes of each trustProxy, over a real socket', async (t) => {
  const spoofed = { 'x-forwarded-for': '203.0.113.66, 198.51.100.7', 'x-forwarded-proto': 'https' }
  t.same(await seenBy(true, spoofed), { ip: '203.0.113.66', protocol: 'https' }, 'true: the left end, which the client wrote')
  t.same(await seenBy('127.0.0.1', spoofed), { ip: '198.51.100.7', protocol: 'https' }, 'the proxy\'s address: the address the proxy saw')
  t.same(await seenBy(['127.0.0.0/8'], spoofed), { ip: '198.51.100.7', protocol: 'https' }, 'a CIDR list: the same')
  t.same(await seenBy(1, spoofed), { ip: '127.0.0.1', protocol: 'http' }, 'a hop count: no proxy is trusted, not even the one in front')
  t.same(await seenBy(2, spoofed), { ip: '127.0.0.1', protocol: 'http' })
  t.same(await seenBy('1', spoofed), { ip: '127.0.0.1', protocol: 'http' }, '"1" is the address 0.0.0.1')
  t.same(await seenBy(undefined, spoofed), { ip: '127.0.0.1', protocol: 'http' }, 'unset: the socket')
})

t.test('true, a number or a bare number: one start-up line with the fix, however many sections and requests', async (t) => {
  for (const trustProxy of [true, 1, 2, '1', '10.0.0.1, 2', ['10.0.0.1', '3']] as const) {
    const logs = capturedLogs()
    const { app } = await buildTestApp({
      fastify: { trustProxy: trustProxy as FastifyServerOptions['trustProxy'], logger: logs.logger },
      extend: (app) => { app.register(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }), signIn: false, prefix: '/staff/resources' }) }
    })
    t.teardown(() => app.close())
    for (let i = 0; i < 3; i++) await app.inject('/schools/resources/')
    const lines = logs.withCode(WARNING)
    t.equal(lines.length, 1, `${JSON.stringify(trustProxy)}: one line`)
    t.same(lines[0].trustProxy, trustProxy)
    t.match(lines[0].msg, /Set trustProxy to the addresses or CIDRs of your own proxies .*or to a function that checks the proxy's address/)
    t.match(lines[0].msg, trustProxy === true ? /every client's X-Forwarded-For counts/ : typeof trustProxy === 'number' ? /hop count .* trusts no proxy at all/ : /read as an IP address/)
  }
  for (const trustProxy of ['127.0.0.1', '10.0.0.1,10.0.0.2', ['10.0.0.0/8', 'fd00::/8'], 'loopback, uniquelocal', '10.0.0.0/255.0.0.0', '::ffff:10.0.0.0/104',
    (address: string) => address === '10.0.0.1', false, 0, undefined]) {
    const logs = capturedLogs()
    const { app } = await buildTestApp({ fastify: { trustProxy: trustProxy as FastifyServerOptions['trustProxy'], logger: logs.logger } })
    t.teardown(() => app.close())
    t.same(logs.withCode(WARNING), [], `${typeof trustProxy === 'function' ? 'a function' : JSON.stringify(trustProxy)}: nothing to say`)
  }
  t.equal(fastifyOption({}, 'trustProxy'), undefined, 'an object that is no Fastify instance has no options')
})

t.test('a setting that trusts a public peer, asked rather than read: one start-up line with the fix', async (t) => {
  const everyone = (): boolean => true
  const broken = (address: string): boolean => { throw new Error(`no table for ${address}`) }
  const cases: Array<[unknown, string]> = [
    ['0.0.0.0/1,128.0.0.0/1', '"0.0.0.0/1,128.0.0.0/1" trusts a public peer'],
    ['::/1,8000::/1', '"::/1,8000::/1" trusts a public peer'],
    [['10.0.0.1', '2001:db8::/32'], 'trusts a public peer'],
    ['10.0.0.1, 203.0.113.0/24', 'trusts a public peer'],
    ['0.0.0.0/128.0.0.0, 128.0.0.0/128.0.0.0', 'trusts a public peer'],
    ['::ffff:0:0/96', 'trusts a public peer'],
    [everyone, '(a function) trusts a public peer'],
    [(address: string) => address.includes(':'), '(a function) trusts a public peer'],
    [broken, '(a function) trusts a public peer']
  ]
  for (const [trustProxy, said] of cases) {
    const logs = capturedLogs()
    const { app } = await buildTestApp({ fastify: { trustProxy: trustProxy as FastifyServerOptions['trustProxy'], logger: logs.logger } })
    t.teardown(() => app.close())
    const what = typeof trustProxy === 'function' ? `the function ${trustProxy.name || 'ipv6'}` : JSON.stringify(trustProxy)
    const lines = logs.withCode(WARNING)
    t.equal(lines.length, 1, `${what}: one line`)
    t.ok(lines[0].msg.includes(said), `${what}: ${lines[0].msg.slice(0, 80)}`)
    t.match(lines[0].msg, /asked about 203\.0\.113\.1 and 2001:db8::1.*chooses its address for the section's login rate limit.*Set trustProxy to the addresses or CIDRs of your own proxies/)
  }
  // What the line says is what Fastify does: a visitor from a public address picks its own.
  const app = Fastify({ trustProxy: '0.0.0.0/1,128.0.0.0/1' })
  app.get('/', async (request) => request.ip)
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/', remoteAddress: '203.0.113.1', headers: { 'x-forwarded-for': '198.51.100.99' } })).body, '198.51.100.99')
})

t.test('reproduction 4 with the fix: trustProxy as the proxy\'s address keeps one limit per visitor', async (t) => {
  const { app } = await buildTestApp({ fastify: { trustProxy: '127.0.0.1' }, plugin: { loginRateLimit: { max: 5, timeWindow: 60_000 }, lockout: false } })
  t.teardown(() => app.close())
  const statuses: number[] = []
  for (let i = 0; i < 9; i++) {
    const res = await postLogin(app, { email: TEACHER.email, password: `wrong-${i}` }, { headers: { 'x-forwarded-for': `203.0.113.${i}, 198.51.100.7` } })
    statuses.push(res.statusCode)
  }
  t.same(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429], 'the address the proxy saw counts, not what the client wrote')
})
