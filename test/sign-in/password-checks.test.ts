import t from 'tap'
import { request as httpRequest, Agent } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { Credentials, Member } from '../../lib/index.js'
import { BUSY_RETRY_AFTER_SECONDS, PasswordChecks, passwordCheckDefaults } from '../../lib/sign-in/password-checks.js'
import { TEACHER, TEACHER_MEMBER, buildTestApp, openLoginForm } from '../helpers/app.js'

// Issue 19: password checks (scrypt on libuv's 4 threads) starved file downloads during a spray. The
// section now runs at most `concurrent` authenticate() calls at once, keeps a bounded first-come line with
// a cap per address, and answers the rest at once with 503 FST_SR_SIGN_IN_BUSY and Retry-After. Here
// every sign-in is a real request on its own socket from its own loopback address (127.0.0.x), and the
// host's authenticate is held at a gate, so what is running, waiting and refused is seen while it is so.

interface Answer { status: number, retryAfter: string | undefined, body: string }

const A = '127.0.0.2'
const B = '127.0.0.3'
const C = '127.0.0.4'

t.test('truly parallel sign-ins: the cap, the line\'s bound, the per-address cap, a fast 503 with Retry-After, and every one answered', async (t) => {
  let running = 0
  let most = 0
  const started: string[] = []
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  const authenticate = async ({ email, password }: Credentials, request: { ip: string }): Promise<Member | null> => {
    running++
    most = Math.max(most, running)
    started.push(`${request.ip} ${password}`)
    await gate
    running--
    return email === TEACHER.email && password === TEACHER.password ? TEACHER_MEMBER : null
  }
  let arrived = 0
  const { app } = await buildTestApp({
    plugin: { authenticate, lockout: false, loginRateLimit: false, passwordChecks: { concurrent: 2, waiting: 4, perAddress: 3 } },
    extend: (host: FastifyInstance) => { host.addHook('preHandler', async (request) => { if (request.method === 'POST') arrived++ }) }
  })
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  const agent = new Agent({ keepAlive: false, maxSockets: 100 })
  t.teardown(() => agent.destroy())

  function post (from: string, password: string, json = false): Promise<Answer> {
    const body = new URLSearchParams({ _csrf: form.token, email: TEACHER.email, password }).toString()
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${origin}/Security/login`, {
        method: 'POST',
        agent,
        localAddress: from,
        headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...(json ? { accept: 'application/json' } : {}) }
      }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => { text += chunk })
        res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body: text }))
      })
      req.on('error', reject)
      req.end(body)
    })
  }
  async function settled (count: number) {
    for (let waited = 0; waited < 10_000; waited += 5) {
      if (arrived >= count) break
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await new Promise((resolve) => setTimeout(resolve, 30))
  }

  // 10 at once from A: 2 run, 1 waits (A's share is 3), 7 are refused while the 3 are still held.
  const fromA = Array.from({ length: 10 }, (_, i) => post(A, `a-${i}`, i === 9))
  const refusedA: Answer[] = []
  for (const answer of fromA) answer.then((a) => { if (a.status === 503) refusedA.push(a) }, () => undefined)
  await settled(10)
  t.equal(running, 2, 'two passwords checked at once, no more')
  t.equal(refusedA.length, 7, 'the rest of A\'s burst is refused at once, while its checks are still held')
  for (const a of refusedA) t.equal(a.retryAfter, String(BUSY_RETRY_AFTER_SECONDS), 'with Retry-After')
  t.ok(refusedA.some((a) => a.body.includes('Sign-in is busy') && a.body.includes('<form')), 'a browser gets the login form with the message')
  t.ok(refusedA.some((a) => { try { return JSON.parse(a.body).code === 'FST_SR_SIGN_IN_BUSY' } catch { return false } }), 'a JSON client gets the code')

  // B fills the line (A's 1 + B's 3 = 4 waiting).
  const fromB = Array.from({ length: 3 }, (_, i) => post(B, `b-${i}`))
  await settled(13)
  // The line is full: C, with nothing running or waiting, is refused at once all the same.
  const fromC = await post(C, TEACHER.password)
  t.equal(fromC.status, 503, 'a full line refuses a newcomer at once')
  t.equal(running, 2)

  open()
  const all = await Promise.all([...fromA, ...fromB])
  t.equal(most, 2, 'at most 2 at once throughout')
  t.same(started.slice(2).map((s) => s.split(' ')[0]), [A, B, B, B], 'the waiting, first come first served')
  t.equal(all.filter((a) => a.status === 401).length, 6, 'A\'s 3 and B\'s 3 were checked and answered')
  t.equal(all.filter((a) => a.status === 503).length, 7)
  // The line is empty again: C signs in.
  t.equal((await post(C, TEACHER.password)).status, 303, 'C signed in once there was room')
  t.equal(all.length + 2, arrived, 'every request was answered')
})

t.test('waiting: 0 runs what it can and refuses the rest; a failing authenticate frees its turn', async (t) => {
  const checks = new PasswordChecks({ concurrent: 1, waiting: 0, perAddress: 5 })
  let release: () => void = () => {}
  const held = checks.run(A, () => new Promise<string>((resolve) => { release = () => resolve('done') }))
  await t.rejects(checks.run(B, async () => 'x'), { code: 'FST_SR_SIGN_IN_BUSY', statusCode: 503 })
  release()
  t.equal(await held, 'done')
  await t.rejects(checks.run(A, async () => { throw new Error('directory down') }), { message: 'directory down' })
  t.equal(await checks.run(A, async () => 'next'), 'next', 'the failed check gave its turn back')
})

t.test('addresses: one /64 is one share (clientKey, test/sign-in/limits.test.ts), given back when its sign-ins end', async (t) => {
  const checks = new PasswordChecks({ concurrent: 1, waiting: 1, perAddress: 1 })
  const held: Array<() => void> = []
  // One /64 is one share: a second address in it is refused while the first is checked.
  const first = checks.run('2001:db8:0:1::1', () => new Promise<void>((resolve) => held.push(resolve)))
  await t.rejects(checks.run('2001:db8:0:1::2', async () => undefined), { code: 'FST_SR_SIGN_IN_BUSY' })
  held[0]()
  await first
  t.equal(await checks.run('2001:db8:0:1::2', async () => 'next'), 'next', 'its share came back when the check ended')
  // A waiter's share too: refused at close, its address may sign in again.
  const again = checks.run(A, () => new Promise<void>((resolve) => held.push(resolve)))
  const waits = checks.run(B, async () => 'never')
  checks.close()
  await t.rejects(waits, { code: 'FST_SR_SIGN_IN_BUSY' })
  held[1]()
  await again
  t.equal(await checks.run(B, async () => 'b'), 'b')
})

t.test('first come, first served, whatever the address', async (t) => {
  const checks = new PasswordChecks({ concurrent: 2, waiting: 8, perAddress: 8 })
  const order: string[] = []
  const held: Array<() => void> = []
  const hold = () => new Promise<void>((resolve) => held.push(resolve))
  const running = [checks.run(C, hold), checks.run(C, hold)]
  const from = ['203.0.113.1', '198.51.100.1', '203.0.113.1', '192.0.2.1', '198.51.100.1']
  const queued = from.map((address, i) => checks.run(address, async () => { order.push(`${i} ${address}`) }))
  t.equal(held.length, 2, 'two run, five wait')
  held.splice(0).forEach((release) => release())
  await Promise.all([...running, ...queued])
  t.same(order, from.map((address, i) => `${i} ${address}`))
})

t.test('close(): the sign-ins waiting are refused at once, the running check ends, and none waits after', async (t) => {
  const checks = new PasswordChecks({ concurrent: 1, waiting: 10, perAddress: 10 })
  let release: () => void = () => {}
  const running = checks.run(A, () => new Promise<string>((resolve) => { release = () => resolve('checked') }))
  const waiting = [checks.run(A, async () => 'never'), checks.run(B, async () => 'never')]
  checks.close()
  for (const w of waiting) await t.rejects(w, { code: 'FST_SR_SIGN_IN_BUSY' }, 'a waiter is refused')
  await t.rejects(checks.run(C, async () => 'never'), { code: 'FST_SR_SIGN_IN_BUSY' }, 'no check free and no place in line')
  release()
  t.equal(await running, 'checked', 'the check that was running ends as it would')
  t.equal(await checks.run(C, async () => 'free'), 'free', 'a free check still runs')
})

t.test('app.close() answers the sign-ins waiting in line with the busy 503 before it waits for requests', async (t) => {
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  let started = 0
  let arrived = 0
  const { app } = await buildTestApp({
    plugin: {
      authenticate: async () => { started++; await gate; return null },
      lockout: false,
      loginRateLimit: false,
      passwordChecks: { concurrent: 1, waiting: 10, perAddress: 10 }
    },
    // Past Fastify's routing before the app closes (a request routed after would get Fastify's own 503).
    extend: (host: FastifyInstance) => { host.addHook('preHandler', async (request) => { if (request.method === 'POST') arrived++ }) }
  })
  const form = await openLoginForm(app)
  const post = () => app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: form.token, email: TEACHER.email, password: 'wrong' }).toString()
  })
  const answers = [post(), post(), post()]
  const until = async (done: () => boolean) => { while (!done()) await new Promise((resolve) => setImmediate(resolve)) }
  await until(() => started === 1 && arrived === 3)
  const closed = app.close()
  const [, second, third] = answers
  for (const res of [await second, await third]) {
    t.equal(res.statusCode, 503, 'a waiting sign-in is answered while the app closes')
    t.ok(Number(res.headers['retry-after']) >= 1, 'with Retry-After')
  }
  t.equal(started, 1, 'only the sign-in that had its turn was checked')
  open()
  t.equal((await answers[0]).statusCode, 401, 'the running check ends with its own answer')
  await closed
})

t.test('the defaults follow UV_THREADPOOL_SIZE', async (t) => {
  t.same(passwordCheckDefaults({}), { concurrent: 2, waiting: 400, perAddress: 302 })
  t.same(passwordCheckDefaults({ UV_THREADPOOL_SIZE: '16' }), { concurrent: 8, waiting: 400, perAddress: 306 })
  t.same(passwordCheckDefaults({ UV_THREADPOOL_SIZE: '1' }), { concurrent: 1, waiting: 400, perAddress: 301 })
  t.same(passwordCheckDefaults({ UV_THREADPOOL_SIZE: 'many' }), passwordCheckDefaults({}))
})

t.test('a known browser waits in a place of its own, served first, outside its address\'s share', async (t) => {
  const checks = new PasswordChecks({ concurrent: 1, waiting: 9, perAddress: 4 })
  const order: string[] = []
  let release: () => void = () => {}
  const hold = checks.run(A, () => new Promise<void>((resolve) => { release = resolve }))
  const queued = [
    ...[1, 2, 3].map((i) => checks.run(A, async () => { order.push(`A ${i}`) })),
    checks.run(A, async () => { order.push('device 1') }, 'nonce-1'),
    checks.run(B, async () => { order.push('B') }),
    checks.run(A, async () => { order.push('device 2') }, 'nonce-2')
  ]
  // A has four of its four places (perAddress); the browsers' own places are not among them.
  await t.rejects(checks.run(A, async () => undefined), { code: 'FST_SR_SIGN_IN_BUSY' }, 'the address is full')
  // One browser is one client: its share is perAddress too.
  const fromOne = [1, 2, 3].map(() => checks.run(A, async () => { order.push('device 1 again') }, 'nonce-1'))
  await t.rejects(checks.run(A, async () => undefined, 'nonce-1'), { code: 'FST_SR_SIGN_IN_BUSY' }, 'the browser\'s own share is full')
  // The line's bound counts them all: 9 waiting.
  await t.rejects(checks.run(C, async () => undefined, 'nonce-3'), { code: 'FST_SR_SIGN_IN_BUSY' }, 'the line is full, for known browsers too')
  release()
  await hold
  await Promise.all([...queued, ...fromOne])
  t.same(order, ['device 1', 'device 2', 'device 1 again', 'device 1 again', 'device 1 again', 'A 1', 'A 2', 'A 3', 'B'],
    'the known browsers first, in their order, ahead of the line that came before them; then the line in its order')
})
