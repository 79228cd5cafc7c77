// The example's language switch (docs/languages.md): pages are in the language the browser asks for
// (Accept-Language, the section's default), unless the visitor chose one with the links at the foot of
// every page (after its content, so that a keyboard reaches the page first). A choice is a `lang` cookie, set by GET /language?set=fr&back=<this page>, which then
// sends the visitor back to the page they were on (an address of this site only).
import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { defaultViews, html, unsafeRaw, type PageContext, type Views } from 'fastify-schools-resources'

/** The section's shipped languages, each named in itself. */
export const LANGUAGES: ReadonlyArray<readonly [tag: string, name: string]> = [['en', 'English'], ['fr', 'Français'], ['es', 'Español'], ['de', 'Deutsch'], ['cy', 'Cymraeg']]
export const LANGUAGE_COOKIE = 'lang'
export const LANGUAGE_PATH = '/language'
/** Where a switch without a usable `back` returns to. */
const HOME = '/schools/resources/'
const YEAR_SECONDS = 365 * 24 * 60 * 60
/** The switch's name for screen readers, in the page's language (the example's own words, not the section's). */
const LABELS: Record<string, string> = { en: 'Language', fr: 'Langue', es: 'Idioma', de: 'Sprache', cy: 'Iaith' }

const tags = new Set(LANGUAGES.map(([tag]) => tag))

/** `back` when it is an address on this site (a path, not `//host` or `/\host`), else undefined. */
export function sameSitePath (back: unknown): string | undefined {
  if (typeof back !== 'string' || !back.startsWith('/') || back.startsWith('//') || back.startsWith('/\\') || back.length > 2000) return undefined
  const base = 'http://this.site.invalid'
  const url = new URL(back, base)
  return url.origin === base ? `${url.pathname}${url.search}` : undefined
}

/**
 * Registers GET /language and the hook that remembers each request's address, and gives the section's
 * `locale` (the cookie's language, else undefined: Accept-Language decides) and a layout with the switch.
 * Call it before registering the section.
 */
export function languageSwitch (app: FastifyInstance, secure: boolean): { locale: (request: FastifyRequest) => string | undefined, views: Partial<Views> } {
  // The views are not given the request: the address of the page being rendered comes from here.
  const pages = new AsyncLocalStorage<string>()
  app.addHook('onRequest', (request, _reply, done) => { pages.run(request.url, done) })

  app.get(LANGUAGE_PATH, async (request, reply) => {
    const { set, back } = request.query as { set?: unknown, back?: unknown }
    if (typeof set === 'string' && tags.has(set)) {
      reply.setCookie(LANGUAGE_COOKIE, set, { path: '/', maxAge: YEAR_SECONDS, httpOnly: true, sameSite: 'lax', secure })
    }
    return reply.header('cache-control', 'no-store').redirect(sameSitePath(back) ?? HOME, 303)
  })

  const locale = (request: FastifyRequest): string | undefined => {
    const chosen = request.cookies[LANGUAGE_COOKIE]
    // A cookie is the visitor's to change: only a language the switch offers is used.
    return chosen !== undefined && tags.has(chosen) ? chosen : undefined
  }

  const languageNav = (ctx: PageContext) => {
    const back = encodeURIComponent(pages.getStore() ?? HOME)
    const links = LANGUAGES.map(([tag, name], i) => html`${i === 0 ? '' : ' · '}<a href="${LANGUAGE_PATH}?set=${tag}&back=${back}" lang="${tag}" hreflang="${tag}"${ctx.locale === tag ? unsafeRaw(' aria-current="true"') : ''}>${name}</a>`)
    return html`<nav class="language-switch" aria-label="${LABELS[ctx.locale] ?? LABELS.en}"><p>${links}</p></nav>`
  }

  const layout: Views['layout'] = (page, ctx) => defaultViews.layout({
    ...page,
    body: html`${typeof page.body === 'string' ? unsafeRaw(page.body) : page.body}${languageNav(ctx)}`
  }, ctx)
  return { locale, views: { layout } }
}
