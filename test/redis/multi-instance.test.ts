import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { RedisAttemptStore, RedisSessionStore } from '../../lib/stores/redis/index.js'
import { signInLimitKeys } from '../../lib/index.js'
import { buildTestApp, openLoginForm, postLogin, signIn, signOut, TEACHER } from '../helpers/app.js'
import { REDIS_URL, requireRedis, uniquePrefix, deleteKeys, listKeys, connectedClient } from '../helpers/redis.js'

// Two instances of a host app (each with its own Redis connection, as two processes would have) behind
// one Redis. Keys live under a prefix of this run and are deleted afterwards.

const maths = '/schools/resources/resources/maths/'

async function instance (t: Test, prefix: string, opts: { maxAge?: number, maxAttempts?: number, rateMax?: number, deviceSecret?: string, authenticate?: () => Promise<null> } = {}): Promise<FastifyInstance> {
  const client = await connectedClient(t, REDIS_URL!)
  const { app } = await buildTestApp({
    session: {
      store: new RedisSessionStore(client, { prefix: `${prefix}sess:` }),
      saveUninitialized: false,
      cookie: { secure: false, maxAge: opts.maxAge ?? 60_000 }
    },
    plugin: {
      ...(opts.authenticate === undefined ? {} : { authenticate: opts.authenticate }),
      lockout: { store: new RedisAttemptStore(client, { prefix: `${prefix}attempts:` }), maxAttempts: opts.maxAttempts ?? 10, deviceSecret: opts.deviceSecret },
      loginRateLimit: { store: new RedisAttemptStore(client, { prefix: `${prefix}rate:` }), max: opts.rateMax ?? 1000 }
    }
  })
  t.teardown(() => app.close())
  return app
}

