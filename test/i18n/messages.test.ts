import t from 'tap'
import { buildTestApp, signIn } from '../helpers/app.js'
import { capturedLog, WARN } from '../helpers/log-capture.js'
import { Translations } from '../../lib/i18n/translations.js'
import en from '../../lib/i18n/locales/en.js'

const LOGIN = '/Security/login'

function langOf (body: string): string | undefined {
  return /<html lang="([^"]+)"/.exec(body)?.[1]
}

t.test('a partial override changes one sentence; the rest of the locale stays shipped', async (t) => {
  const { app } = await buildTestApp({ plugin: { messages: { FR: { 'nav.signIn': 'Connexion des familles' } } } })
  t.teardown(() => app.close())
  const french = await app.inject({ url: LOGIN, headers: { 'accept-language': 'fr' } })
  t.match(french.body, '>Connexion des familles</a>', 'the host\'s sentence (its tag canonicalised)')
  t.match(french.body, '>Aller au contenu</a>', 'a shipped French sentence')
  const english = await app.inject({ url: LOGIN, headers: { 'accept-language': 'en' } })
  t.match(english.body, '>Sign in</a>', 'other locales keep theirs')
})

t.test('a locale of the host\'s own: right-to-left Arabic, with the missing keys from the default and one warn each', async (t) => {
  const log = capturedLog()
  const { app } = await buildTestApp({
    plugin: { messages: { ar: { 'nav.signIn': 'تسجيل الدخول', 'site.name': 'موارد المدرسة' } } },
    fastify: { logger: log.logger }
  })
  t.teardown(() => app.close())
  const answers = await Promise.all(Array.from({ length: 10 }, () => app.inject({ url: LOGIN, headers: { 'accept-language': 'ar-EG, en;q=0.5' } })))
  for (const res of answers) {
    t.match(res.body, '<html lang="ar" dir="rtl">')
    t.equal(res.headers['content-language'], 'ar')
    t.match(res.body, '>تسجيل الدخول</a>')
    t.match(res.body, '>Skip to content</a>', 'a key Arabic lacks: the default locale\'s message')
  }
  const missing = log.lines.filter((line) => line.code === 'FST_SR_MISSING_MESSAGE')
  t.ok(missing.length > 0, 'missing keys are said')
  t.ok(missing.every((line) => line.level === WARN && line.locale === 'ar'))
  const keys = missing.map((line) => line.key as string)
  t.same(keys, [...new Set(keys)], 'one warn per locale and key, however many pages asked')
  t.ok(keys.includes('layout.skipLink'))
  t.notOk(keys.includes('nav.signIn'), 'a key it has is not said')
  t.match(missing.find((line) => line.key === 'layout.skipLink')!.msg, /locale ar has no message "layout.skipLink", so pages show the en one/)
})

t.test('a host locale falls back to its language before the default, with no warning for that', async (t) => {
  const log = capturedLog()
  const { app } = await buildTestApp({ plugin: { defaultLocale: 'de', messages: { 'fr-CA': { 'nav.signIn': 'Ouvrir une session' } } }, fastify: { logger: log.logger } })
  t.teardown(() => app.close())
  const res = await app.inject({ url: LOGIN, headers: { 'accept-language': 'fr-CA' } })
  t.match(res.body, '<html lang="fr-CA" dir="ltr">')
  t.match(res.body, '>Ouvrir une session</a>')
  t.match(res.body, '>Aller au contenu</a>', 'fr-CA → fr')
  t.same(log.lines.filter((line) => line.code === 'FST_SR_MISSING_MESSAGE'), [])
  // A new language with a default locale: the default's message, then English.
  const mi = new Translations({ defaultLocale: 'cy', messages: { mi: { 'nav.signIn': 'Takiuru' } }, timeZone: 'UTC' })
  t.equal(mi.format('mi', 'nav.signIn'), 'Takiuru')
  t.equal(mi.format('mi', 'layout.skipLink'), 'Neidio i’r cynnwys', 'te reo Māori missing a key: the Welsh default')
  t.equal(mi.format('mi', 'layout.skipLink'), 'Neidio i’r cynnwys', 'compiled once, the same again')
})

