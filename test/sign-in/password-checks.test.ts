import t from 'tap'
import { request as httpRequest, Agent } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { Credentials, Member } from '../../lib/index.js'
import { MAX_WAIT_MS, PasswordChecks, passwordCheckDefaults } from '../../lib/sign-in/password-checks.js'
import { TEACHER, TEACHER_MEMBER, buildTestApp, openLoginForm } from '../helpers/app.js'

// Issue 19: password checks (scrypt on libuv's 4 threads) starved file downloads during a spray. The
// section now runs at most `concurrent` authenticate() calls at once, keeps a bounded line with a fair
// share per address, and answers the rest at once with 503 FST_SR_SIGN_IN_BUSY and Retry-After. Here
// every sign-in is a real request on its own socket from its own loopback address (127.0.0.x), and the
// host's authenticate is held at a gate, so what is running, waiting and refused is seen while it is so.

interface Answer { status: number, retryAfter: string | undefined, body: string }

const A = '127.0.0.2'
const B = '127.0.0.3'
const C = '127.0.0.4'

t.test('truly parallel sign-ins: the cap, the fair share, a fast 503 with Retry-After, and every one answered', async (t) => {
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
  for (const a of refusedA) t.ok(Number(a.retryAfter) >= 1 && Number(a.retryAfter) <= 60, `Retry-After ${a.retryAfter}`)
  t.ok(refusedA.some((a) => a.body.includes('Sign-in is busy') && a.body.includes('<form')), 'a browser gets the login form with the message')
  t.ok(refusedA.some((a) => { try { return JSON.parse(a.body).code === 'FST_SR_SIGN_IN_BUSY' } catch { return false } }), 'a JSON client gets the code')

  // B fills the line (A's 1 + B's 3 = 4 waiting).
  const fromB = Array.from({ length: 3 }, (_, i) => post(B, `b-${i}`))
  await settled(13)
  // The line is full; C has had no turn lately, so A's newest waiter (A is the busiest) gives way to it.
  const fromC = post(C, TEACHER.password)
  await settled(14)
  t.equal(refusedA.length, 8, 'A\'s waiter gave way to C, refused with the same 503')
  // And one more from A finds no room: A is the busiest, so nobody gives way to it.
  const lastA = await post(A, 'a-late')
  t.equal(lastA.status, 503, 'a newcomer from the busiest address is refused at once')
  t.equal(running, 2)

  open()
  const all = await Promise.all([...fromA, ...fromB, fromC])
  t.equal(most, 2, 'at most 2 at once throughout')
  t.same(started.slice(2).map((s) => s.split(' ')[0]), [C, B, B, B], 'C (no turns lately) goes ahead of B, then B in order')
  t.equal(all.filter((a) => a.status === 401).length, 5, 'A\'s 2 and B\'s 3 were checked and answered')
  t.equal(all.filter((a) => a.status === 503).length, 8)
  t.equal((await fromC).status, 303, 'C signed in')
  t.equal(all.length + 1, arrived, 'every request was answered')
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

t.test('Retry-After is at most 60 s, however slow the checks', async (t) => {
  let now = 0
  const checks = new PasswordChecks({ concurrent: 1, waiting: 100, perAddress: 1000 }, () => now)
  // Very slow checks: 100 s each, as measured by the injected clock, so no wait fits MAX_WAIT_MS.
  for (let i = 0; i < 5; i++) {
    await checks.run(A, async () => { now += 100_000 })
  }
  let release: () => void = () => {}
  const running = checks.run(A, () => new Promise<void>((resolve) => { release = resolve }))
  const refused = await checks.run(A, async () => undefined).catch((err: { code: string, retryAfter: number }) => err)
  t.match(refused, { code: 'FST_SR_SIGN_IN_BUSY', retryAfter: 60 }, 'no place in line, and capped at 60 s')
  release()
  await running
})

t.test('the line takes on no more than MAX_WAIT_MS of waiting, at the pace of the checks so far', async (t) => {
  t.equal(MAX_WAIT_MS, 10_000)
  let now = 0
  // Room for 100 by count; the checks' pace decides how many of them wait.
  const checks = new PasswordChecks({ concurrent: 2, waiting: 100, perAddress: 1000 }, () => now)
  // Five checks of 1 s: the mean pace is 0.8^5 × 100 ms + (1 - 0.8^5) × 1000 ms = 705 ms, so 2 checks
  // get through 28 sign-ins in 10 s.
  for (let i = 0; i < 5; i++) await checks.run(A, async () => { now += 1000 })
  const holds: Array<() => void> = []
  const hold = () => new Promise<void>((resolve) => holds.push(resolve))
  const taken = Array.from({ length: 2 + 28 }, () => checks.run(A, hold))
  const over = await checks.run(A, hold).catch((err: { code: string, retryAfter: number }) => err)
  t.match(over, { code: 'FST_SR_SIGN_IN_BUSY', retryAfter: 11 }, 'the 31st is refused at once: (2 + 28) / 2 checks × 705 ms')
  t.equal(holds.length, 2, 'two run, 28 wait')
  // The line drains; each check here takes no time by the injected clock, so the pace quickens.
  while (holds.length > 0) {
    holds.shift()!()
    await new Promise((resolve) => setImmediate(resolve))
  }
  await Promise.all(taken)
  // 30 more instant checks: the mean is now 705 × 0.8^30 ≈ 0.9 ms, so the room is the count (100).
  // 11 s later, so that the refusal above no longer keeps A out of the last check (the members' lane).
  now += 11_000
  const more = Array.from({ length: 2 + 100 }, () => checks.run(A, hold))
  await t.rejects(checks.run(A, hold), { code: 'FST_SR_SIGN_IN_BUSY' }, 'past the count, refused')
  t.equal(holds.length, 2, 'two run, 100 wait: at a quick pace the count bounds the line')
  while (holds.length > 0) {
    holds.shift()!()
    await new Promise((resolve) => setImmediate(resolve))
  }
  await Promise.all(more)
})

t.test('a check\'s history fades: after a few minutes the address is light again', async (t) => {
  let now = 0
  const checks = new PasswordChecks({ concurrent: 1, waiting: 1, perAddress: 10 }, () => now)
  for (let i = 0; i < 20; i++) await checks.run(A, async () => undefined)
  let release: () => void = () => {}
  const first = checks.run(C, () => new Promise<void>((resolve) => { release = resolve }))
  const aWaits = checks.run(A, async () => 'a')
  // B has had no turn: A (20 turns lately) gives way.
  const bWaits = checks.run(B, async () => 'b')
  await t.rejects(aWaits, { code: 'FST_SR_SIGN_IN_BUSY' })
  release()
  await first
  t.equal(await bWaits, 'b')
  // Ten minutes on, A's 20 have faded below one turn: now A is the lighter, and B's waiter gives way to it.
  now += 10 * 60_000
  const hold = checks.run(C, () => new Promise<void>((resolve) => { release = resolve }))
  const bAgain = checks.run(B, async () => 'b')
  const aAgain = checks.run(A, async () => 'a')
  await t.rejects(bAgain, { code: 'FST_SR_SIGN_IN_BUSY' }, 'B, with a turn a moment ago, is the busier now')
  release()
  await hold
  t.equal(await aAgain, 'a')
})

t.test('busy addresses take turns: a school behind one address is not starved by a spraying one', async (t) => {
  const checks = new PasswordChecks({ concurrent: 1, waiting: 8, perAddress: 4 })
  const school = '198.51.100.1'
  const spray = '203.0.113.9'
  // Both have had many turns lately (more than perAddress): they stand alike.
  for (let i = 0; i < 10; i++) {
    await checks.run(school, async () => undefined)
    await checks.run(spray, async () => undefined)
  }
  const order: string[] = []
  let release: () => void = () => {}
  const hold = checks.run(C, () => new Promise<void>((resolve) => { release = resolve }))
  const queued = [
    ...[1, 2, 3].map((i) => checks.run(spray, async () => { order.push(`spray ${i}`) })),
    checks.run(school, async () => { order.push('school 1') })
  ]
  release()
  await hold
  await Promise.all(queued)
  t.same(order, ['school 1', 'spray 1', 'spray 2', 'spray 3'], 'the school, with fewer waiting, goes ahead of the spray\'s line')

  order.length = 0
  const hold2 = checks.run(C, () => new Promise<void>((resolve) => { release = resolve }))
  const alike = [checks.run(spray, async () => { order.push('spray') }), checks.run(school, async () => { order.push('school') })]
  release()
  await hold2
  await Promise.all(alike)
  t.same(order, ['spray', 'school'], 'equals: first come, first served')
})

t.test('refusals count: a member\'s first try goes ahead of spraying addresses that have had no turn yet', async (t) => {
  // The bench's spray (bench/lib/spray.mjs) found it: 50 addresses sending as fast as they are answered,
  // most of it refused, each waiting for its first turn, stood level with a member's first try, and the
  // member waited behind all of them (2.4 to 3.3 s). Their refusals now count as turns lately.
  const checks = new PasswordChecks({ concurrent: 1, waiting: 3, perAddress: 1 })
  const member = '198.51.100.7'
  const sprays = ['203.0.113.1', '203.0.113.2']
  const order: string[] = []
  let release: () => void = () => {}
  const hold = checks.run(C, () => new Promise<void>((resolve) => { release = resolve }))
  const queued = sprays.map((address) => checks.run(address, async () => { order.push(address) }))
  // Each sends again while its first waits: refused at once (its share is 1), and counted.
  for (const address of sprays) {
    for (let i = 0; i < 5; i++) await t.rejects(checks.run(address, async () => undefined), { code: 'FST_SR_SIGN_IN_BUSY' })
  }
  queued.push(checks.run(member, async () => { order.push(member) }))
  release()
  await hold
  await Promise.all(queued)
  t.same(order, [member, ...sprays], 'the member first, although it came last; then the spray, first come first served')
})

t.test('a lane for members: an address that sent 10 sign-ins lately may not take the last free check', async (t) => {
  // A clock that moves only when the test says: the sign-ins lately do not fade during the test.
  let now = 0
  const checks = new PasswordChecks({ concurrent: 2, waiting: 8, perAddress: 2 }, () => now)
  const spray = '203.0.113.1'
  const member = '198.51.100.7'
  const held: Array<() => void> = []
  const hold = () => new Promise<void>((resolve) => held.push(resolve))
  // With few sign-ins lately the spray is like anyone: it takes both checks.
  const first = [checks.run(spray, hold), checks.run(spray, hold)]
  t.equal(held.length, 2, 'both checks taken')
  // Refused (its share is 2): the line is under pressure.
  for (let i = 0; i < 7; i++) await t.rejects(checks.run(spray, async () => undefined), { code: 'FST_SR_SIGN_IN_BUSY' })
  held.shift()!()
  await first[0]
  // One check is free, but it is the last: the spray, at its 10th sign-in, waits for it.
  const sprayWaits = checks.run(spray, hold)
  t.equal(held.length, 1, 'the spray\'s next waits although a check is free')
  // A member's sign-in takes it at once, ahead of the spray's waiter.
  let memberStarted = false
  const memberDone = checks.run(member, async () => { memberStarted = true })
  t.ok(memberStarted, 'the member\'s check starts at once')
  await memberDone
  t.equal(held.length, 1, 'with the member done, the spray still has all but one check: the one it holds')
  held.shift()!()
  await first[1]
  t.equal(held.length, 1, 'its own check done, the spray\'s waiter starts: nothing waits for ever')
  held.shift()!()
  await sprayWaits
  t.equal(held.length, 0)

  // The lane holds only under pressure: 11 s after the last refusal, the spray (still past 10 sign-ins
  // lately) takes both checks again.
  for (let i = 0; i < 20; i++) await checks.run(spray, async () => undefined)
  now = 11_000
  const again = [checks.run(spray, hold), checks.run(spray, hold)]
  t.equal(held.length, 2, 'no refusal for 10 s: no lane')
  held.shift()!()
  held.shift()!()
  await Promise.all(again)

  // And a school's burst that fits the line (12 from one address, none refused) keeps both checks.
  const roomy = new PasswordChecks({ concurrent: 2, waiting: 16, perAddress: 20 }, () => now)
  const burst = Array.from({ length: 12 }, () => roomy.run('198.51.100.1', hold))
  t.equal(held.length, 2, 'both checks run the school\'s sign-ins')
  for (let done = 1; done <= 12; done++) {
    held.shift()!()
    await new Promise((resolve) => setImmediate(resolve))
    if (held.length !== Math.min(2, 12 - done)) t.fail(`${held.length} running after ${done} done`)
  }
  await Promise.all(burst)
  t.pass('two at a time to the end')
})

t.test('addresses: one /64 is one share (clientKey, test/sign-in/limits.test.ts), and the memory of idle addresses is bounded', async (t) => {
  const checks = new PasswordChecks({ concurrent: 1, waiting: 1, perAddress: 1 })
  const held: Array<() => void> = []
  // One /64 is one share: a second address in it is refused while the first is checked.
  const first = checks.run('2001:db8:0:1::1', () => new Promise<void>((resolve) => held.push(resolve)))
  await t.rejects(checks.run('2001:db8:0:1::2', async () => undefined), { code: 'FST_SR_SIGN_IN_BUSY' })
  held[0]()
  await first
  for (let i = 0; i < 10_050; i++) await checks.run(`10.0.${i >> 8}.${i & 255}`, async () => undefined)
  t.pass('10,050 addresses seen; the idle ones are forgotten past 10,000')
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
  t.same(passwordCheckDefaults({}), { concurrent: 2, waiting: 512, perAddress: 386 })
  t.same(passwordCheckDefaults({ UV_THREADPOOL_SIZE: '16' }), { concurrent: 8, waiting: 2048, perAddress: 1542 })
  t.same(passwordCheckDefaults({ UV_THREADPOOL_SIZE: '1' }), { concurrent: 1, waiting: 256, perAddress: 193 })
  t.same(passwordCheckDefaults({ UV_THREADPOOL_SIZE: 'many' }), passwordCheckDefaults({}))
})

t.test('a known browser takes turns of its own, not its address\'s', async (t) => {
  const checks = new PasswordChecks({ concurrent: 1, waiting: 8, perAddress: 4 })
  const order: string[] = []
  let release: () => void = () => {}
  const hold = checks.run(A, () => new Promise<void>((resolve) => { release = resolve }))
  const queued = [
    ...[1, 2, 3].map((i) => checks.run(A, async () => { order.push(`A ${i}`) })),
    checks.run(A, async () => { order.push('device') }, 'nonce-1')
  ]
  // A has four of its four places (perAddress); the browser's own place is not one of them.
  await t.rejects(checks.run(A, async () => undefined), { code: 'FST_SR_SIGN_IN_BUSY' }, 'the address is full')
  release()
  await hold
  await Promise.all(queued)
  t.same(order, ['device', 'A 1', 'A 2', 'A 3'], 'the browser, with no turns of its own, goes ahead of its address\'s line')
})
