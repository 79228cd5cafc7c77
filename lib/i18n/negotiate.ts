import Negotiator from 'negotiator'

/** How many distinct `Accept-Language` headers keep their answer (browsers send few). */
export const LANGUAGE_ANSWERS_KEPT = 256

/**
 * `Accept-Language` against the locales an app has: q-values in order, a region falling back to its
 * language (`fr-CA` → `fr`), anything unknown to the default. Negotiator, which the section uses for
 * `Accept` already. Each distinct header is negotiated once (bounded: the oldest answer goes first).
 */
export class LocaleNegotiator {
  readonly #available: string[]
  readonly #fallback: string
  readonly #answers = new Map<string, string>()

  constructor (available: readonly string[], fallback: string) {
    // The default first: `*`, which matches every locale alike, goes to it (equal q-values go by the header's order).
    this.#available = [fallback, ...available.filter((tag) => tag !== fallback)]
    this.#fallback = fallback
  }

  /** The locale for a request's `Accept-Language` header (the default without one). */
  negotiate (header: string | undefined): string {
    if (header === undefined) return this.#fallback
    let locale = this.#answers.get(header)
    if (locale === undefined) {
      locale = new Negotiator({ headers: { 'accept-language': header } }).language(this.#available) ?? this.#fallback
      if (this.#answers.size >= LANGUAGE_ANSWERS_KEPT) this.#answers.delete(this.#answers.keys().next().value!)
      this.#answers.set(header, locale)
    }
    return locale
  }

  /** A tag a host gave (its `locale` option) as one of the locales: itself, else its language; else undefined. */
  match (tag: string): string | undefined {
    // Only a tag: Intl refuses `*`, lists and q-values, which Negotiator would read as a header.
    try {
      Intl.getCanonicalLocales(tag)
    } catch {
      return undefined
    }
    return new Negotiator({ headers: { 'accept-language': tag } }).language(this.#available)
  }
}
