// The language of what the section's routes say outside their views: a refused sign-in's message, a
// reset page's error, the `message` of a JSON answer, the 500 and 503 pages. The routes name a message
// (a key and its values); it is written in the answer's locale where the answer is made. The FST_SR_*
// errors themselves keep their English messages: those are for logs and `errorCodes`.
import { STATUS_CODES } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { RequestLocales } from '../i18n/request-locale.js'
import { Translations, type Said } from '../i18n/translations.js'
import { kAnswerLanguage } from '../symbols.js'
import { sayLanguage } from './page-renderer.js'
import { PageLanguages, type PageLanguage } from './page-language.js'

export type { Said }

/** A message whose values are messages too (a notice naming a duration), written by its function. */
export type Composed = (language: Pick<PageLanguage, 't'>) => string

/** What a page says: a message, one made of messages, or a host's own text (a `validatePassword` sentence) as given. */
export type Saying = Said | Composed | string

/** The message of `said` in the page language `language` (a host's text as it is). */
export function sayIn (language: Pick<PageLanguage, 't'>, said: Saying): string {
  if (typeof said === 'string') return said
  if (typeof said === 'function') return said(language)
  return language.t(said.key, said.values)
}

/**
 * The language of a 500 or 503 page: what `<html lang dir>` says, its messages, and whether it varies
 * with `Accept-Language` (not with a fixed `locale`).
 */
export type ErrorPageLanguage = Pick<PageLanguage, 'locale' | 'dir' | 't'> & { negotiated: boolean }

export class AnswerLanguage {
  readonly #languages: PageLanguages
  readonly #locales: RequestLocales

  constructor (translations: Translations, locales: RequestLocales) {
    this.#languages = new PageLanguages(translations)
    this.#locales = locales
  }

  /**
   * The message `said` in the locale of `reply`'s request, as its page would be (the host's `locale`
   * option, else Accept-Language); the answer says its language (and varies with the header).
   */
  async say (reply: FastifyReply, said: Said | Composed): Promise<string> {
    const locale = await this.#locales.of(reply.request)
    sayLanguage(reply, locale, this.#locales.negotiated)
    // A message made of messages finds them all in the one locale (the host's function asked once).
    return sayIn(this.#languages.of(locale), said)
  }

  /** A JSON error of Fastify's shape, `{ statusCode, code, error, message }`, its `message` in the request's locale. */
  async sendJsonError (reply: FastifyReply, statusCode: number, code: string, said: Said | Composed): Promise<FastifyReply> {
    const message = await this.say(reply, said)
    return reply.code(statusCode).send({ statusCode, code, error: STATUS_CODES[statusCode], message })
  }

  /**
   * The language of a 500 or 503 page for `request`: a fixed `locale`, else Accept-Language, never the
   * host's `locale` function, which may be what failed (or need the store that is down).
   */
  errorPage (request: FastifyRequest): ErrorPageLanguage {
    return { ...this.#languages.of(this.#locales.ofErrorPage(request)), negotiated: this.#locales.negotiated }
  }

  /** The message `said` in `locale`, one of the app's. */
  text (locale: string, said: Said): string {
    return sayIn(this.#languages.of(locale), said)
  }
}

// Where no section's language is at hand (a host's own use of storeErrorHandler outside the section's
// instance): the shipped English, made on first use.
let shipped: AnswerLanguage | undefined
function shippedEnglish (): AnswerLanguage {
  if (shipped === undefined) {
    const translations = new Translations({ defaultLocale: 'en', messages: {}, timeZone: 'UTC' })
    shipped = new AnswerLanguage(translations, new RequestLocales(translations, 'en'))
  }
  return shipped
}

/** The message `said` in the shipped English: an error's own message, for the log. */
export function inEnglish (said: Said): string {
  return shippedEnglish().text('en', said)
}

/**
 * Puts the section's answer language on `instance`, for the error pages of its requests (and of the
 * contexts made inside it from now on) to find through `request.server`. A plain property rather than a
 * decoration: a second section in the same context keeps its own on its own instance.
 */
export function setAnswerLanguage (instance: FastifyInstance, language: AnswerLanguage): void {
  (instance as unknown as Record<symbol, AnswerLanguage>)[kAnswerLanguage] = language
}

/** Whether `instance` (or a context it sits in) has a section's answer language. */
export function hasAnswerLanguage (instance: FastifyInstance): boolean {
  return (instance as unknown as Record<symbol, AnswerLanguage | undefined>)[kAnswerLanguage] !== undefined
}

/** The answer language of the section `request` was routed through, else the shipped English. */
export function answerLanguageOf (request: FastifyRequest): AnswerLanguage {
  return (request.server as unknown as Record<symbol, AnswerLanguage | undefined>)[kAnswerLanguage] ?? shippedEnglish()
}
