import { createHmac } from 'node:crypto'
import t from 'tap'
import { MemoryAttemptStore, type AttemptCount, type AttemptStore } from '../../lib/stores/attempt-store.js'
import { SignInLimits, signInLimitKeys, type LockoutSettings, type Turn } from '../../lib/sign-in/limits.js'
import { DeviceCookies, MAX_DEVICE_ENTRIES } from '../../lib/sign-in/device-cookie.js'
import { clientKey } from '../../lib/sign-in/client-address.js'
import { MAX_WAITING_PER_USERNAME, Turns } from '../../lib/sign-in/turns.js'
import { signInLimitKeys as exported } from '../../lib/index.js'
import { placesKey } from '../../lib/stores/redis/attempt-store.js'
import { buildTestApp, capturedLogs } from '../helpers/app.js'

// The limits on their own, with the order of events under the test's control: what a sign-in does while
// another one's check is in flight, ends, or ends while the first is reading the counts.

const SECRET = 'a-device-secret-of-at-least-32-characters'

function lockout (overrides: Partial<LockoutSettings> = {}): LockoutSettings {
  return {
    maxAttempts: 10,
    maxPerUsername: 100,
    windowMs: 60_000,
    durationMs: 120_000,
    maxConcurrent: 10,
    store: new MemoryAttemptStore(),
    deviceSecret: SECRET,
    deviceMaxAgeMs: 60_000,
    maxNewSessionsPerMinute: 120,
    ...overrides
  }
}

function started (turn: Turn | { refused: unknown }): Turn {
  if (turn.refused !== undefined) throw new Error('refused')
  return turn as Turn
}