t.test('a member\'s page in a host locale: tags and values through the host\'s message', async (t) => {
  const { app } = await buildTestApp({ plugin: { locale: 'mi', messages: { mi: { 'nav.signedInAs': 'Kua takiuru hei <strong>{name}</strong>' } } } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const res = await app.inject({ url: '/schools/resources/', headers: { cookie } })
  t.match(res.body, '<html lang="mi" dir="ltr">')
  t.match(res.body, 'Kua takiuru hei <strong>Ada Teacher</strong>')
})

t.test('a message, a tag or an option the section cannot use fails start-up naming it', async (t) => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['not ICU', { fr: { 'nav.signIn': 'Se {connecter' } }, /messages\.fr\.nav\.signIn.*ICU MessageFormat/],
    ['a placeholder English lacks', { fr: { 'nav.signIn': 'Se connecter, {name}' } }, /messages\.fr\.nav\.signIn.*placeholders and tags of the English message \(none\), not \{name\}/],
    ['a placeholder dropped', { de: { 'nav.signedInAs': 'Angemeldet als <strong>jemand</strong>' } }, /messages\.de\.nav\.signedInAs.*\(<strong>, \{name\}\), not <strong>$/m],
    ['every placeholder dropped', { fr: { 'layout.title': 'Ressources' } }, /messages\.fr\.layout\.title.*\(\{page\}, \{site\}\), not none/],
    ['another tag', { de: { 'nav.signedInAs': 'Angemeldet als <b>{name}</b>' } }, /messages\.de\.nav\.signedInAs.*not <b>, \{name\}/],
    ['a tag in a plain message', { es: { 'nav.signIn': '<em>Entrar</em>' } }, /messages\.es\.nav\.signIn/],
    ['a date English does not format', { fr: { 'serverError.code': 'Code : {code, date}' } }, /messages\.fr\.serverError\.code.*formats \{code\} as a date or time/],
    ['a date in a select', { fr: { 'layout.title': '{page, select, other {{site, date, short}}}' } }, /messages\.fr\.layout\.title.*formats \{site\} as a date or time/],
    ['a time in a tag', { fr: { 'nav.signedInAs': 'Connecté : <strong>{name, time}</strong>' } }, /messages\.fr\.nav\.signedInAs.*formats \{name\} as a date or time/],
    ['an unknown key', { fr: { 'nav.signin': 'Se connecter' } }, /messages\.fr\.nav\.signin.*is not a message key/],
    ['a key of Object.prototype', { fr: { toString: 'x' } }, /messages\.fr\.toString.*is not a message key/],
    ['a key named __proto__', { fr: JSON.parse('{"__proto__": "x"}') }, /messages\.fr\.__proto__.*is not a message key/],
    ['not a string', { fr: { 'nav.signIn': 42 } }, /messages\.fr\.nav\.signIn.*must be a string/],
    ['a tag Intl refuses', { 'not a tag': { 'nav.signIn': 'x' } }, /messages\.not a tag.*BCP 47/],
    ['an empty tag', { '': { 'nav.signIn': 'x' } }, /"messages\.": must be a BCP 47/],
    ['a locale that is not an object', { fr: 'Se connecter' }, /"messages\.fr": must be an object/],
    ['a locale that is an array', { fr: ['Se connecter'] }, /"messages\.fr": must be an object/],
    ['messages not an object', 'fr', /"messages": must be an object/],
    ['messages null', null, /"messages": must be an object/],
    // A Map has no own entries to read: its messages would be dropped without a word.
    ['messages a Map', new Map([['fr', { 'nav.signIn': 'Entrer' }]]), /"messages": must be an object/],
    ['a locale that is a Map', { fr: new Map([['nav.signIn', 'Entrer']]) }, /"messages\.fr": must be an object/]
  ]
  for (const [name, messages, message] of cases) {
    await t.rejects(buildTestApp({ plugin: { messages: messages as Record<string, Record<string, string>> } }), { code: 'FST_SR_INVALID_OPTION', message }, name)
  }
  for (const [defaultLocale, message] of [['ja', /"defaultLocale": must be a locale the section has \(en, cy, de, es, fr\)/], ['fr-CA', /"defaultLocale": must be a locale/], ['no tag', /"defaultLocale": must be a BCP 47/], [7, /"defaultLocale": must be a BCP 47/]] as const) {
    await t.rejects(buildTestApp({ plugin: { defaultLocale: defaultLocale as string } }), { code: 'FST_SR_INVALID_OPTION', message }, String(defaultLocale))
  }
  // Objects without a prototype are plain objects too.
  const bare = Object.assign(Object.create(null) as Record<string, Record<string, string>>, { mi: Object.assign(Object.create(null) as Record<string, string>, { 'nav.signIn': 'Takiuru' }) })
  const { app: plain } = await buildTestApp({ plugin: { defaultLocale: 'mi', messages: bare } })
  t.teardown(() => plain.close())
  t.match((await plain.inject('/Security/login')).body, 'Takiuru')
  const { app } = await buildTestApp({ plugin: { defaultLocale: 'mi', messages: { mi: { 'nav.signIn': 'Takiuru' } } } })
  t.teardown(() => app.close())
  t.equal(langOf((await app.inject({ url: LOGIN, headers: { 'accept-language': 'ja' } })).body), 'mi', 'a default locale given in messages')
  for (const timeZone of ['Mars/Olympus', '', 12]) {
    await t.rejects(buildTestApp({ plugin: { timeZone: timeZone as string } }), { code: 'FST_SR_INVALID_OPTION', message: /"timeZone": must be an IANA time zone/ }, String(timeZone))
  }
})

