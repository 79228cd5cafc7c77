import t from 'tap'
import Fastify, { type FastifyReply, type FastifyServerOptions } from 'fastify'
import { Writable } from 'node:stream'
import { validateHeaderValue } from 'node:http'
import fc from 'fast-check'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { InMemoryCatalog, redirectOnce, REDIRECT_CONFLICT_WARNING } from '../../lib/index.js'
import { BASE_URL, conflictWarnings, SECRET, teacherOnly } from '../helpers/app.js'

type Handler = (reply: FastifyReply) => unknown

/** An app with only the redirectOnce plugin and one route whose handler is `handler`. */
async function appWith (handler: Handler, opts: { baseUrl?: string, fastify?: FastifyServerOptions, asyncOnSend?: boolean } = {}) {
  const app = Fastify(opts.fastify)
  // A line per refused redirect (not the default summary), so that each can be checked.
  await app.register(redirectOnce, opts.baseUrl === undefined ? { conflictLog: 'each' } : { baseUrl: opts.baseUrl, conflictLog: 'each' })
  if (opts.asyncOnSend === true) {
    // Stands in for an asynchronous session store saving in onSend: headers go out a tick later.
    app.addHook('onSend', async () => { await new Promise((resolve) => setTimeout(resolve, 5)) })
  }
  app.get('/go', async (_request, reply) => {
    await handler(reply)
    return reply
  })
  t.teardown(() => app.close())
  return app
}

/** A pino destination that keeps every log line, to check what reached the request logger. */
function logCapture () {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      cb()
    }
  })
  return { lines, logger: { level: 'info', stream } }
}

t.test('no Location yet: redirects with 302 and returns the reply', async (t) => {
  let returned: unknown
  let replyObject: unknown
  const app = await appWith((reply) => {
    replyObject = reply
    returned = reply.redirectOnce('/schools/resources/')
  })
  const warnings = await conflictWarnings(async () => {
    const res = await app.inject('/go')
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, '/schools/resources/')
  })
  t.equal(returned, replyObject, 'returns the reply')
  t.same(warnings, [])
})

t.test('uses the status code it is given', async (t) => {
  for (const code of [300, 301, 302, 303, 307, 308]) {
    const app = await appWith((reply) => reply.redirectOnce('/x', code))
    const res = await app.inject('/go')
    t.equal(res.statusCode, code, `code ${code}`)
    t.equal(res.headers.location, '/x')
  }
})

t.test('the same target twice: one redirect, no warning, the reply both times', async (t) => {
  const results: unknown[] = []
  const { lines, logger } = logCapture()
  const app = await appWith((reply) => {
    results.push(reply.redirectOnce('/same'), reply.redirectOnce('/same'))
  }, { fastify: { logger }, asyncOnSend: true })
  const warnings = await conflictWarnings(async () => {
    const res = await app.inject('/go')
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, '/same')
  })
  t.equal(results.length, 2)
  t.ok(results[0] !== undefined && results[0] === results[1], 'both calls return the reply')
  t.same(warnings, [])
  t.notOk(lines.some((l) => JSON.stringify(l).includes('FST_ERR_REP_ALREADY_SENT')), 'never sent twice')
})

t.test('the same target relative and absolute is the same URL (no legacy false positive)', async (t) => {
  await t.test('with baseUrl', async (t) => {
    const app = await appWith((reply) => {
      reply.redirectOnce('/schools/resources/')
      t.ok(reply.redirectOnce('https://www.example.org/schools/resources/'), 'returns the reply')
    }, { baseUrl: 'https://www.example.org' })
    const warnings = await conflictWarnings(async () => {
      const res = await app.inject('/go')
      t.equal(res.headers.location, '/schools/resources/', 'the first Location stays')
    })
    t.same(warnings, [])
  })
  await t.test('without baseUrl, against the request origin', async (t) => {
    const app = await appWith((reply) => {
      reply.redirectOnce('https://school.test/a/')
      reply.redirectOnce('/a/')
    }, { fastify: { trustProxy: true } })
    const warnings = await conflictWarnings(() => app.inject({ url: '/go', headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'school.test' } }))
    t.same(warnings, [])
  })
  await t.test('a different host is a different target', async (t) => {
    const app = await appWith((reply) => {
      reply.redirectOnce('/a/')
      reply.redirectOnce('https://elsewhere.test/a/')
    }, { baseUrl: 'https://www.example.org' })
    const warnings = await conflictWarnings(() => app.inject('/go'))
    t.equal(warnings.length, 1)
  })
})

