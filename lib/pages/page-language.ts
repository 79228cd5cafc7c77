import escapeHtml from 'escape-html'
import type { MessageKey } from '../i18n/locales/en.js'
import { direction, type MessageValue, type Translations } from '../i18n/translations.js'
import { SafeHtml } from './html.js'

/** Values a message interpolates in a view: text, numbers, dates (docs/languages.md). */
export type MessageValues = Record<string, string | number | Date>

/** A tag's markup in {@link PageLanguage.tHtml}: its content, escaped, to wrap (`<strong>`). */
export type TagMarkup = (content: SafeHtml) => SafeHtml

/** The language a page is rendered in, and its messages: what `PageContext` carries for every view. */
export interface PageLanguage {
  /** The locale tag of the page (`<html lang>`, `Content-Language`). */
  locale: string
  /** Writing direction of the locale: `rtl` for Arabic, Hebrew and the like. */
  dir: 'ltr' | 'rtl'
  /** The message `key` as text (a tag keeps its content as plain text). Put it in `html` to escape it. */
  t: (key: MessageKey, values?: MessageValues) => string
  /** The message `key` as markup: its text and values escaped, its tags (`<strong>`) given by `tags`. */
  tHtml: (key: MessageKey, values?: MessageValues, tags?: Record<string, TagMarkup>) => SafeHtml
}

function markup (part: unknown): string {
  return part instanceof SafeHtml ? part.value : escapeHtml(String(part))
}

/** One app's page languages, made once per locale. */
export class PageLanguages {
  readonly #translations: Translations
  readonly #made = new Map<string, PageLanguage>()

  constructor (translations: Translations) {
    this.#translations = translations
  }

  /** The page language of `locale`, one of the app's locales. */
  of (locale: string): PageLanguage {
    let made = this.#made.get(locale)
    if (made === undefined) {
      made = this.#make(locale)
      this.#made.set(locale, made)
    }
    return made
  }

  #make (locale: string): PageLanguage {
    const translations = this.#translations
    const t = (key: MessageKey, values?: MessageValues): string => {
      const out = translations.format(locale, key, values)
      return typeof out === 'string' ? out : out.join('')
    }
    const tHtml = (key: MessageKey, values?: MessageValues, tags: Record<string, TagMarkup> = {}): SafeHtml => {
      const all: Record<string, MessageValue> = { ...values }
      for (const [name, wrap] of Object.entries(tags)) all[name] = (chunks: unknown[]) => wrap(new SafeHtml(chunks.map(markup).join('')))
      const out = translations.format(locale, key, all)
      return new SafeHtml(typeof out === 'string' ? escapeHtml(out) : out.map(markup).join(''))
    }
    return { locale, dir: direction(locale), t, tHtml }
  }
}
