import t from 'tap'
import Fastify from 'fastify'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { redirectOnce, REDIRECT_CONFLICT_WARNING, type ConflictLogOption } from '../../lib/index.js'
import { parseConflictLog } from '../../lib/redirect/conflict-log.js'
import { buildTestApp, conflictWarnings } from '../helpers/app.js'

type Line = Record<string, unknown> & { level: number, msg: string }

/** An app whose /go/<n> route redirects to /first and then tries /second/<n>, which is refused. */
async function appWith (conflictLog: ConflictLogOption | undefined) {
  const lines: Line[] = []
  const stream = new Writable({
    write (chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      cb()
    }
  })
  const app = Fastify({ logger: { level: 'warn', stream } })
  await app.register(redirectOnce, conflictLog === undefined ? {} : { conflictLog })
  app.get('/go/:n', async (request, reply) => {
    reply.redirectOnce('/first')
    reply.redirectOnce(`/second/${(request.params as { n: string }).n}`)
    return reply
  })
  const conflicts = () => lines.filter((l) => l.code === REDIRECT_CONFLICT_WARNING)
  return { app, conflicts }
}

const message = (n: number) => `Already directed to /first; now trying to direct to /second/${n}`

async function conflict (app: Awaited<ReturnType<typeof appWith>>['app'], n: number) {
  const res = await app.inject(`/go/${n}`)
  if (res.statusCode !== 302 || res.headers.location !== '/first') throw new Error(`unexpected answer ${res.statusCode} ${res.headers.location}`)
}

t.test("'each': one warn line per refused redirect, with the request id", async (t) => {
  const { app, conflicts } = await appWith('each')
  const warnings = await conflictWarnings(async () => { for (let n = 1; n <= 3; n++) await conflict(app, n) })
  t.equal(warnings.length, 3, 'a warning per refused redirect')
  t.same(conflicts().map((l) => l.msg), [message(1), message(2), message(3)])
  t.ok(conflicts().every((l) => l.level === 40 && typeof l.reqId === 'string' && l.refusedLocation !== undefined))
  await app.close()
})

t.test('the default is a summary a minute: a crawler of 50 pages writes one line, and raises 50 warnings', async (t) => {
  const { app, conflicts } = await appWith(undefined)
  const warnings = await conflictWarnings(async () => { for (let n = 1; n <= 50; n++) await conflict(app, n) })
  t.equal(warnings.length, 50, 'every refused redirect still raises its UserWarning')
  t.same(conflicts().map((l) => l.msg), [message(1)], 'the first in full, the rest counted')
  await app.close()
  t.equal(conflicts().length, 2)
  t.equal(conflicts()[1].count, 49, 'the count is written when the app closes')
})

t.test('false: no log line, and the warning is still raised for every one', async (t) => {
  const { app, conflicts } = await appWith(false)
  const warnings = await conflictWarnings(async () => { for (let n = 1; n <= 3; n++) await conflict(app, n) })
  await app.close()
  t.same(warnings.map((w) => w.message), [message(1), message(2), message(3)])
  t.same(conflicts(), [])
})

t.test('a summary: the first in full, the rest counted, and the count written when the app closes', async (t) => {
  // An interval no test run reaches: only close() writes the summary.
  const { app, conflicts } = await appWith({ summaryIntervalMs: 600_000 })
  const warnings = await conflictWarnings(async () => { for (let n = 1; n <= 5; n++) await conflict(app, n) })
  t.equal(warnings.length, 5, 'a warning per refused redirect, as without a summary')
  t.equal(conflicts().length, 1, 'one line so far')
  t.equal(conflicts()[0].msg, message(1))
  t.equal(conflicts()[0].level, 40)
  t.type(conflicts()[0].reqId, 'string', 'the first comes from the request logger')
  await app.close()
  t.equal(conflicts().length, 2)
  const summary = conflicts()[1]
  t.equal(summary.level, 40)
  t.equal(summary.count, 4, 'every later one is counted')
  t.match(summary.msg, /^4 more redirect conflicts in the last \d+ s, each raised as UserWarning FST_SR_REDIRECT_CONFLICT; the latest: /)
  t.ok(summary.msg.endsWith(message(5)), 'names the latest')
  t.type(summary.windowMs, 'number')
})

t.test('a summary per interval while they keep coming; after a quiet interval the next is in full again', async (t) => {
  // Long enough that three requests in a row always fall into one interval, even on a busy machine.
  const interval = 400
  const { app, conflicts } = await appWith({ summaryIntervalMs: interval })
  t.teardown(() => app.close())
  await conflict(app, 1)
  await conflict(app, 2)
  await conflict(app, 3)
  // The first interval ends: two are reported, and the summary goes on.
  const until = async (what: string, check: () => boolean) => {
    for (let waited = 0; !check(); waited += 10) {
      if (waited > 5000) throw new Error(`timed out waiting for ${what}`)
      await sleep(10)
    }
  }
  await until('the first summary', () => conflicts().length === 2)
  t.equal(conflicts()[1].count, 2)
  await conflict(app, 4)
  await until('the second summary', () => conflicts().length === 3)
  t.equal(conflicts()[2].count, 1)
  t.ok(conflicts()[2].msg.endsWith(message(4)))
  // Two intervals without any: the summary has ended, so the next is written in full at once.
  await sleep(3 * interval)
  t.equal(conflicts().length, 3, 'an empty interval writes nothing')
  await conflict(app, 5)
  t.equal(conflicts().length, 4)
  t.equal(conflicts()[3].msg, message(5))
  t.equal(conflicts()[3].count, undefined, 'in full, not a count')
  await app.close()
  t.equal(conflicts().length, 4, 'nothing left to write at close')
})

t.test('the section plugin passes conflictLog on to redirectOnce', async (t) => {
  const lines: Line[] = []
  const stream = new Writable({
    write (chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      cb()
    }
  })
  const { app } = await buildTestApp({ fastify: { logger: { level: 'warn', stream } }, plugin: { conflictLog: { summaryIntervalMs: 600_000 } } })
  const warnings = await conflictWarnings(async () => {
    for (const slug of ['maths', 'science', 'maths']) await app.inject(`/schools/resources/resources/${slug}/`)
  })
  await app.close()
  t.equal(warnings.length, 3)
  const conflicts = lines.filter((l) => l.code === REDIRECT_CONFLICT_WARNING)
  t.same(conflicts.map((l) => l.count), [undefined, 2])
  t.equal(conflicts[0].msg, warnings[0].message)
})

t.test('a wrong conflictLog fails at startup and names the option', async (t) => {
  t.same(parseConflictLog(undefined), { summaryIntervalMs: 60_000 })
  t.same(parseConflictLog('each'), 'each')
  t.same(parseConflictLog({ summaryIntervalMs: 60_000 }), { summaryIntervalMs: 60_000 })
  const wrong: unknown[] = ['summary', true, null, 0, {}, { summaryIntervalMs: 0 }, { summaryIntervalMs: 1.5 }, { summaryIntervalMs: '60000' },
    { summaryIntervalMs: 2 ** 31 }, { summaryIntervalMs: 1000, extra: 1 }]
  for (const conflictLog of wrong) {
    const app = Fastify()
    app.register(redirectOnce, { conflictLog: conflictLog as ConflictLogOption })
    await t.rejects(async () => { await app.ready() }, { code: 'FST_SR_INVALID_OPTION', message: /"conflictLog"/ }, JSON.stringify(conflictLog))
    await t.rejects(buildTestApp({ plugin: { conflictLog: conflictLog as ConflictLogOption } }), { code: 'FST_SR_INVALID_OPTION', message: /"conflictLog"/ })
  }
})