t.test('host messages in ICU: quoted text, a placeholder kept, only text', async (t) => {
  const translations = new Translations({ defaultLocale: 'en', messages: { fr: { 'nav.signIn': 'L\'\'accès', 'layout.title': '{site} — {page}' } }, timeZone: 'UTC' })
  t.equal(translations.format('fr', 'nav.signIn'), 'L\'accès', 'a quoted apostrophe is text')
  t.equal(translations.format('fr', 'layout.title', { page: 'Maths', site: 'Riverside' }), 'Riverside — Maths', 'placeholders in another order')
  t.equal(translations.format('en', 'layout.title', { page: '<b>', site: 'x' }), '<b> | x', 'values are not escaped here: the views do that')
  const selecting = new Translations({ defaultLocale: 'en', messages: { de: { 'layout.title': '{page, select, Start {{site}} other {{page} – {site}}}' } }, timeZone: 'UTC' })
  t.equal(selecting.format('de', 'layout.title', { page: 'Start', site: 'Schule' }), 'Schule', 'a select over a placeholder English has')
  t.equal(selecting.format('de', 'layout.title', { page: 'Mathe', site: 'Schule' }), 'Mathe – Schule')
})

t.test('timeZone: a {time, time, short} message is shown in the zone', async (t) => {
  // A catalogue with a time in it (the lockout's end is one such message).
  const { Translations: Timed } = t.mockRequire<typeof import('../../lib/i18n/translations.js')>('../../lib/i18n/translations.js', {
    '../../lib/i18n/locales/index.js': { shippedCatalogues: { en: { ...en, 'test.until': 'Until {time, time, short}' }, fr: { 'test.until': 'Jusqu’à {time, time, short}' } } }
  })
  const at = new Date('2026-01-15T09:05:00Z')
  const utc = new Timed({ defaultLocale: 'en', messages: {}, timeZone: 'UTC' })
  const auckland = new Timed({ defaultLocale: 'en', messages: {}, timeZone: 'Pacific/Auckland' })
  const key = 'test.until' as 'nav.signIn'
  t.equal(utc.format('en', key, { time: at }), 'Until 09:05 AM UTC')
  t.match(auckland.format('en', key, { time: at }), /^Until 10:05 PM GMT\+13$/, 'New Zealand summer time')
  t.match(auckland.format('fr', key, { time: at }), /^Jusqu’à 22:05 UTC\+13$/, 'in the locale\'s own words')
})

t.test('a view asking for a key no catalogue has: the key shown, said once, no 500', async (t) => {
  const log = capturedLog()
  const views = { login: (_data: unknown, ctx: { t: (key: string) => string }) => ({ title: ctx.t('login.titel'), body: `<p>${ctx.t('toString')}</p>` }) }
  const { app } = await buildTestApp({ plugin: { views: views as never }, fastify: { logger: log.logger } })
  t.teardown(() => app.close())
  for (const language of ['en', 'fr', 'en']) {
    const res = await app.inject({ url: LOGIN, headers: { 'accept-language': language } })
    t.equal(res.statusCode, 200, language)
    t.match(res.body, /<title>login\.titel \| /)
    t.match(res.body, '<p>toString</p>', 'a key of Object.prototype is no message either')
  }
  const said = log.lines.filter((line) => line.code === 'FST_SR_MISSING_MESSAGE')
  t.same(said.map((line) => line.key), ['login.titel', 'toString'], 'once per key, whatever the locale')
  t.match(said[0].msg, /a view asked for the message "login\.titel", which no catalogue has, so the page shows the key\. Use a key docs\/languages\.md lists/)
  // Without a log (a Translations of its own): the key all the same.
  t.equal(new Translations({ defaultLocale: 'en', messages: {}, timeZone: 'UTC' }).format('en', 'nope' as never), 'nope')
})

t.test('a region of a shipped language formats as the region: en-GB times, with English messages', async (t) => {
  const translations = new Translations({ defaultLocale: 'en', messages: { 'en-GB': {} }, timeZone: 'Europe/London' })
  const time = new Date('2026-07-01T16:05:00Z')
  t.equal(translations.format('en-GB', 'login.lockedOut', { time }), 'Too many failed sign-in attempts. Try again after 17:05 BST.', 'en-GB: a 24-hour clock')
  t.equal(translations.format('en', 'login.lockedOut', { time }), 'Too many failed sign-in attempts. Try again after 05:05 PM GMT+1.', 'en: as before')
})
