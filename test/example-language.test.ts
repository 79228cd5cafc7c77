import t from 'tap'
import { buildApp } from '../examples/app.js'
import { LANGUAGES, sameSitePath } from '../examples/language.js'
import { signIn } from './helpers/app.js'
import { capturedLog } from './helpers/log-capture.js'

const config = { sessionSecret: 's'.repeat(40), demoEmail: 'teacher@example.org', demoPassword: 'correct horse battery staple' }
const LOGIN = '/Security/login'
const MATHS = '/schools/resources/resources/maths/'

function langOf (body: string): string | undefined {
  return /<html lang="([^"]+)"/.exec(body)?.[1]
}

/** The switch's links: language, address, and whether it is the page's. */
function switchLinks (body: string): Array<{ tag: string, href: string, current: boolean, name: string }> {
  const nav = /<nav class="language-switch" aria-label="[^"]+">([\s\S]*?)<\/nav>/.exec(body)?.[1] ?? ''
  return [...nav.matchAll(/<a href="([^"]+)" lang="([^"]+)" hreflang="[^"]+"( aria-current="true")?>([^<]+)<\/a>/g)]
    .map((m) => ({ href: m[1].replace(/&amp;/g, '&'), tag: m[2], current: m[3] !== undefined, name: m[4] }))
}

t.test('the example\'s pages follow Accept-Language and carry the language switch', async (t) => {
  const log = capturedLog()
  const app = await buildApp({ ...config, logger: log.logger })
  t.teardown(() => app.close())
  const french = await app.inject({ url: `${LOGIN}?BackURL=%2Fschools%2Fresources%2F`, headers: { 'accept-language': 'fr-CA,fr;q=0.9' } })
  t.equal(french.statusCode, 200)
  t.equal(langOf(french.body), 'fr')
  t.match(french.body, '<nav class="language-switch" aria-label="Langue">')
  const links = switchLinks(french.body)
  t.same(links.map((l) => l.name), ['English', 'Français', 'Español', 'Deutsch', 'Cymraeg'])
  t.same(links.map((l) => l.tag), LANGUAGES.map(([tag]) => tag))
  t.same(links.filter((l) => l.current).map((l) => l.tag), ['fr'], 'the page\'s language is marked')
  t.equal(links[4].href, `/language?set=cy&back=${encodeURIComponent(`${LOGIN}?BackURL=%2Fschools%2Fresources%2F`)}`, 'each link comes back to this page')
  t.equal(langOf((await app.inject({ url: LOGIN, headers: { 'accept-language': 'ja' } })).body), 'en', 'else the default')
  t.same(log.lines.filter((line) => line.option === 'locale'), [], 'no warning')
})

t.test('choosing a language: a cookie, then back to the page; it wins over Accept-Language', async (t) => {
  const app = await buildApp(config)
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const page = await app.inject({ url: `${MATHS}?subject=Mathematics`, headers: { cookie, 'accept-language': 'de' } })
  t.equal(langOf(page.body), 'de')
  const welsh = switchLinks(page.body).find((l) => l.tag === 'cy')!
  const chose = await app.inject({ url: welsh.href, headers: { cookie } })
  t.equal(chose.statusCode, 303)
  t.equal(chose.headers.location, `${MATHS}?subject=Mathematics`, 'back to the page, its filter kept')
  const set = chose.cookies.find((c) => c.name === 'lang')!
  t.match(set, { value: 'cy', path: '/', httpOnly: true, sameSite: 'Lax' })
  t.ok(set.maxAge! > 30 * 24 * 60 * 60, 'remembered')
  const after = await app.inject({ url: `${MATHS}?subject=Mathematics`, headers: { cookie: `${cookie}; lang=cy`, 'accept-language': 'de' } })
  t.equal(after.statusCode, 200)
  t.equal(langOf(after.body), 'cy', 'the choice beats the browser\'s')
  t.same(switchLinks(after.body).filter((l) => l.current).map((l) => l.tag), ['cy'])
  t.match(after.body, 'Riverside School', 'the host\'s siteName in every language')
})

t.test('the switch sends back only to this site, and sets only a language it offers', async (t) => {
  const app = await buildApp(config)
  t.teardown(() => app.close())
  for (const back of ['https://evil.example/', '//evil.example/x', '/\\evil.example/x', 'javascript:alert(1)', '', 'schools/resources/']) {
    const res = await app.inject({ url: `/language?set=fr&back=${encodeURIComponent(back)}` })
    t.equal(res.statusCode, 303, back)
    t.equal(res.headers.location, '/schools/resources/', `${JSON.stringify(back)}: the section's index`)
  }
  const none = await app.inject('/language?set=fr')
  t.equal(none.headers.location, '/schools/resources/')
  t.equal(none.cookies.find((c) => c.name === 'lang')?.value, 'fr')
  for (const set of ['ja', 'fr;q=1', '', 'FR-fr']) {
    const res = await app.inject(`/language?set=${encodeURIComponent(set)}&back=%2FSecurity%2Flogin`)
    t.equal(res.statusCode, 303)
    t.equal(res.headers.location, '/Security/login')
    t.equal(res.cookies.find((c) => c.name === 'lang'), undefined, `${set}: no cookie`)
  }
  const log = capturedLog()
  const logged = await buildApp({ ...config, logger: log.logger })
  t.teardown(() => logged.close())
  const forged = await logged.inject({ url: LOGIN, headers: { cookie: 'lang=xx', 'accept-language': 'es' } })
  t.equal(langOf(forged.body), 'es', 'a cookie of no offered language: Accept-Language decides')
  t.same(log.lines.filter((line) => line.option === 'locale'), [], 'and nothing to warn about')
  t.equal(sameSitePath('/a/../b?x=1#frag'), '/b?x=1', 'normalised, no fragment')
  t.equal(sameSitePath(42), undefined)
  t.equal(sameSitePath(`/${'x'.repeat(2001)}`), undefined, 'a long address is refused')
})

t.test('languageSwitch: false leaves the built-in layout, and pages still negotiate', async (t) => {
  const app = await buildApp({ ...config, languageSwitch: false })
  t.teardown(() => app.close())
  const res = await app.inject({ url: LOGIN, headers: { 'accept-language': 'es', cookie: 'lang=cy' } })
  t.equal(langOf(res.body), 'es', 'no cookie is read')
  t.notMatch(res.body, 'language-switch')
  t.equal((await app.inject('/language?set=fr')).statusCode, 404)
})
