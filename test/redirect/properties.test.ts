import t from 'tap'
import fc from 'fast-check'
import Fastify from 'fastify'
import { redirectOnce } from '../../lib/index.js'
import { TEACHER, buildTestApp, conflictWarnings, formToken, withCookies } from '../helpers/app.js'

// Bounded so that the suite stays fast; the seed is printed by fast-check when a property fails.
const RUNS = 150

t.test('for any request path, BackURL decodes back to exactly that path', async (t) => {
  let received = ''
  const { app } = await buildTestApp({
    plugin: { baseUrl: undefined },
    // What the server received (the HTTP client may normalise what it sends, e.g. drop a bare "?").
    extend: (app) => app.addHook('onRequest', (request, _reply, done) => { received = request.url; done() })
  })
  t.teardown(() => app.close())
  const path = fc.tuple(fc.array(fc.webSegment(), { maxLength: 4 }), fc.option(fc.webQueryParameters(), { nil: undefined }))
    .map(([segments, query]) => `/schools/resources/resources/${segments.join('/')}${query === undefined ? '' : `?${query}`}`)
    // "." and ".." segments are resolved by the client, as a browser does (`resources/..` asks for the index):
    // such a path never reaches a category page, so it is not one this property is about.
    .filter((url) => new URL(url, 'http://localhost').pathname.startsWith('/schools/resources/resources/'))
  await fc.assert(fc.asyncProperty(path, async (url) => {
    const res = await app.inject(url)
    if (res.statusCode === 400) return // invalid percent-encoding in the path: Fastify's clear 400
    t.equal(res.statusCode, 302)
    const location = new URL(String(res.headers.location))
    if (location.pathname !== '/Security/login') throw new Error(`unexpected Location ${res.headers.location}`)
    if (!received.startsWith('/schools/resources/resources/')) throw new Error(`received ${received} for ${url}`)
    if (location.searchParams.get('BackURL') !== received) throw new Error(`${received} came back as ${location.searchParams.get('BackURL')}`)
  }), { numRuns: RUNS })
})

t.test('for any sequence of redirectOnce calls: the first Location stays, one warning per differing attempt, one send', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(redirectOnce, { baseUrl: 'https://www.example.org' })
  let sends = 0
  let calls: Array<{ url: string, code: number }> = []
  let results: unknown[] = []
  app.addHook('onSend', async () => {
    sends++
    await new Promise((resolve) => setImmediate(resolve)) // an asynchronous store saving
  })
  app.get('/go', (_request, reply) => {
    results = calls.map(({ url, code }) => reply.redirectOnce(url, code))
  })
  const target = fc.constantFrom('/a', '/b', 'https://www.example.org/a', '/a?x=1', 'https://elsewhere.example/a', '/c/')
  const call = fc.record({ url: target, code: fc.constantFrom(301, 302, 303, 307, 308) })
  await fc.assert(fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 8 }), async (sequence) => {
    calls = sequence
    sends = 0
    let res: Awaited<ReturnType<typeof app.inject>> | undefined
    const warnings = await conflictWarnings(async () => { res = await app.inject('/go') })
    const first = new URL(sequence[0].url, 'https://www.example.org').href
    const differing = sequence.slice(1).filter(({ url }) => new URL(url, 'https://www.example.org').href !== first).length
    if (res?.headers.location !== sequence[0].url) throw new Error(`Location ${res?.headers.location}`)
    if (res.statusCode !== sequence[0].code) throw new Error(`status ${res.statusCode}`)
    if (warnings.length !== differing) throw new Error(`${warnings.length} warnings for ${differing} differing attempts`)
    if (sends !== 1) throw new Error(`${sends} sends`)
    results.forEach((result, i) => {
      const same = new URL(sequence[i].url, 'https://www.example.org').href === first
      if ((result === undefined) === same) throw new Error(`call ${i} returned ${String(result)}`)
    })
  }), { numRuns: RUNS })
  t.pass(`${RUNS} sequences held`)
})

t.test('for any string given as BackURL at sign-in, the final Location is on the site', async (t) => {
  const { app } = await buildTestApp({ plugin: { baseUrl: undefined, loginRateLimit: false, lockout: false }, fastify: { trustProxy: true } })
  t.teardown(() => app.close())
  const prefixes = ['', '/', '//', '\\\\', '/\\', 'http://', 'https://', 'javascript:', '%2F%2F', '/%09/', 'http://testserver@', '\u0000', ' ']
  const backUrl = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.webUrl(),
    fc.tuple(fc.constantFrom(...prefixes), fc.string({ maxLength: 40 })).map(([p, rest]) => p + rest)
  )
  let onSite = 0
  await fc.assert(fc.asyncProperty(backUrl, fc.constantFrom('http', 'https'), async (value, proto) => {
    const headers = { host: 'testserver', 'x-forwarded-proto': proto }
    const form = await app.inject({ url: '/Security/login', headers })
    const res = await app.inject({
      method: 'POST',
      url: '/Security/login',
      headers: { ...headers, cookie: withCookies(undefined, form) },
      payload: { email: TEACHER.email, password: TEACHER.password, _csrf: formToken(form.body), BackURL: value }
    })
    if (res.statusCode !== 303) throw new Error(`status ${res.statusCode}`)
    const location = new URL(String(res.headers.location), `${proto}://testserver/Security/login`)
    if (location.host !== 'testserver' || !/^https?:$/.test(location.protocol)) throw new Error(`left the site: ${res.headers.location}`)
    if (location.pathname !== '/schools/resources/') onSite++
  }), { numRuns: RUNS * 2 })
  t.pass(`${RUNS * 2} return addresses stayed on the site (${onSite} honoured, the rest fell back to the index)`)
})
