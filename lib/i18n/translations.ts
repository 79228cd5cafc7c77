// The message catalogues of one app: the shipped locales with the host's `messages` over them, checked at
// start, compiled once per locale and key, looked up with the fallback fr-CA → fr → defaultLocale → en.
// ICU MessageFormat through intl-messageformat: plural rules, numbers and dates come from Intl, none by hand.
import { IntlMessageFormat } from 'intl-messageformat'
import { invalidOption } from '../option-checks.js'
import { warnHostMistakeOnce, type MistakeLog } from '../warnings.js'
import { shippedCatalogues } from './locales/index.js'
import type { MessageKey } from './locales/en.js'

/** A value a message interpolates: text, a number, a date, or for a tag (`<strong>`) a function of its content. */
export type MessageValue = string | number | Date | ((chunks: unknown[]) => unknown)

/** A message of the catalogue with its values: what a route names, for the answer to say in its language. */
export interface Said {
  key: MessageKey
  values?: Record<string, string | number | Date>
}

/** Host messages: per locale tag, some or all keys (docs/languages.md). */
export type HostMessages = Record<string, Partial<Record<MessageKey, string>>>

/** A message's placeholders and tags, from its syntax tree: what every translation of it must keep. */
type Ast = ReturnType<IntlMessageFormat['getAst']>

const SOURCE = 'en'

export interface TranslationsOptions {
  defaultLocale: string
  messages: HostMessages
  /** IANA time zone the times in messages are shown in (option `timeZone`). */
  timeZone: string
}

export class Translations {
  /** Every locale a request may be answered in: the shipped ones and the host's, canonical tags. */
  readonly available: readonly string[]
  readonly defaultLocale: string
  readonly #catalogues = new Map<string, Partial<Record<string, string>>>()
  readonly #compiled = new Map<string, Compiled | string>()
  readonly #formats: ConstructorParameters<typeof IntlMessageFormat>[2]
  #log: MistakeLog | undefined

