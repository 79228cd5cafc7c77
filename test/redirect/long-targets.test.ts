import t from 'tap'
import { Writable } from 'node:stream'
import { MAX_REQUEST_TARGET } from '../../lib/access/anonymous-answer.js'
import { buildTestApp, conflictWarnings, signIn } from '../helpers/app.js'

// Finding 3 of issue 12: a 16 KB category URL gave a 24 KB Location and ~26 KB of warning and log per request.

const category = (length: number) => {
  const base = '/schools/resources/resources/maths/?q='
  return base + '!'.repeat(length - base.length) // '!' is percent-encoded: the worst case, three characters each
}

t.test('a request target over the limit is answered 414 before any work, for visitors and members', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const { app, catalog } = await buildTestApp({ fastify: { logger: { level: 'warn', stream } } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  for (const headers of [{}, { cookie }]) {
    const warnings = await conflictWarnings(async () => {
      const res = await app.inject({ url: category(16 * 1024), headers })
      t.equal(res.statusCode, 414, `${headers.cookie === undefined ? 'visitor' : 'member'}: 414`)
      t.equal(res.json().code, 'FST_SR_URI_TOO_LONG')
      t.equal(res.headers.location, undefined, 'no Location')
    })
    t.same(warnings, [], 'no warning')
  }
  t.equal(catalog.lookups, 0, 'no catalog lookup')
  t.same(lines.filter((l) => l.includes('Already directed')), [], 'no conflict log line')
})

t.test('at the limit: the longest Location, warning and log line stay small', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const { app } = await buildTestApp({ fastify: { logger: { level: 'warn', stream } } })
  t.teardown(() => app.close())
  let location = ''
  const warnings = await conflictWarnings(async () => {
    const res = await app.inject(category(MAX_REQUEST_TARGET))
    t.equal(res.statusCode, 302)
    location = String(res.headers.location)
  })
  t.ok(location.length <= 4096, `the longest Location: ${location.length} characters (target of ${MAX_REQUEST_TARGET})`)
  t.equal(warnings.length, 1)
  t.ok(warnings[0].message.length <= 4096 + 100, `the warning: ${warnings[0].message.length} characters`)
  const conflict = lines.find((l) => l.includes('Already directed'))!
  t.ok(Buffer.byteLength(conflict) <= 4096, `the log line: ${Buffer.byteLength(conflict)} bytes`)
  t.comment(`FIGURES long targets: Location ${location.length} chars, warning ${warnings[0].message.length} chars, log line ${Buffer.byteLength(conflict)} bytes`)
})

t.test('log fields are cut to 1000 characters, in full lines and in summaries', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const { app } = await buildTestApp({ fastify: { logger: { level: 'warn', stream } }, plugin: { conflictLog: { summaryIntervalMs: 50 } } })
  t.teardown(() => app.close())
  await conflictWarnings(async () => {
    for (let i = 0; i < 3; i++) await app.inject(category(MAX_REQUEST_TARGET))
    await new Promise((resolve) => setTimeout(resolve, 120))
  })
  const logged = lines.filter((l) => l.includes('FST_SR_REDIRECT_CONFLICT'))
  t.equal(logged.length, 2, 'one in full, one summary')
  for (const line of logged) {
    t.ok(Buffer.byteLength(line) <= 4096, `${Buffer.byteLength(line)} bytes`)
    t.match(line, /… \(\d+ characters\)/, 'says how long the cut value was')
  }
})