t.test('a different target: one UserWarning per attempt, nothing changes, returns undefined', async (t) => {
  const returned: unknown[] = []
  const { lines, logger } = logCapture()
  const app = await appWith((reply) => {
    reply.redirectOnce('https://www.example.org/Security/login?BackURL=%2Fa%2F')
    returned.push(reply.redirectOnce('/schools/resources/'), reply.redirectOnce('/elsewhere', 301))
  }, { fastify: { logger }, asyncOnSend: true })
  let res: Awaited<ReturnType<typeof app.inject>> | undefined
  const warnings = await conflictWarnings(async () => { res = await app.inject('/go') })
  t.equal(res?.statusCode, 302, 'the first status stays')
  t.equal(res?.headers.location, 'https://www.example.org/Security/login?BackURL=%2Fa%2F', 'the first Location stays')
  t.same(returned, [undefined, undefined])
  t.equal(warnings.length, 2, 'one warning per attempt')
  t.equal(warnings[0].name, 'UserWarning')
  t.equal((warnings[0] as Error & { code: string }).code, REDIRECT_CONFLICT_WARNING)
  t.equal(warnings[0].message, 'Already directed to https://www.example.org/Security/login?BackURL=%2Fa%2F; now trying to direct to /schools/resources/')
  t.equal(warnings[1].message, 'Already directed to https://www.example.org/Security/login?BackURL=%2Fa%2F; now trying to direct to /elsewhere')
  const warned = lines.filter((l) => l.level === 40 && l.code === REDIRECT_CONFLICT_WARNING)
  t.equal(warned.length, 2, 'logged at warn level on the request logger')
  t.equal(warned[0].msg, warnings[0].message)
  t.ok(typeof warned[0].reqId === 'string', 'with the request id')
  t.notOk(lines.some((l) => JSON.stringify(l).includes('FST_ERR_REP_ALREADY_SENT')))
})

t.test('a Location set with reply.header counts as existing', async (t) => {
  await t.test('different target: warning, the header and the handler\'s own answer stand', async (t) => {
    let returned: unknown = 'unset'
    const app = Fastify()
    await app.register(redirectOnce)
    app.get('/go', async (_request, reply) => {
      reply.header('location', '/set-by-header')
      returned = reply.redirectOnce('/other')
      return reply.code(201).send('kept')
    })
    let res: Awaited<ReturnType<typeof app.inject>> | undefined
    const warnings = await conflictWarnings(async () => { res = await app.inject('/go') })
    t.equal(returned, undefined)
    t.equal(res?.statusCode, 201, 'nothing was sent by redirectOnce')
    t.equal(res?.headers.location, '/set-by-header')
    t.equal(warnings.length, 1)
    t.equal(warnings[0].message, 'Already directed to /set-by-header; now trying to direct to /other')
  })
  await t.test('same target: the redirect is performed', async (t) => {
    const app = await appWith((reply) => {
      reply.header('location', '/same')
      reply.redirectOnce('/same', 307)
    })
    const res = await app.inject('/go')
    t.equal(res.statusCode, 307)
    t.equal(res.headers.location, '/same')
  })
  await t.test('an existing Location that is not a URL differs from any target', async (t) => {
    const app = await appWith((reply) => {
      reply.header('location', 'http://[not-a-host')
      if (reply.redirectOnce('/x') === undefined) reply.code(204).send()
    })
    const warnings = await conflictWarnings(() => app.inject('/go'))
    t.equal(warnings.length, 1)
    t.equal(warnings[0].message, 'Already directed to http://[not-a-host; now trying to direct to /x')
  })
})