/** A store whose reads can be held at a gate, to end another check while a read is in flight. */
class GatedStore extends MemoryAttemptStore {
  gate: Promise<void> | undefined
  reads = 0
  override async get (key: string): Promise<AttemptCount | undefined> {
    this.reads++
    const answer = await super.get(key)
    await this.gate
    return answer
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

/** A store without reserve() and release(): the checks in flight are then kept by this process (Turns). */
function perProcess<S extends AttemptStore> (store: S): S {
  return Object.assign(store, { reserve: undefined, release: undefined })
}

for (const [where, kept] of [['places in the store', <S extends AttemptStore>(store: S) => store], ['per process', perProcess]] as const) {
  t.test(`a sign-in waits while the checks in flight could use up what is left, then looks again (${where})`, async (t) => {
    const limits = new SignInLimits(lockout({ maxAttempts: 2, store: kept(new MemoryAttemptStore()) }), undefined)
    const first = started(await limits.begin('ann@example.org', '192.0.2.1', undefined))
    const second = started(await limits.begin('ann@example.org', '192.0.2.1', undefined))
    let third: Turn | { refused: unknown } | undefined
    const waiting = limits.begin('ann@example.org', '192.0.2.1', undefined).then((turn) => { third = turn })
    await tick()
    t.equal(third, undefined, 'two checks in flight, two failures left: the third waits')
    t.equal(await first.fail(), undefined, 'the first fails (one failure left)')
    await tick()
    t.equal(third, undefined, 'one failure left and one check in flight: still waiting')
    t.same(await second.succeed() !== undefined, true, 'the second succeeds (and forgets the failure)')
    await waiting
    t.equal(third!.refused, undefined, 'then the third gets its turn')
    const lock = await (third as Turn).fail()
    t.equal(lock, undefined, 'one failure of two: no lock')
  })

  t.test(`a check that ends while another sign-in reads the counts is not missed (${where})`, async (t) => {
    const store = kept(new GatedStore())
    const limits = new SignInLimits(lockout({ maxAttempts: 1, store }), undefined)
    const first = started(await limits.begin('ann@example.org', '192.0.2.1', undefined))
    let open: () => void = () => {}
    store.gate = new Promise((resolve) => { open = resolve })
    const reads = store.reads
    const second = limits.begin('ann@example.org', '192.0.2.1', undefined)
    await tick()
    t.ok(store.reads > reads, 'the second is reading')
    store.gate = undefined
    const lock = await first.fail()
    t.ok(lock !== undefined && lock.reason === 'locked', 'the first failure locks (maxAttempts 1)')
    open()
    const answer = await second
    t.equal(answer.refused?.reason, 'locked', 'the second read again and found the lock, instead of checking an 11th password')
  })
}

t.test('at most maxConcurrent checks of one username at once; first come, first served', async (t) => {
  const limits = new SignInLimits(lockout({ maxConcurrent: 2 }), undefined)
  const a = started(await limits.begin('ann@example.org', '192.0.2.1', undefined))
  const b = started(await limits.begin('Ann@Example.org ', '192.0.2.2', undefined))
  const order: string[] = []
  const c = limits.begin('ann@example.org', '192.0.2.3', undefined).then((turn) => { order.push('c'); return started(turn) })
  const d = limits.begin('ann@example.org', '192.0.2.4', undefined).then((turn) => { order.push('d'); return started(turn) })
  const other = started(await limits.begin('bob@example.org', '192.0.2.1', undefined))
  await tick()
  t.same(order, [], 'two in flight: c and d wait (another username does not)')
  a.end()
  a.end()
  await tick()
  t.same(order, ['c'], 'one ended (twice, counted once): c gets its turn')
  await b.succeed()
  await tick()
  t.same(order, ['c', 'd'])
  ;(await c).end()
  ;(await d).end()
  other.end()
})

t.test('the address limit, the username and address lock, the username ceiling', async (t) => {
  const store = new MemoryAttemptStore()
  const limits = new SignInLimits(lockout({ maxAttempts: 2, maxPerUsername: 3, store }), { max: 4, timeWindow: 30_000, store })
  const fail = async (user: string, ip: string) => {
    const turn = await limits.begin(user, ip, undefined)
    return turn.refused?.reason ?? (await (turn as Turn).fail())?.reason ?? 'failed'
  }
  t.same([await fail('ann', '192.0.2.1'), await fail('ann', '192.0.2.1'), await fail('ann', '192.0.2.1')], ['failed', 'locked', 'locked'],
    'two failures lock ann from 192.0.2.1')
  t.equal(await fail('ann', '192.0.2.2'), 'locked', 'the third from another address reaches the ceiling of 3')
  const ceiling = await limits.begin('ann', '192.0.2.3', undefined)
  t.equal(ceiling.refused?.reason, 'locked', 'then ann is locked from every address')
  t.ok(ceiling.refused!.until.getTime() > Date.now() + 100_000, 'for durationMs')
  t.equal(await fail('bob', '192.0.2.1'), 'failed', 'the address has two failures left (4 per window)')
  t.equal(await fail('dave', '192.0.2.1'), 'failed', 'the last one is a plain failure')
  const limited = await limits.begin('carol', '192.0.2.1', undefined)
  t.equal(limited.refused?.reason, 'address', 'then the address is refused')
  t.ok(limited.refused!.until.getTime() <= Date.now() + 30_000, 'until its window ends')
  const keys = signInLimitKeys('  ANN ', '192.0.2.1')
  t.same(keys, { username: 'user:ann', usernameAndAddress: 'user-address:192.0.2.1|ann', address: 'address:192.0.2.1' })
  t.equal(exported, signInLimitKeys, 'exported for operators')
  t.equal((await store.get(keys.usernameAndAddress))?.count, 2)
  await store.reset(keys.username)
  await store.reset(keys.usernameAndAddress)
  await store.reset(keys.address)
  t.equal((await limits.begin('ann', '192.0.2.1', undefined)).refused, undefined, 'reset clears the locks and the address limit')
})

t.test('a browser that signed in before is judged by its own failures', async (t) => {
  const store = new MemoryAttemptStore()
  const limits = new SignInLimits(lockout({ maxAttempts: 2, maxPerUsername: 2, store }), { max: 2, timeWindow: 30_000, store })
  const signIn = async (user: string, ip: string, cookie?: string) => started(await limits.begin(user, ip, cookie)).succeed()
  const cookie = await signIn('ann', '198.51.100.1')
  t.ok(typeof cookie === 'string', 'a device cookie at sign-in')
  // Strangers use up the address budget and lock ann everywhere.
  for (const ip of ['192.0.2.1', '192.0.2.1']) await started(await limits.begin('ann', ip, undefined)).fail()
  t.equal((await limits.begin('ann', '192.0.2.1', undefined)).refused?.reason, 'address')
  t.equal((await limits.begin('ann', '198.51.100.9', undefined)).refused?.reason, 'locked', 'unknown browsers are locked out of ann')
  t.equal(await signIn('ann', '192.0.2.1', cookie), cookie, 'the known browser signs in, from the refused address too')
  t.equal((await limits.begin('bob', '192.0.2.1', cookie)).refused?.reason, 'address', 'the cookie is for ann only')

  // Failures from the known browser count against it alone; past maxAttempts it is a stranger again.
  const turn1 = started(await limits.begin('ann', '192.0.2.1', cookie))
  t.equal(await turn1.fail(), undefined)
  const turn2 = started(await limits.begin('ann', '192.0.2.1', cookie))
  t.equal(await turn2.fail(), undefined, 'no lock is claimed for the browser: it is just no longer known')
  t.equal((await limits.begin('ann', '192.0.2.1', cookie)).refused?.reason, 'address', 'then the address decides')
})

const DAYS_30 = 30 * 24 * 60 * 60 * 1000

t.test('device cookies: signed, per username, at most five, bounded', async (t) => {
  const devices = new DeviceCookies(SECRET, DAYS_30)
  let cookie = ''
  for (let i = 0; i < MAX_DEVICE_ENTRIES + 2; i++) cookie = devices.remember(cookie, `user${i}`)
  t.equal(cookie.split('~').length, MAX_DEVICE_ENTRIES, 'a classroom computer remembers the last five members')
  t.ok(devices.known(cookie, 'user6') !== undefined)
  t.equal(devices.known(cookie, 'user0'), undefined, 'the oldest is forgotten')
  const later = Date.now() + 5000
  const again = devices.remember(cookie, 'user3', later)
  t.equal(again.split('~')[0].split('.')[0], cookie.split('~')[3].split('.')[0], 'signing in again moves the entry first, with its nonce')
  t.not(again.split('~')[0], cookie.split('~')[3], 'issued again')
  t.same(again.split('~').slice(1), cookie.split('~').filter((_, i) => i !== 3), 'the others unchanged')
  const tampered = cookie.replace(/.(~|$)/, (m) => (m[0] === 'A' ? 'B' : 'A') + m.slice(1))
  t.equal(devices.known(tampered, 'user6'), undefined, 'a changed signature is refused')
  t.equal(new DeviceCookies(undefined, DAYS_30).known(cookie, 'user6'), undefined, 'another key (a process without deviceSecret) does not know it')
  t.equal(new DeviceCookies(SECRET, DAYS_30).known(cookie, 'user6'), devices.known(cookie, 'user6'), 'the same key on another instance does')
  for (const junk of [undefined, 42, '', 'x'.repeat(400), 'a.b', `${cookie}~${cookie.split('~')[0]}`]) {
    t.equal(devices.known(junk, 'user6'), undefined, `junk: ${String(junk).slice(0, 20)}`)
  }
  t.equal(devices.known(`garbage~${cookie.split('~')[0]}`, 'user6'), devices.known(cookie, 'user6'), 'a bad entry beside a good one is skipped')
})

t.test('device cookies: refused past their maximum age, and in the format before the issue time', async (t) => {
  const devices = new DeviceCookies(SECRET, 60_000)
  const issued = Date.now()
  const cookie = devices.remember('', 'ann', issued)
  t.type(devices.known(cookie, 'ann', issued + 58_000), 'string', 'within its age: known')
  t.equal(devices.known(cookie, 'ann', issued + 61_000), undefined, 'past it: an unknown browser')
  t.equal(devices.known(cookie, 'ann', issued - 120_000), undefined, 'issued further ahead than clocks differ')
  const [nonce, , mac] = cookie.split('.')
  const moved = `${nonce}.${Math.floor((issued + 60_000) / 1000).toString(36)}.${mac}`
  t.equal(devices.known(moved, 'ann', issued + 61_000), undefined, 'the issue time is under the HMAC: moved on, the entry is refused')
  // The format before the issue time: nonce.HMAC(username + "\n" + nonce), signed with the same key.
  const old = `${nonce}.${createHmac('sha256', SECRET).update(`ann\n${nonce}`).digest('base64url')}`
  t.equal(devices.known(old, 'ann', issued), undefined, 'an entry of the format before: an unknown browser')
  t.equal(devices.remember(old, 'ann', issued).split('~').length, 1, 'which the next sign-in replaces')
  const expired = devices.remember(`${cookie}~${devices.remember('', 'bob', issued + 30_000)}`, 'ann', issued + 61_000)
  t.not(expired.split('.')[0], nonce, 'an expired entry is not renewed: a new nonce, so its count starts afresh')
  t.equal(expired.split('~').length, 2, 'the expired entry is dropped, the young one of another member kept')
  t.type(devices.known(expired, 'bob', issued + 61_000), 'string')
})

t.test('client keys: IPv4 as is, IPv4-mapped as IPv4, IPv6 per /64', async (t) => {
  t.equal(clientKey('192.0.2.1'), '192.0.2.1')
  t.equal(clientKey('::ffff:192.0.2.1'), '192.0.2.1')
  t.equal(clientKey('::FFFF:c000:0201'), '192.0.2.1')
  t.equal(clientKey('2001:db8:1:2::1'), '2001:db8:1:2::/64')
  t.equal(clientKey('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff%eth0'), '2001:db8:1:2::/64')
  t.equal(clientKey('::1'), '0:0:0:0::/64')
  t.equal(clientKey('::'), '0:0:0:0::/64')
  t.equal(clientKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64')
  t.equal(clientKey(undefined), 'unknown')
  t.equal(clientKey('not an address'), 'unknown')
})

t.test('the line per username is bounded: past MAX_WAITING_PER_USERNAME waiting, a busy 503 at once, and nobody is lost', async (t) => {
  const turns = new Turns(10)
  for (let i = 0; i < 10; i++) await turns.take('shared@example.org')
  let served = 0
  const waiting = Array.from({ length: MAX_WAITING_PER_USERNAME }, () => turns.take('shared@example.org').then(() => { served++ }))
  await t.rejects(turns.take('shared@example.org'), { code: 'FST_SR_SIGN_IN_BUSY', statusCode: 503, retryAfter: 5 })
  // Another username has a line of its own.
  await turns.take('other@example.org')
  // Each turn given back lets exactly one waiter in, first come first served, until all are in.
  for (let i = 0; i < MAX_WAITING_PER_USERNAME; i++) turns.give('shared@example.org')
  await Promise.all(waiting)
  t.equal(served, MAX_WAITING_PER_USERNAME, 'every waiter got its turn')
})

t.test('a store without reserve() and release(): one start-up line, and the section still starts', async (t) => {
  const plain = perProcess(new MemoryAttemptStore())
  const logs = capturedLogs()
  const { app } = await buildTestApp({ fastify: { logger: logs.logger }, plugin: { lockout: { store: plain } } })
  t.teardown(() => app.close())
  const lines = logs.withCode('FST_SR_NO_STORE_RESERVATIONS')
  t.equal(lines.length, 1)
  t.match(lines[0].msg, /has no reserve\(\) and release\(\), so each process keeps its own checks in flight/)
  const quiet = capturedLogs()
  const other = await buildTestApp({ fastify: { logger: quiet.logger } })
  t.teardown(() => other.app.close())
  t.same(quiet.withCode('FST_SR_NO_STORE_RESERVATIONS'), [], 'the default memory store reserves: nothing to say')
  const loginOnly = capturedLogs()
  const third = await buildTestApp({ fastify: { logger: loginOnly.logger }, plugin: { lockout: false, loginRateLimit: { store: perProcess(new MemoryAttemptStore()) } } })
  t.teardown(() => third.app.close())
  t.equal(loginOnly.withCode('FST_SR_NO_STORE_RESERVATIONS').length, 1, 'the address limit\'s own store too')
})

t.test('the places of a count live in its Cluster hash slot', async (t) => {
  t.equal(placesKey('schools-resources:attempts:user:ann'), '{schools-resources:attempts:user:ann}:in-flight', 'the whole key as the tag')
  t.equal(placesKey('{site}attempts:user:ann'), '{site}attempts:user:ann:in-flight', 'a tag of the key kept')
  t.equal(placesKey('attempts:user:a}b'), 'attempts:user:a}b:in-flight', 'a stray brace: beside it')
  t.equal(placesKey('attempts:user:{}x'), 'attempts:user:{}x:in-flight', 'an empty tag is no tag, and cannot be wrapped')
})

t.test('a browser that signed in before takes a turn of its own: a flood on the username does not answer it 503', async (t) => {
  const limits = new SignInLimits(lockout({ maxConcurrent: 1, maxPerUsername: 10_000, maxAttempts: 10_000 }), undefined)
  const cookie = new DeviceCookies(SECRET, 60_000).remember('', 'ann@example.org')
  // The flood: one check running, the username's line full.
  const running = started(await limits.begin('ann@example.org', '198.51.100.1', undefined))
  const flood = Array.from({ length: MAX_WAITING_PER_USERNAME }, (_, i) => limits.begin('ann@example.org', `198.51.100.${i + 2}`, undefined))
  await tick()
  await t.rejects(limits.begin('ann@example.org', '198.51.100.250', undefined), { code: 'FST_SR_SIGN_IN_BUSY' }, 'a stranger past the full line: 503')
  const own = started(await limits.begin('ann@example.org', '192.0.2.7', cookie))
  t.type(own.device, 'string', 'the known browser gets its turn at once, judged by its own failures')
  t.type(await own.succeed(), 'string')
  running.end()
  for (const waiting of flood) started(await waiting).end()
})
