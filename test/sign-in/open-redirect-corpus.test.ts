import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { safeBackUrl } from '../../lib/index.js'
import { TEACHER, buildTestApp, formToken as formTokenOf, postLogin, withCookies } from '../helpers/app.js'

// The corpus: 1075 strings a site must not redirect to (and 28 it must), from Django, Grafana and others.

// The project's shared corpus, next to the repository; a copy in test/fixtures for a clone that has no
// ../shared beside it. Where both are present they must be the same file.
const SHARED = resolve(__dirname, '../../../shared/security/open-redirect-corpus.json')
const COPY = resolve(__dirname, '../fixtures/open-redirect-corpus.json')

t.test('the copy of the corpus in test/fixtures is the shared one', { skip: existsSync(SHARED) ? false : 'no ../shared beside this clone' }, async (t) => {
  t.equal(readFileSync(COPY, 'utf8'), readFileSync(SHARED, 'utf8'))
})

interface Corpus { site_host: string, unsafe: Array<{ url: string }>, safe: Array<{ url: string }> }
const corpus = JSON.parse(readFileSync(existsSync(SHARED) ? SHARED : COPY, 'utf8')) as Corpus
const SCHEMES = ['http', 'https'] as const

/** Where a Location leads from the login page; a reason when it leaves the site, else undefined. */
function escapes (location: string, loginPage: string): string | undefined {
  const target = new URL(location, loginPage)
  return target.host !== corpus.site_host || (target.protocol !== 'http:' && target.protocol !== 'https:') ? target.href : undefined
}

// Every string through the check the sign-in routes run on BackURL (the routes hand it the query value
// as the server decoded it, against the site's origin), as given and as a raw query would decode it.
t.test('safeBackUrl keeps the whole open-redirect corpus on the site (http and https, encoded and raw)', async (t) => {
  const escaped: string[] = []
  let honoured = 0
  let checked = 0
  for (const proto of SCHEMES) {
    const origin = `${proto}://${corpus.site_host}`
    for (const { url } of corpus.unsafe) {
      for (const value of new Set([url, new URLSearchParams(`BackURL=${url}`).get('BackURL')])) {
        checked++
        const target = safeBackUrl(value, origin)
        if (target === undefined) continue
        honoured++
        const away = escapes(target, `${origin}/Security/login`)
        if (away !== undefined || !target.startsWith(`${origin}/`)) escaped.push(`${JSON.stringify(value)} -> ${target}`)
      }
    }
    for (const { url } of corpus.safe) {
      t.equal(safeBackUrl(url, origin), new URL(url, `${origin}/login`).href, `safe ${url} is honoured over ${proto}`)
    }
  }
  t.same(escaped, [], 'no address it accepts leaves the site')
  t.comment(`${corpus.unsafe.length} unsafe strings x 2 decodings x 2 schemes: ${checked} checked, ${honoured} kept as an on-site address, none off the site`)
})

// A sample through the routes themselves (every 40th unsafe string, and every safe one): the Location
// a real sign-in answers with is the one safeBackUrl gave, or the index.
const SAMPLE = corpus.unsafe.filter((_, i) => i % 40 === 0)

t.test('the sign-in routes redirect a sample of the corpus only where safeBackUrl allows', async (t) => {
  let sent = 0
  let refusedByClient = 0
  const escaped: string[] = []
  const serverErrors: string[] = []
  for (const proto of SCHEMES) {
    const { app } = await buildTestApp({ plugin: { baseUrl: undefined, loginRateLimit: false }, fastify: { trustProxy: true } })
    const origin = `${proto}://${corpus.site_host}`
    const loginPage = `${origin}/login`
    const headers = { host: corpus.site_host, 'x-forwarded-proto': proto }
    for (const { url } of SAMPLE) {
      // (a) encoded, so the plugin receives the string exactly; (b) raw, decoded once by the server.
      for (const query of [`BackURL=${encodeURIComponent(url)}`, `BackURL=${url}`]) {
        let res
        try {
          const form = await app.inject({ url: `/Security/login?${query}`, headers })
          if (form.statusCode >= 500) serverErrors.push(`${form.statusCode} for the form with ${JSON.stringify(url)}`)
          res = await app.inject({
            method: 'POST',
            url: `/Security/login?${query}`,
            headers: { ...headers, cookie: withCookies(undefined, form) },
            payload: { email: TEACHER.email, password: TEACHER.password, _csrf: formTokenOf(form.body) }
          })
        } catch {
          // The HTTP client refuses some raw strings (not valid in a request line): nothing reached us.
          refusedByClient++
          continue
        }
        sent++
        if (res.statusCode >= 500) serverErrors.push(`${res.statusCode} for ${JSON.stringify(url)}`)
        const location = String(res.headers.location)
        const away = escapes(location, loginPage)
        if (away !== undefined) escaped.push(`${JSON.stringify(url)} -> ${location}`)
        if (query === `BackURL=${encodeURIComponent(url)}`) {
          t.equal(new URL(location, loginPage).href, safeBackUrl(url, origin) ?? `${origin}/schools/resources/`, `${JSON.stringify(url)} over ${proto}`)
        }
      }
    }
    for (const { url } of corpus.safe) {
      const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { url: `/Security/login?BackURL=${encodeURIComponent(url)}`, headers })
      t.equal(res.headers.location, new URL(url, loginPage).href, `safe ${url} is honoured over ${proto}`)
    }
    await app.close()
  }
  t.same(escaped, [], 'no Location leaves the site')
  t.same(serverErrors, [], 'no 5xx')
  t.ok(sent >= 0.9 * 4 * SAMPLE.length, `most strings reached the plugin (${sent})`)
  t.comment(`${SAMPLE.length} unsafe strings x 2 encodings x 2 schemes: ${sent} sent, ${refusedByClient} refused by the client`)
})

// Finding 6 of issue 12: only http(s) on the site's own origin, and no result whose path starts with `//`
// (one relative redirect away from another site).

const SITE = 'https://www.example.org'

t.test('only http and https addresses on the site are returned', async (t) => {
  for (const value of [
    'blob:https://www.example.org/3f1c', 'blob:https://www.example.org/schools/resources/',
    'ws://www.example.org/', 'wss://www.example.org/schools/', 'ftp://www.example.org/'
  ]) t.equal(safeBackUrl(value, SITE), undefined, value)
  t.equal(safeBackUrl('https://www.example.org/schools/resources/', SITE), 'https://www.example.org/schools/resources/')
})

t.test('no returned address has a path that starts with //', async (t) => {
  for (const value of [
    '/..//evil.example', '/.//evil.example', '/a/../..//evil.example/x', '/%2e%2e//evil.example', '/./%2F/evil.example',
    'https://www.example.org//evil.example', 'https://www.example.org/..//evil.example', '/x/..//evil.example?y#z'
  ]) {
    const result = safeBackUrl(value, SITE)
    t.ok(result === undefined || !new URL(result).pathname.startsWith('//'), `${value} -> ${String(result)}`)
  }
  t.equal(safeBackUrl('/..//evil.example', SITE), undefined, 'refused, not normalised into the index')
  t.equal(safeBackUrl('/schools/../schools/resources/', SITE), 'https://www.example.org/schools/resources/', 'dot segments that stay on a normal path are fine')
})
