import Negotiator from 'negotiator'

/** How many distinct `Accept-Language` headers and host tags keep their answer (browsers send few). */
export const LANGUAGE_ANSWERS_KEPT = 256
/**
 * How many characters of an `Accept-Language` header are read, up to the last whole tag in them. Browsers
 * send a few tags (under 100 characters); a 16 KB header of thousands would cost ~0.4 ms to parse each
 * time it changes, and keep 4 MB in the kept answers.
 */
export const LANGUAGE_HEADER_READ = 512

/**
 * `Accept-Language` against the locales an app has: q-values in order, a region falling back to its
 * language (`fr-CA` → `fr`), anything unknown to the default. Negotiator, which the section uses for
 * `Accept` already. Each distinct header, and each tag a host's function gives, is negotiated once
 * (bounded: the oldest answer goes first).
 */
export class LocaleNegotiator {
  readonly #available: string[]
  readonly #fallback: string
  // Answers by header (`h:`) and by a host's tag (`t:`): a locale, or undefined for none.
  readonly #answers = new Map<string, string | undefined>()

  constructor (available: readonly string[], fallback: string) {
    // The default first: `*`, which matches every locale alike, goes to it (equal q-values go by the header's order).
    this.#available = [fallback, ...available.filter((tag) => tag !== fallback)]
    this.#fallback = fallback
  }

  /** The locale for a request's `Accept-Language` header (the default without one). */
  negotiate (header: string | undefined): string {
    if (header === undefined) return this.#fallback
    const read = header.length <= LANGUAGE_HEADER_READ ? header : header.slice(0, Math.max(0, header.lastIndexOf(',', LANGUAGE_HEADER_READ)))
    return this.#answer(`h:${read}`, () => new Negotiator({ headers: { 'accept-language': read } }).language(this.#available)) ?? this.#fallback
  }

  /** A tag a host gave (its `locale` option) as one of the locales: itself, else its language; else undefined. */
  match (tag: string): string | undefined {
    return this.#answer(`t:${tag}`, () => {
      // Only a tag: Intl refuses `*`, lists and q-values, which Negotiator would read as a header.
      try {
        Intl.getCanonicalLocales(tag)
      } catch {
        return undefined
      }
      return new Negotiator({ headers: { 'accept-language': tag } }).language(this.#available)
    })
  }

  /** The kept answer for `key` (a header, or a host's tag), else `find`'s, kept (the oldest goes past the bound). */
  #answer (key: string, find: () => string | undefined): string | undefined {
    if (this.#answers.has(key)) return this.#answers.get(key)
    const answer = find()
    if (this.#answers.size >= LANGUAGE_ANSWERS_KEPT) this.#answers.delete(this.#answers.keys().next().value!)
    this.#answers.set(key, answer)
    return answer
  }
}