  constructor (opts: TranslationsOptions) {
    for (const [tag, catalogue] of Object.entries(shippedCatalogues)) this.#catalogues.set(tag, { ...catalogue })
    for (const [tag, messages] of Object.entries(opts.messages)) {
      const canonical = canonicalTag(tag, `messages.${tag}`)
      const into = this.#catalogues.get(canonical) ?? {}
      if (!isPlainObject(messages)) invalidOption(`messages.${tag}`, 'must be an object of messages by key (docs/languages.md)')
      for (const [key, message] of Object.entries(messages)) into[key] = checkedMessage(canonical, key, message, `messages.${tag}.${key}`)
      this.#catalogues.set(canonical, into)
    }
    this.available = [...this.#catalogues.keys()]
    this.defaultLocale = canonicalTag(opts.defaultLocale, 'defaultLocale')
    if (!this.#catalogues.has(this.defaultLocale)) invalidOption('defaultLocale', `must be a locale the section has (${this.available.join(', ')}), or one given in messages`)
    this.#formats = { time: { short: { hour: '2-digit', minute: '2-digit', timeZone: opts.timeZone, timeZoneName: 'short' } } }
  }

  /** Where a missing key's warning goes: the app's log, once it has one. */
  useLog (log: MistakeLog): void {
    this.#log = log
  }

  /**
   * The message `key` in `locale` (one of `available`) with `values`: a string, or with tags an array of
   * its parts (text and what the tags' functions gave). A key the locale and its language lack comes from
   * the default locale, then English, with one warning per locale and key.
   */
  format (locale: string, key: MessageKey, values?: Record<string, MessageValue>): string | unknown[] {
    const id = `${locale}\u0000${key}`
    let message = this.#compiled.get(id)
    if (message === undefined) {
      // A key of no catalogue (a host view's typo) shows as itself, said once: a page, not a 500 on every
      // request. Not kept, as a host may make keys from anything.
      if (!Object.hasOwn(shippedCatalogues.en, key)) return this.#unknown(key)
      message = this.#compile(locale, key)
      this.#compiled.set(id, message)
    }
    if (typeof message === 'string') return message
    // A tag the caller gave no function for keeps its content as plain text (a page title has no markup).
    const all: Record<string, MessageValue> = { ...message.plainTags, ...values }
    return message.format.format(all as Record<string, never>) as string | unknown[]
  }

  #unknown (key: string): string {
    if (this.#log !== undefined) {
      warnHostMistakeOnce(this.#log, `messages:unknown:${key}`, { code: 'FST_SR_MISSING_MESSAGE', key },
        `fastify-schools-resources: a view asked for the message "${key}", which no catalogue has, so the page shows the key. ` +
        'Use a key docs/languages.md lists (a view\'s own words can be written in the view).')
    }
    return String(key)
  }

  #compile (locale: string, key: MessageKey): Compiled | string {
    const own = [locale, language(locale)]
    // English, the source, has every key (its type, and a host's `messages.en` only replaces some).
    const tag = [...own, this.defaultLocale].find((tag) => this.#catalogues.get(tag)?.[key] !== undefined) ?? SOURCE
    const source = this.#catalogues.get(tag)![key]!
    if (!own.includes(tag) && this.#log !== undefined) {
      warnHostMistakeOnce(this.#log, `messages:${locale}:${key}`, { code: 'FST_SR_MISSING_MESSAGE', locale, key },
        `fastify-schools-resources: locale ${locale} has no message "${key}", so pages show the ${tag} one. ` +
        `Add it to messages["${locale}"] (docs/languages.md lists every key).`)
    }
    // The locale's own or its language's message is formatted for the locale itself (en-GB's times, fr-CA's
    // numbers); one from another language, in that language, whose plural forms it was written for.
    const format = new IntlMessageFormat(source, own.includes(tag) ? locale : tag, this.#formats)
    const ast = format.getAst()
    // A message that is only text is kept as its text: nothing to format on each page.
    if (ast.length === 1 && ast[0].type === 0) return ast[0].value
    const plainTags: Record<string, MessageValue> = {}
    for (const name of argumentsOf(ast)) if (name.startsWith('<')) plainTags[name.slice(1, -1)] = joinChunks
    return { format, plainTags }
  }
}

interface Compiled {
  format: IntlMessageFormat
  plainTags: Record<string, MessageValue>
}

function joinChunks (chunks: unknown[]): string {
  return chunks.join('')
}

/** The canonical form of a locale tag (`EN-gb` → `en-GB`); a tag Intl refuses is an option mistake. */
export function canonicalTag (tag: unknown, name: string): string {
  if (typeof tag === 'string') {
    try {
      // One tag in, one out (an empty or malformed one throws).
      return Intl.getCanonicalLocales(tag)[0]!
    } catch {}
  }
  return invalidOption(name, 'must be a BCP 47 language tag, such as "fr" or "cy-GB"')
}

/**
 * An object literal (or one without a prototype): what `messages` and each of its locales must be. A Map,
 * an array or a class instance has no own entries to read, and its messages would be dropped unsaid.
 */
export function isPlainObject (value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** The language of a tag: `fr-CA` → `fr`. */
export function language (tag: string): string {
  return tag.split('-')[0]
}

/**
 * A host's message, checked where it enters: a known key, a string that parses as ICU MessageFormat, with
 * the English message's placeholders and tags (a translation that drops `{time}` or adds `{name}` would
 * show a page with a hole, or fail on every request).
 */
function checkedMessage (tag: string, key: string, message: unknown, name: string): string {
  // Own keys only: `toString` or `__proto__` are not messages.
  if (!Object.hasOwn(shippedCatalogues.en, key)) invalidOption(name, 'is not a message key (docs/languages.md lists them)')
  const english = (shippedCatalogues.en as Record<string, string>)[key]
  if (typeof message !== 'string') invalidOption(name, 'must be a string in ICU MessageFormat')
  let ast: Ast
  try {
    ast = new IntlMessageFormat(message, tag).getAst()
  } catch (error) {
    return invalidOption(name, `must be ICU MessageFormat (${(error as Error).message})`)
  }
  const englishAst = new IntlMessageFormat(english, SOURCE).getAst()
  const want = [...argumentsOf(englishAst)].sort().join(', ')
  const got = [...argumentsOf(ast)].sort().join(', ')
  if (want !== got) invalidOption(name, `must have the placeholders and tags of the English message (${want === '' ? 'none' : want}), not ${got === '' ? 'none' : got}`)
  // A date or time the section does not pass (`{name, date}`) would fail on every page that shows it.
  const dates = datesOf(englishAst)
  for (const date of datesOf(ast)) if (!dates.has(date)) invalidOption(name, `formats {${date}} as a date or time, which the English message does not: keep it as {${date}}`)
  return message
}

/** The names of a message's placeholders (`{name}`) and tags (`<strong>`), at any depth. */
export function argumentsOf (ast: Ast, into = new Set<string>()): Set<string> {
  for (const element of ast) {
    if (element.type === 8) {
      into.add(`<${element.value}>`)
      argumentsOf(element.children, into)
    } else if (element.type !== 0 && 'value' in element) {
      into.add(`{${element.value}}`)
    }
    if ('options' in element) for (const option of Object.values(element.options)) argumentsOf((option as { value: Ast }).value, into)
  }
  return into
}

/** The placeholders a message formats as a date or a time, at any depth. */
function datesOf (ast: Ast, into = new Set<string>()): Set<string> {
  for (const element of ast) {
    if (element.type === 3 || element.type === 4) into.add(element.value)
    if (element.type === 8) datesOf(element.children, into)
    if ('options' in element) for (const option of Object.values(element.options)) datesOf((option as { value: Ast }).value, into)
  }
  return into
}

/** Writing direction of a locale, from Intl's text info. */
export function direction (tag: string): 'ltr' | 'rtl' {
  return directionOf(new Intl.Locale(tag) as Intl.Locale & TextInfoSource)
}

/** What `Intl.Locale` offers of its text info, by engine: a `getTextInfo()` method, or a `textInfo` getter. */
export interface TextInfoSource {
  textInfo?: { direction?: string }
  getTextInfo?: () => { direction?: string }
}

/**
 * The direction a locale's text info gives: `getTextInfo()` on newer engines (Node 24 and later), the
 * `textInfo` getter on older ones (Node 22); both are read, whichever is there wins.
 */
export function directionOf (locale: TextInfoSource): 'ltr' | 'rtl' {
  const info = Object.assign({}, locale.textInfo, locale.getTextInfo?.())
  return info.direction === 'rtl' ? 'rtl' : 'ltr'
}
