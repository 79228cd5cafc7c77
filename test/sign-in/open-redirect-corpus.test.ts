import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { TEACHER, buildTestApp, formToken as formTokenOf, postLogin, withCookies } from '../helpers/app.js'

// Long: two requests per string; tap's default 30 s per file is not enough on a loaded machine.
t.setTimeout(240_000)

// The project's shared corpus, next to the repository; a copy in test/fixtures for a clone that has no
// ../shared beside it. Where both are present they must be the same file.
const SHARED = resolve(__dirname, '../../../shared/security/open-redirect-corpus.json')
const COPY = resolve(__dirname, '../fixtures/open-redirect-corpus.json')

t.test('the copy of the corpus in test/fixtures is the shared one', { skip: existsSync(SHARED) ? false : 'no ../shared beside this clone' }, async (t) => {
  t.equal(readFileSync(COPY, 'utf8'), readFileSync(SHARED, 'utf8'))
})

t.test('the open-redirect corpus never leaves the site (http and https, encoded and raw)', async (t) => {
  const corpus = JSON.parse(readFileSync(existsSync(SHARED) ? SHARED : COPY, 'utf8')) as {
    site_host: string
    unsafe: Array<{ url: string }>
    safe: Array<{ url: string }>
  }
  let sent = 0
  let refusedByClient = 0
  let honoured = 0
  const escaped: string[] = []
  const serverErrors: string[] = []
  for (const proto of ['http', 'https'] as const) {
    const { app } = await buildTestApp({ plugin: { baseUrl: undefined, loginRateLimit: false }, fastify: { trustProxy: true } })
    const loginPage = `${proto}://${corpus.site_host}/login`
    const headers = { host: corpus.site_host, 'x-forwarded-proto': proto }
    for (const { url } of corpus.unsafe) {
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
        const target = new URL(location, loginPage)
        if (target.host !== corpus.site_host || (target.protocol !== 'http:' && target.protocol !== 'https:')) {
          escaped.push(`${JSON.stringify(url)} -> ${location}`)
        }
        if (target.pathname !== '/schools/resources/') honoured++
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
  t.ok(sent >= 4 * corpus.unsafe.length - 200, `most strings reached the plugin (${sent})`)
  t.comment(`${corpus.unsafe.length} unsafe strings x 2 encodings x 2 schemes: ${sent} sent, ${refusedByClient} refused by the client, ` +
    `${honoured} redirected on-site to the path given, ${sent - honoured} fell back to the index, ${escaped.length} left the site`)
})