if (requireRedis(t)) {
  t.test('1,000 views of the login form write no key to Redis; sign-in writes the session', async (t) => {
    const prefix = uniquePrefix('form-views')
    const admin = await connectedClient(t, REDIS_URL!)
    t.teardown(() => deleteKeys(admin, prefix))
    const app = await instance(t, prefix)
    let failed = 0
    for (let i = 0; i < 1000; i++) if ((await app.inject({ url: '/Security/login', headers: i % 2 === 0 ? {} : { accept: 'application/json' } })).statusCode !== 200) failed++
    t.equal(failed, 0, '1,000 form views answered')
    t.same(await listKeys(admin, prefix), [], 'keys written by 1,000 form views: 0')
    await signIn(app)
    const keys = await listKeys(admin, prefix)
    t.same(keys.map((k) => k.slice(prefix.length).replace(/:(?!sessions:).*/, '')).sort(), ['attempts:sessions', 'sess'],
      'sign-in writes the session and its count of new sessions (lockout.maxNewSessionsPerMinute); failures are not counted for a success')
  })

  t.test('a visitor signed in on instance A is signed in on B; signed out on B, A lets them in no more', async (t) => {
    const prefix = uniquePrefix('multi')
    const admin = await connectedClient(t, REDIS_URL!)
    t.teardown(() => deleteKeys(admin, prefix))
    const a = await instance(t, prefix)
    const b = await instance(t, prefix)

    const cookie = await signIn(a)
    const onB = await b.inject({ url: maths, headers: { cookie } })
    t.equal(onB.statusCode, 200, 'B serves the category page to the session made on A')
    t.match(onB.body, 'Ada Teacher')

    const sessionKeys = await listKeys(admin, `${prefix}sess:`)
    t.equal(sessionKeys.length, 1, 'one session in Redis')
    const ttl = await admin.pTTL(sessionKeys[0])
    t.ok(ttl > 50_000 && ttl <= 60_000, `the session's TTL (${ttl} ms) is the cookie's maxAge (60 s)`)

    const out = await signOut(b, cookie)
    t.equal(out.statusCode, 303)
    t.equal(await admin.exists(sessionKeys[0]), 0, 'the session is gone from Redis')
    const onA = await a.inject({ url: maths, headers: { cookie } })
    t.equal(onA.statusCode, 302, 'A no longer lets the visitor in')
    t.match(onA.headers.location, '/Security/login?BackURL=')
  })

  t.test('sessions expire in Redis with their cookies', async (t) => {
    const prefix = uniquePrefix('ttl')
    const admin = await connectedClient(t, REDIS_URL!)
    t.teardown(() => deleteKeys(admin, prefix))
    const a = await instance(t, prefix, { maxAge: 1000 })
    const cookie = await signIn(a)
    const [key] = await listKeys(admin, `${prefix}sess:`)
    t.ok(await admin.pTTL(key) <= 1000, 'TTL of at most the cookie maxAge of 1 s')
    await new Promise((resolve) => setTimeout(resolve, 1300))
    t.equal(await admin.exists(key), 0, 'expired in Redis: nothing piles up')
    t.equal((await a.inject({ url: maths, headers: { cookie } })).statusCode, 302)
  })

  t.test('a lockout earned on A holds on B; the rate limit counts both', async (t) => {
    const prefix = uniquePrefix('lockout')
    const admin = await connectedClient(t, REDIS_URL!)
    t.teardown(() => deleteKeys(admin, prefix))
    const a = await instance(t, prefix, { maxAttempts: 3 })
    const b = await instance(t, prefix, { maxAttempts: 3 })

    const statuses: number[] = []
    for (let i = 0; i < 3; i++) statuses.push((await postLogin(a, { email: TEACHER.email, password: 'wrong' })).statusCode)
    t.same(statuses, [401, 401, 429], 'three failures on A lock the username for this address')
    const onB = await postLogin(b, { email: TEACHER.email, password: TEACHER.password })
    t.equal(onB.statusCode, 429, 'B refuses the right password from that address while the lock holds')
    t.ok(Number(onB.headers['retry-after']) > 0)
    const held = await admin.pTTL(`${prefix}attempts:${signInLimitKeys(TEACHER.email, '127.0.0.1').usernameAndAddress}`)
    t.ok(held > 14 * 60_000, `the count is held for the lockout duration (${held} ms)`)

    // Another username is not affected, nor this one from another address.
    t.equal((await postLogin(b, { email: 'other@example.org', password: 'x' })).statusCode, 401)
    const elsewhere = await postLogin(b, { email: TEACHER.email, password: TEACHER.password }, { remoteAddress: '198.51.100.9' })
    t.equal(elsewhere.statusCode, 303, 'the owner signs in from another address')
  })

  t.test('200 wrong passwords from one address, 30 at a time, through 3 instances: at most 50 checked', async (t) => {
    const prefix = uniquePrefix('reserve')
    const admin = await connectedClient(t, REDIS_URL!)
    t.teardown(() => deleteKeys(admin, prefix))
    let checked = 0
    let inFlight = 0
    let most = 0
    // A password check that takes a moment, so that checks on the three instances overlap.
    const authenticate = async () => {
      checked++
      most = Math.max(most, ++inFlight)
      await new Promise((resolve) => setTimeout(resolve, 20))
      inFlight--
      return null
    }
    const apps = await Promise.all([0, 1, 2].map(() => instance(t, prefix, { rateMax: 50, maxAttempts: 1000, authenticate })))
    const forms = await Promise.all(apps.map((app) => openLoginForm(app)))
    const statuses: number[] = []
    for (let sent = 0; sent < 200; sent += 30) {
      const batch = Array.from({ length: Math.min(30, 200 - sent) }, (_, i) => {
        const n = sent + i
        // A spray: another username each time, so only the address limit holds it.
        return postLogin(apps[n % 3], { email: `guess-${n}@example.org`, password: 'wrong' }, { form: forms[n % 3], remoteAddress: '203.0.113.9' })
      })
      statuses.push(...(await Promise.all(batch)).map((res) => res.statusCode))
    }
    t.ok(checked <= 50, `passwords checked: ${checked} (at most 50; one instance alone checks 50)`)
    t.ok(checked >= 45, 'and the limit is not held far below itself')
    t.ok(most > 1, `checks overlapped (${most} at once)`)
    t.equal(statuses.filter((s) => s === 401).length, checked, 'every check a 401')
    t.equal(statuses.filter((s) => s === 429).length, 200 - checked, 'the rest refused by the address limit')
    const count = await admin.get(`${prefix}rate:${signInLimitKeys('x', '203.0.113.9').address}`)
    t.equal(Number(count), checked, 'the count in Redis says the same')
  })

  t.test('the login rate limit is shared: attempts on A and B count together', async (t) => {
    const prefix = uniquePrefix('rate')
    const admin = await connectedClient(t, REDIS_URL!)
    t.teardown(() => deleteKeys(admin, prefix))
    const a = await instance(t, prefix, { rateMax: 4 })
    const b = await instance(t, prefix, { rateMax: 4 })
    const statuses: number[] = []
    for (const app of [a, b, a, b, a]) statuses.push((await postLogin(app, { email: 'x@example.org', password: 'wrong' })).statusCode)
    t.same(statuses, [401, 401, 401, 401, 429], 'after four failures from one address, on either instance, the fifth sign-in is refused')
  })

  t.test('a browser known to A is known to B when both have the same deviceSecret, and only then', async (t) => {
    const prefix = uniquePrefix('device')
    const admin = await connectedClient(t, REDIS_URL!)
    t.teardown(() => deleteKeys(admin, prefix))
    const deviceSecret = 'a-device-secret-shared-by-every-instance'
    const a = await instance(t, prefix, { maxAttempts: 2, rateMax: 2, deviceSecret })
    const b = await instance(t, prefix, { maxAttempts: 2, rateMax: 2, deviceSecret })
    const c = await instance(t, prefix, { maxAttempts: 2, rateMax: 2 })
    const known = await postLogin(a, { email: TEACHER.email, password: TEACHER.password }, { remoteAddress: '198.51.100.7' })
    const device = known.cookies.find((cookie) => cookie.name === 'sr_device')!
    // A stranger at the school's address spends its failures and locks the teacher there.
    for (let i = 0; i < 2; i++) await postLogin(b, { email: TEACHER.email, password: 'wrong' }, { remoteAddress: '203.0.113.7' })
    const withDevice = async (app: FastifyInstance) => {
      const form = await openLoginForm(app)
      return (await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { remoteAddress: '203.0.113.7', form: { ...form, cookie: `${form.cookie}; sr_device=${device.value}` } })).statusCode
    }
    t.equal(await withDevice(b), 303, 'B knows the browser A signed in: the lock on the address does not hold it')
    t.equal(await withDevice(c), 429, 'an instance without the key does not, and the lock holds')
  })

  t.test('the stores clean up after themselves: nothing of this run is left', async (t) => {
    const admin = await connectedClient(t, REDIS_URL!)
    const prefix = uniquePrefix('empty')
    const a = await instance(t, prefix)
    await signIn(a)
    t.ok((await listKeys(admin, prefix)).length > 0)
    t.ok(await deleteKeys(admin, prefix) > 0)
    t.same(await listKeys(admin, prefix), [])
  })
}