t.test('a redirect already sent with reply.redirect counts as existing', async (t) => {
  const { lines, logger } = logCapture()
  const returned: unknown[] = []
  const app = Fastify({ logger })
  await app.register(redirectOnce)
  app.get('/go', (_request, reply) => {
    reply.redirect('/first')
    // After the response has gone out, as a late callback would.
    reply.raw.on('finish', () => {
      returned.push(reply.redirectOnce('/first'), reply.redirectOnce('/second'))
    })
  })
  const warnings = await conflictWarnings(async () => {
    const res = await app.inject('/go')
    t.equal(res.headers.location, '/first')
  })
  t.equal(returned.length, 2)
  t.ok(returned[0], 'the same target returns the reply without sending again')
  t.equal(returned[1], undefined)
  t.same(warnings.map((w) => w.message), ['Already directed to /first; now trying to direct to /second'])
  t.notOk(lines.some((l) => JSON.stringify(l).includes('FST_ERR_REP_ALREADY_SENT')), 'nothing sent twice')
})

t.test('with an asynchronous onSend the refused redirect never reaches the wire', async (t) => {
  // Without per-reply state a second reply.redirect here would hit ERR_HTTP_HEADERS_SENT.
  const app = await appWith((reply) => {
    reply.redirectOnce('/first')
    reply.redirectOnce('/second')
    reply.redirectOnce('/first')
  }, { asyncOnSend: true })
  const warnings = await conflictWarnings(async () => {
    const results = await Promise.all([app.inject('/go'), app.inject('/go'), app.inject('/go')])
    for (const res of results) {
      t.equal(res.statusCode, 302)
      t.equal(res.headers.location, '/first')
    }
  })
  t.equal(warnings.length, 3, 'one warning per request')
})

t.test('invalid status codes are refused with a clear error, not a crash', async (t) => {
  for (const code of [200, 304, 305, 404, 999, 302.5, '302', null]) {
    const app = await appWith((reply) => reply.redirectOnce('/x', code as number))
    const res = await app.inject('/go')
    t.equal(res.statusCode, 500, `code ${String(code)}`)
    const body = res.json()
    t.equal(body.code, 'FST_SR_INVALID_REDIRECT_CODE')
    t.match(body.message, /is not a redirect status code/)
    t.equal(res.headers.location, undefined)
  }
})

t.test('URLs that cannot be a Location header are refused with a clear error', async (t) => {
  for (const url of ['', '/a\r\nSet-Cookie: x=1', '/nul\u0000', '/tab\tand\nnewline', 42, undefined]) {
    const app = await appWith((reply) => reply.redirectOnce(url as string))
    const res = await app.inject('/go')
    t.equal(res.statusCode, 500, `url ${JSON.stringify(url)}`)
    t.equal(res.json().code, 'FST_SR_INVALID_REDIRECT_URL')
    t.equal(res.headers.location, undefined)
    t.equal(res.headers['set-cookie'], undefined)
  }
})

t.test('a URL is refused exactly when node:http would refuse it as a Location value', async (t) => {
  const app = await appWith((reply) => reply.redirectOnce((reply.request.query as { u: string }).u))
  const char = fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0x80, max: 0x2ff }), fc.constantFrom(0x2028, 0xfeff, 0xffff)).map((c) => String.fromCharCode(c))
  await fc.assert(fc.asyncProperty(fc.string({ unit: char, minLength: 1, maxLength: 12 }), async (tail) => {
    const url = `/p${tail}`
    let valid = true
    try { validateHeaderValue('location', url) } catch { valid = false }
    const res = await app.inject({ url: '/go', query: { u: url } })
    if (valid) return res.statusCode === 302 && res.headers.location === url
    return res.statusCode === 500 && res.json().code === 'FST_SR_INVALID_REDIRECT_URL'
  }), { numRuns: 400 })
  t.pass('400 generated URLs: accepted and refused exactly as node:http would')
})

