import type { FastifyRequest } from 'fastify'
import { invalidOption } from '../option-checks.js'
import { kindOfValue, warnHostMistakeOnce } from '../warnings.js'
import { LocaleNegotiator } from './negotiate.js'
import type { Translations } from './translations.js'

/** Option `locale`: a fixed tag, or the host's choice per request (its member's preference, a path, a cookie). */
export type LocaleOption = string | ((request: FastifyRequest) => string | undefined | Promise<string | undefined>)

/**
 * The locale a page is answered in: the host's `locale` option, else `Accept-Language` negotiated against
 * the locales the app has, else the default. What the host's function gives is checked where it enters:
 * one that throws, rejects or names a locale the app lacks falls back to `Accept-Language`, with one
 * warning per kind of mistake.
 */
export class RequestLocales {
  readonly #negotiator: LocaleNegotiator
  readonly #fixed: string | undefined
  readonly #choose: Exclude<LocaleOption, string> | undefined
  /** Whether an answer's language may depend on `Accept-Language` (it gets `Vary: Accept-Language`). */
  readonly negotiated: boolean

  constructor (translations: Translations, option: unknown) {
    this.#negotiator = new LocaleNegotiator(translations.available, translations.defaultLocale)
    if (typeof option === 'string') {
      this.#fixed = this.#negotiator.match(option)
      if (this.#fixed === undefined) invalidOption('locale', `must be a locale the section has (${translations.available.join(', ')}), or one given in messages; "${option}" is not`)
    } else if (typeof option === 'function') {
      this.#choose = option as Exclude<LocaleOption, string>
    } else if (option !== undefined) {
      invalidOption('locale', 'must be a locale tag, or a function of the request that gives one (or undefined)')
    }
    this.negotiated = this.#fixed === undefined
  }

  /** The locale of a page for `request` (a promise only while a host's function's promise is pending). */
  of (request: FastifyRequest): string | Promise<string> {
    if (this.#fixed !== undefined) return this.#fixed
    if (this.#choose === undefined) return this.fromHeader(request)
    let chosen: ReturnType<Exclude<LocaleOption, string>>
    try {
      chosen = this.#choose(request)
    } catch (error) {
      return this.#mistake(request, 'threw', 'it must not throw; give undefined to let Accept-Language decide', error)
    }
    if (chosen instanceof Promise) {
      return chosen.then((tag) => this.#checked(request, tag), (error: unknown) => this.#mistake(request, 'rejected', 'its promise must not reject; give undefined to let Accept-Language decide', error))
    }
    return this.#checked(request, chosen)
  }

  /** The locale from `Accept-Language` alone. */
  fromHeader (request: FastifyRequest): string {
    return this.#negotiator.negotiate(request.headers['accept-language'])
  }

  /**
   * The locale of a 500 or 503 page: a fixed `locale`, else `Accept-Language`; never the host's function,
   * which may be what failed (or need the store that is down).
   */
  ofErrorPage (request: FastifyRequest): string {
    return this.#fixed ?? this.fromHeader(request)
  }

  #checked (request: FastifyRequest, tag: unknown): string {
    if (tag === undefined) return this.fromHeader(request)
    if (typeof tag !== 'string') return this.#mistake(request, `gave ${kindOfValue(tag)} instead of a locale tag`, 'give a tag such as "fr", or undefined', undefined, kindOfValue(tag))
    const locale = this.#negotiator.match(tag)
    if (locale !== undefined) return locale
    return this.#mistake(request, 'gave a locale the section does not have', 'give one of the shipped locales or of messages, or undefined', undefined, JSON.stringify(tag.slice(0, 50)))
  }

  #mistake (request: FastifyRequest, problem: string, fix: string, error: unknown, given?: string): string {
    warnHostMistakeOnce(request.server.log, `locale:${problem}`, { code: 'FST_SR_INVALID_OPTION', option: 'locale', ...(error === undefined ? {} : { err: error }), ...(given === undefined ? {} : { given }) },
      `fastify-schools-resources: the locale function ${problem}, so pages use Accept-Language instead. Fix the function: ${fix}.`)
    return this.fromHeader(request)
  }
}
