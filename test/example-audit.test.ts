import t, { type Test } from 'tap'
import { channel } from 'node:diagnostics_channel'
import { eventChannels } from '../lib/index.js'
import { buildApp } from '../examples/app.js'
import { postLogin, sessionCookie, signOut } from './helpers/app.js'

// The example's audit log (examples/audit-log.ts) and metrics (examples/metrics.ts, METRICS=1).

const TEACHER = { email: 'teacher@example.org', password: 'correct horse battery staple' }
const PARENT = { email: 'parent@example.org', password: 'parents evening in the hall' }
const config = { sessionSecret: 's'.repeat(40), demoEmail: TEACHER.email, demoPassword: TEACHER.password, demoParent: PARENT }
const FILE = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'

type Line = Record<string, unknown> & { level: number, msg: string }

async function example (t: Test, metrics: boolean) {
  const lines: Line[] = []
  const app = await buildApp({ ...config, metrics, logger: { level: 'info', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  t.teardown(() => app.close())
  return { app, audit: () => lines.filter((l) => typeof l.audit === 'string') }
}

/** A morning: a teacher signs in, a parent mistypes, opens the staff room (403), the teacher downloads and signs out. */
async function morning (app: Awaited<ReturnType<typeof buildApp>>) {
  const teacher = sessionCookie(await postLogin(app, TEACHER))!
  await postLogin(app, { email: PARENT.email, password: 'parents evening' })
  const parent = sessionCookie(await postLogin(app, PARENT))!
  await app.inject({ url: '/schools/resources/resources/staff-room/', headers: { cookie: parent } })
  await app.inject({ url: FILE, headers: { cookie: teacher } })
  await signOut(app, teacher)
  return { teacher, parent }
}

/** The value of a metric line (`name{labels} value`) in the exposition text; 0 when absent. */
function value (text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.split(' ').pop())
}

t.test('the audit log: a line per event, naming the member and the address, and no secret', async (t) => {
  const { app, audit } = await example(t, false)
  const { teacher, parent } = await morning(app)
  const lines = audit()
  t.same(lines.map((l) => [l.audit, l.level]), [
    ['signInSucceeded', 30], ['signInFailed', 40], ['signInSucceeded', 30], ['accessRefused', 40], ['fileDownloaded', 30], ['signedOut', 30]
  ])
  t.same(lines.map((l) => l.memberId), ['demo-teacher', undefined, 'demo-parent', 'demo-parent', 'demo-teacher', 'demo-teacher'])
  t.ok(lines.every((l) => l.clientAddress === '127.0.0.1' && typeof l.reqId === 'string' && l.section === '/schools/resources/'))
  t.equal(lines[1].reason, 'wrong-credentials')
  t.match(lines[1].identifierHash, /^[\w-]{43}$/)
  const text = JSON.stringify(lines)
  for (const secret of [TEACHER.password, 'parents evening', PARENT.email, teacher.split('=')[1], parent.split('=')[1]]) t.notOk(text.includes(secret), 'no secret')
  t.notOk((await app.inject('/metrics')).statusCode === 200, 'no /metrics unless asked for')
})

t.test('metrics: the counters move with the morning, and a crawler adds no series', async (t) => {
  const { app } = await example(t, true)
  const before = (await app.inject('/metrics')).body
  await morning(app)
  const after = (await app.inject('/metrics')).body
  t.equal(value(after, 'schools_resources_sign_ins_total{outcome="succeeded"}') - value(before, 'schools_resources_sign_ins_total{outcome="succeeded"}'), 2)
  t.equal(value(after, 'schools_resources_sign_in_failures_total{reason="wrong-credentials"}'), 1)
  t.equal(value(after, 'schools_resources_access_refused_total'), 1)
  t.equal(value(after, 'schools_resources_file_downloads_total{status="200"}'), 1)
  t.equal(value(after, 'schools_resources_sign_outs_total'), 1)
  t.match(after, 'http_request_duration_seconds_count{method="GET",route="/schools/resources/resources/*",status_code="403"} 1')

  const series = (text: string) => new Set(text.split('\n').filter((l) => l.startsWith('http_request_duration_seconds_count')).map((l) => l.split(' ')[0]))
  const random = () => Math.random().toString(36).slice(2)
  await app.inject(`/schools/resources/resources/${random()}/`)
  await app.inject(`/${random()}`)
  const known = series((await app.inject('/metrics')).body)
  for (let i = 0; i < 100; i++) {
    await app.inject(`/schools/resources/resources/${random()}/?page=${random()}`)
    await app.inject(`/${random()}/${random()}`)
  }
  const crawled = (await app.inject('/metrics')).body
  t.same([...series(crawled)].filter((s) => !known.has(s) && !s.includes('/metrics')), [], '200 random addresses: no new series')
  t.match(crawled, 'route="(unmatched)"')
  t.notMatch(crawled, /route="[^"]*\?/, 'no URL in a label')
  t.equal(value(crawled, 'schools_resources_redirects_refused_total'), 0, '101 anonymous category requests: the guard\'s own refusals are not counted')
  // Any other refused redirect (a host route's conflict) is, as redirectOnce publishes it.
  channel(eventChannels.redirectRefused).publish({ app, section: undefined, requestId: 'r', clientAddress: '127.0.0.1', existingLocation: '/a', refusedLocation: '/b', expected: false })
  t.equal(value((await app.inject('/metrics')).body, 'schools_resources_redirects_refused_total'), 1)
})