t.test('registering it twice keeps one decorator, and says when the second options are ignored', async (t) => {
  const registerTwice = async (first: Parameters<typeof redirectOnce>[1], second: Parameters<typeof redirectOnce>[1]) => {
    const lines: Array<{ level: number, msg: string, ignored?: unknown, inEffect?: unknown }> = []
    const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
    const app = Fastify({ logger: { level: 'warn', stream } })
    await app.register(redirectOnce, first)
    await app.register(redirectOnce, second)
    app.get('/go', async (_request, reply) => reply.redirectOnce('/x'))
    t.equal((await app.inject('/go')).statusCode, 302)
    await app.close()
    return lines.filter((l) => /registered already/.test(l.msg))
  }
  const ignored = await registerTwice({}, { baseUrl: 'https://www.example.org' })
  t.equal(ignored.length, 1, 'a different baseUrl')
  t.equal(ignored[0].level, 40)
  t.same(ignored[0].inEffect, { conflictLog: { summaryIntervalMs: 60_000 } })
  t.same(ignored[0].ignored, { baseUrl: 'https://www.example.org', conflictLog: { summaryIntervalMs: 60_000 } })
  t.equal((await registerTwice({ conflictLog: false }, { conflictLog: { summaryIntervalMs: 1000 } })).length, 1, 'a different conflictLog')
  t.equal((await registerTwice({ baseUrl: 'https://www.example.org/' }, { baseUrl: 'https://www.example.org' })).length, 0, 'the same origin')
  t.equal((await registerTwice({ conflictLog: false }, {})).length, 0, 'nothing given again')
  t.equal((await registerTwice({ conflictLog: { summaryIntervalMs: 5 } }, { conflictLog: { summaryIntervalMs: 5 } })).length, 0, 'the same conflictLog')
})

t.test('a wrong baseUrl fails at startup and names the option', async (t) => {
  for (const baseUrl of ['www.example.org', 'ftp://example.org', 'https://example.org/sub', 'https://u:p@example.org', 42]) {
    const app = Fastify()
    app.register(redirectOnce, { baseUrl: baseUrl as string })
    await t.rejects(async () => { await app.ready() }, { code: 'FST_SR_INVALID_OPTION', message: /"baseUrl"/ }, String(baseUrl))
  }
})

t.test('targets are compared the same way however many there are and however long (the resolved-target cache)', async (t) => {
  const app = Fastify()
  await app.register(redirectOnce, { baseUrl: 'https://www.example.org' })
  app.get('/go', async (request, reply) => {
    const { first, then } = request.query as { first: string, then: string }
    reply.redirectOnce(first)
    reply.redirectOnce(then)
    return reply
  })
  t.teardown(() => app.close())
  const long = `/${'x'.repeat(600)}`
  // More distinct targets than the cache keeps, so that it is emptied along the way.
  const cases: Array<[string, string, boolean]> = []
  for (let i = 0; i < 700; i++) cases.push([`/p/${i}`, `https://www.example.org/p/${i}`, true], [`/p/${i}`, `/q/${i}`, false])
  cases.push([long, `https://www.example.org${long}`, true], [long, `${long}y`, false], [`${long}/../a`, '/a', true], ['/a', 'http://[bad', false])
  let failures = 0
  const warnings = await conflictWarnings(async () => {
    for (const [first, then] of cases) {
      const res = await app.inject({ url: '/go', query: { first, then } })
      if (res.headers.location !== first) failures++
    }
  })
  t.equal(failures, 0, 'the first Location always stays')
  const expected = cases.filter(([, , same]) => !same).map(([first, then]) => `Already directed to ${first}; now trying to direct to ${then}`)
  t.same(warnings.map((w) => w.message), expected, 'a warning exactly for the targets that differ')
})

t.test('a host\'s own redirectOnce decorator takes the section\'s targets, and the spec\'s answer stays', async (t) => {
  const app = Fastify()
  const asked: string[] = []
  app.decorateReply('redirectOnce', function (this: FastifyReply, url: string) {
    asked.push(url)
    if (asked.length % 2 === 0) return undefined
    return this.redirect(url)
  })
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  const catalog = new InMemoryCatalog({ categories: [{ slug: 'maths', title: 'Mathematics', description: 'Number.', resources: [] }] })
  await app.register(schoolsResources, { catalog, authenticate: teacherOnly, baseUrl: BASE_URL })
  t.teardown(() => app.close())
  const res = await app.inject('/schools/resources/resources/maths/')
  const login = `${BASE_URL}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, login)
  t.same(asked, [login, '/schools/resources/'], 'both targets through the host\'s decorator, in the spec\'s order')
})
