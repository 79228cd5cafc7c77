// The language fields of a PageContext, for tests that call the views directly.
import { PageLanguages, type PageLanguage } from '../../lib/pages/page-language.js'
import { Translations, type HostMessages } from '../../lib/i18n/translations.js'

/** `locale`, `dir`, `t` and `tHtml` of one locale, with the shipped catalogues and `messages` over them. */
export function pageLanguage (locale = 'en', messages: HostMessages = {}): PageLanguage {
  return new PageLanguages(new Translations({ defaultLocale: 'en', messages, timeZone: 'UTC' })).of(locale)
}

/** English, as a page with no other choice gets it. */
export const english = pageLanguage()
