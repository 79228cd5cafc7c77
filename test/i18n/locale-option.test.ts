import t from 'tap'
import type { FastifyRequest } from 'fastify'
import { buildTestApp, signIn } from '../helpers/app.js'
import { capturedLog, WARN } from '../helpers/log-capture.js'

const LOGIN = '/Security/login'

function langOf (body: string): string | undefined {
  return /<html lang="([^"]+)"/.exec(body)?.[1]
}

t.test('a fixed locale: canonicalised, a region to its language, no Vary on the language', async (t) => {
  for (const [given, locale] of [['FR', 'fr'], ['fr-CA', 'fr'], ['cy-GB', 'cy'], ['de', 'de']]) {
    const { app } = await buildTestApp({ plugin: { locale: given } })
    t.teardown(() => app.close())
    const res = await app.inject({ url: LOGIN, headers: { 'accept-language': 'es' } })
    t.equal(res.statusCode, 200)
    t.equal(langOf(res.body), locale, `${given}: <html lang>`)
    t.equal(res.headers['content-language'], locale, `${given}: Content-Language`)
    t.notMatch(String(res.headers.vary ?? ''), /accept-language/i, `${given}: the answer does not vary with Accept-Language`)
  }
})

t.test('a fixed locale the section lacks, or not a tag nor a function, fails start-up naming `locale`', async (t) => {
  for (const locale of ['ja', 'not a tag', '*', 42, null, {}]) {
    await t.rejects(buildTestApp({ plugin: { locale: locale as string } }), { code: 'FST_SR_INVALID_OPTION', message: /\blocale\b/ }, JSON.stringify(locale))
  }
})

t.test('negotiated pages: Content-Language and Vary: Accept-Language', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  for (const [header, locale] of [['fr-CA,fr;q=0.9,en;q=0.5', 'fr'], ['ja', 'en'], [undefined, 'en'], ['de;q=0.2, es;q=0.4', 'es']] as const) {
    const res = await app.inject({ url: LOGIN, headers: header === undefined ? {} : { 'accept-language': header } })
    t.equal(langOf(res.body), locale, String(header))
    t.equal(res.headers['content-language'], locale)
    t.match(String(res.headers.vary), /\bAccept-Language\b/i)
  }
  // A member's page too (the category page has its own path and cache).
  const cookie = await signIn(app)
  for (const url of ['/schools/resources/', '/schools/resources/resources/maths/']) {
    const res = await app.inject({ url, headers: { cookie, 'accept-language': 'de' } })
    t.equal(res.statusCode, 200, url)
    t.equal(langOf(res.body), 'de', url)
    t.equal(res.headers['content-language'], 'de', url)
    t.match(String(res.headers.vary), /\bAccept-Language\b/i, url)
    const english = await app.inject({ url, headers: { cookie, 'accept-language': 'en' } })
    t.equal(langOf(english.body), 'en', `${url}: the category cache is kept per locale`)
  }
})

t.test('a defaultLocale: cy app answers Welsh when nothing else decides', async (t) => {
  const { app } = await buildTestApp({ plugin: { defaultLocale: 'cy' } })
  t.teardown(() => app.close())
  t.equal(langOf((await app.inject(LOGIN)).body), 'cy')
  t.equal(langOf((await app.inject({ url: LOGIN, headers: { 'accept-language': 'ja' } })).body), 'cy')
  t.equal(langOf((await app.inject({ url: LOGIN, headers: { 'accept-language': 'en-NZ' } })).body), 'en')
})

t.test('a locale function, sync or async, decides per request; undefined leaves it to Accept-Language', async (t) => {
  const byQuery = (request: FastifyRequest) => (request.query as { lang?: string }).lang
  for (const [name, locale] of [['sync', byQuery], ['async', async (request: FastifyRequest) => byQuery(request)]] as const) {
    const { app } = await buildTestApp({ plugin: { locale } })
    t.teardown(() => app.close())
    const chosen = await app.inject({ url: `${LOGIN}?lang=cy-GB`, headers: { 'accept-language': 'de' } })
    t.equal(langOf(chosen.body), 'cy', `${name}: the function's tag, to its language`)
    t.equal(chosen.headers['content-language'], 'cy')
    t.match(String(chosen.headers.vary), /\bAccept-Language\b/i, `${name}: a function may leave it to the header`)
    t.equal(langOf((await app.inject({ url: LOGIN, headers: { 'accept-language': 'de' } })).body), 'de', `${name}: undefined → Accept-Language`)
    t.equal(langOf((await app.inject(LOGIN)).body), 'en', `${name}: then the default`)
    // A member's category page (the cached one) follows the function too, in parallel with other languages.
    const cookie = await signIn(app)
    const maths = '/schools/resources/resources/maths/'
    const pages = await Promise.all(['fr', 'de', 'fr', 'es'].map((lang) => app.inject({ url: `${maths}?lang=${lang}`, headers: { cookie } })))
    t.same(pages.map((res) => [res.statusCode, langOf(res.body), res.headers['content-language']]), [[200, 'fr', 'fr'], [200, 'de', 'de'], [200, 'fr', 'fr'], [200, 'es', 'es']], `${name}: each category page in its own language`)
  }
})

t.test('a locale function that throws, rejects or gives no locale: Accept-Language, one warn per kind', async (t) => {
  const cases: Array<[string, (request: FastifyRequest) => unknown, RegExp]> = [
    ['throws', () => { throw new Error('no member') }, /threw/],
    ['rejects', async () => { throw new Error('no member') }, /rejected/],
    ['an unavailable tag', () => 'ja', /does not have/],
    ['not a tag', () => 'fr;q=1', /does not have/],
    ['a number', () => 42, /gave a number instead of a locale tag/],
    ['an object, async', async () => ({ locale: 'fr' }), /gave an object instead of a locale tag/]
  ]
  for (const [name, locale, message] of cases) {
    const log = capturedLog()
    const { app } = await buildTestApp({ plugin: { locale: locale as () => string }, fastify: { logger: log.logger } })
    t.teardown(() => app.close())
    // Truly parallel: every request asks the function before any warning is written.
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => app.inject({ url: LOGIN, headers: i % 2 === 0 ? { 'accept-language': 'es' } : {} })))
    t.same(answers.map((res) => res.statusCode), answers.map(() => 200), `${name}: every page is served`)
    t.same(answers.map((res) => langOf(res.body)), answers.map((_, i) => i % 2 === 0 ? 'es' : 'en'), `${name}: Accept-Language, then the default`)
    const warnings = log.lines.filter((line) => line.level === WARN && line.option === 'locale')
    t.equal(warnings.length, 1, `${name}: one warn`)
    t.equal(warnings[0]?.code, 'FST_SR_INVALID_OPTION')
    t.match(warnings[0]?.msg, message, name)
  }
})

t.test('each kind of mistake is said once, in one app', async (t) => {
  const log = capturedLog()
  const answers = [() => 'ja', () => 7, () => { throw new Error('x') }, () => 'ja', () => 7]
  let i = 0
  const { app } = await buildTestApp({ plugin: { locale: () => answers[i++ % answers.length]() as string }, fastify: { logger: log.logger } })
  t.teardown(() => app.close())
  for (let n = 0; n < 10; n++) await app.inject(LOGIN)
  t.equal(log.lines.filter((line) => line.option === 'locale').length, 3, 'three kinds, three lines')
})
