import t from 'tap'
import { MemoryAttemptStore } from '../../lib/stores/attempt-store.js'
import { TEACHER, buildTestApp, postLogin } from '../helpers/app.js'

function attempt (app: Awaited<ReturnType<typeof buildTestApp>>['app'], email: string, password: string) {
  return postLogin(app, { email, password })
}

const withoutToken = (body: string) => body.replace(/name="_csrf" value="[^"]+"/g, '')

t.test('ten failures lock the username for 15 minutes, even for the right password', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  for (let i = 1; i <= 9; i++) {
    const res = await attempt(app, TEACHER.email, `wrong-${i}`)
    t.equal(res.statusCode, 401, `failure ${i}`)
  }
  const tenth = await attempt(app, TEACHER.email, 'wrong-10')
  t.equal(tenth.statusCode, 429, 'the tenth failure locks')
  t.match(tenth.body, /role="alert"[^>]*>Too many failed sign-in attempts\. Try again after \d\d:\d\d [AP]M UTC\.</)
  const retryAfter = Number(tenth.headers['retry-after'])
  t.ok(retryAfter > 14 * 60 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}s`)
  // English's short time (timeZone UTC by default), as Intl writes it: "09:05 PM UTC".
  const until = new Date(Date.now() + retryAfter * 1000).toLocaleTimeString('en', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' })
  t.match(tenth.body, until.slice(0, 4), 'the page says when')
  const right = await attempt(app, TEACHER.email, TEACHER.password)
  t.equal(right.statusCode, 429, 'the right password is refused while locked')
  t.notMatch(String(right.headers['set-cookie'] ?? ''), 'sessionId=', 'and no session is started')
  const differentCase = await attempt(app, '  Teacher@EXAMPLE.org ', TEACHER.password)
  t.equal(differentCase.statusCode, 429, 'the username is matched without case or spaces')
})

t.test('unknown usernames are counted and answered exactly like known ones', async (t) => {
  const { app } = await buildTestApp({ plugin: { lockout: { maxAttempts: 3 } } })
  t.teardown(() => app.close())
  const known: string[] = []
  const unknown: string[] = []
  for (let i = 0; i < 4; i++) {
    const a = await attempt(app, TEACHER.email, 'wrong')
    const b = await attempt(app, 'nobody@example.org', 'wrong')
    t.equal(a.statusCode, b.statusCode, `attempt ${i + 1}: same status`)
    known.push(`${a.statusCode} ${withoutToken(a.body).replace(TEACHER.email, 'EMAIL').replace(/\d\d:\d\d [AP]M UTC/, 'T')}`)
    unknown.push(`${b.statusCode} ${withoutToken(b.body).replace('nobody@example.org', 'EMAIL').replace(/\d\d:\d\d [AP]M UTC/, 'T')}`)
  }
  t.same(unknown, known, 'identical pages')
  t.same(known.map((k) => k.slice(0, 3)), ['401', '401', '429', '429'])
})

t.test('a successful sign-in resets the count', async (t) => {
  const { app } = await buildTestApp({ plugin: { lockout: { maxAttempts: 3 } } })
  t.teardown(() => app.close())
  for (let round = 0; round < 3; round++) {
    t.equal((await attempt(app, TEACHER.email, 'wrong')).statusCode, 401)
    t.equal((await attempt(app, TEACHER.email, 'wrong')).statusCode, 401)
    t.equal((await attempt(app, TEACHER.email, TEACHER.password)).statusCode, 303, `round ${round}: two failures then success`)
  }
})

t.test('the lock ends after its duration; the numbers are options', async (t) => {
  let now = Date.now()
  const store = new MemoryAttemptStore({ now: () => now })
  const { app } = await buildTestApp({ plugin: { lockout: { maxAttempts: 2, windowMs: 60_000, durationMs: 120_000, store } } })
  t.teardown(() => app.close())
  await attempt(app, TEACHER.email, 'wrong')
  t.equal((await attempt(app, TEACHER.email, 'wrong')).statusCode, 429)
  now += 119_000
  t.equal((await attempt(app, TEACHER.email, TEACHER.password)).statusCode, 429, 'still locked just before the end')
  now += 2_000
  t.equal((await attempt(app, TEACHER.email, TEACHER.password)).statusCode, 303, 'free again after it')
})

t.test('lockout: false turns it off', async (t) => {
  const { app } = await buildTestApp({ plugin: { lockout: false, loginRateLimit: false } })
  t.teardown(() => app.close())
  for (let i = 0; i < 12; i++) await attempt(app, TEACHER.email, 'wrong')
  t.equal((await attempt(app, TEACHER.email, TEACHER.password)).statusCode, 303)
})

t.test('bad lockout options fail at startup', async (t) => {
  for (const [lockout, name] of [
    [{ maxAttempts: 0 }, 'lockout.maxAttempts'],
    [{ windowMs: 1.5 }, 'lockout.windowMs'],
    [{ durationMs: '15m' }, 'lockout.durationMs'],
    [{ store: {} }, 'lockout.store'],
    [{ maxPerUsername: 0 }, 'lockout.maxPerUsername'],
    [{ maxConcurrent: 1.5 }, 'lockout.maxConcurrent'],
    [{ deviceSecret: 'too short' }, 'lockout.deviceSecret'],
    [{ deviceSecret: Buffer.alloc(40) }, 'lockout.deviceSecret'],
    [{ deviceMaxAgeMs: -1 }, 'lockout.deviceMaxAgeMs'],
    ['yes', 'lockout']
  ] as const) {
    await t.rejects(buildTestApp({ plugin: { lockout: lockout as never } }), { code: 'FST_SR_INVALID_OPTION', message: new RegExp(`"${name.replace('.', '\\.')}"`) }, name)
  }
})
