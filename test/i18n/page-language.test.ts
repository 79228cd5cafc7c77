import t from 'tap'
import { html } from '../../lib/pages/html.js'
import { direction, directionOf, Translations } from '../../lib/i18n/translations.js'
import { PageLanguages } from '../../lib/pages/page-language.js'
import { pageLanguage } from '../helpers/page-language.js'

t.test('t: text; tHtml: escaped text and values, tags by the caller', async (t) => {
  const lang = pageLanguage('fr', { fr: { 'layout.skipLink': 'Aller au contenu' } })
  t.equal(lang.locale, 'fr')
  t.equal(lang.dir, 'ltr')
  t.equal(lang.t('layout.skipLink'), 'Aller au contenu')
  t.equal(lang.t('nav.signedInAs', { name: 'Zoë & <Jo>' }), 'Connecté en tant que Zoë & <Jo>', 'a tag without markup keeps its content as text')
  const strong = (content: { value: string }) => html`<strong class="who">${content}</strong>`
  t.equal(String(lang.tHtml('nav.signedInAs', { name: 'Zoë & <Jo>' }, { strong })), 'Connecté en tant que <strong class="who">Zoë &amp; &lt;Jo&gt;</strong>')
  t.equal(String(lang.tHtml('nav.signedInAs', { name: '<i>' })), 'Connecté en tant que &lt;i&gt;', 'without the tag\'s function: its content, escaped')
  t.equal(String(lang.tHtml('layout.title', { page: 'A & B', site: '<S>' })), 'A &amp; B | &lt;S&gt;', 'values in a message without tags are escaped')
  t.equal(String(lang.tHtml('layout.skipLink')), 'Aller au contenu')
  const when = new Date(0)
  t.equal(lang.t('layout.title', { page: when, site: 'S' }), `${String(when)} | S`, 'a date where text is expected: as text')
  const quoted = pageLanguage('en', { en: { 'layout.skipLink': 'Skip to "content" & more' } })
  t.equal(String(quoted.tHtml('layout.skipLink')), 'Skip to &quot;content&quot; &amp; more', 'a text-only message is escaped too')
})

t.test('the page language of a locale is made once per app', async (t) => {
  const languages = new PageLanguages(new Translations({ defaultLocale: 'en', messages: {}, timeZone: 'UTC' }))
  t.equal(languages.of('de'), languages.of('de'))
  t.not(languages.of('de'), languages.of('es'))
})

t.test('direction: either engine\'s text info, whichever this Node has', async (t) => {
  // Node 22 has the `textInfo` getter, Node 24 and later `getTextInfo()`: both shapes are read.
  t.equal(directionOf({ getTextInfo: () => ({ direction: 'rtl' }) }), 'rtl', 'getTextInfo()')
  t.equal(directionOf({ textInfo: { direction: 'rtl' } }), 'rtl', 'textInfo')
  t.equal(directionOf({ getTextInfo: () => ({ direction: 'ltr' }) }), 'ltr')
  t.equal(directionOf({}), 'ltr', 'neither: left to right')
})

t.test('direction: right-to-left scripts', async (t) => {
  for (const tag of ['ar', 'he', 'fa', 'ur', 'ar-EG']) t.equal(direction(tag), 'rtl', tag)
  for (const tag of ['en', 'cy', 'mi', 'fr-CA', 'en-XA', 'zh-Hant-TW']) t.equal(direction(tag), 'ltr', tag)
  t.equal(pageLanguage('ar', { ar: { 'nav.signIn': 'تسجيل الدخول' } }).dir, 'rtl')
})
