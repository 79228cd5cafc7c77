import type { FastifyReply } from 'fastify'
import type { Member } from '../types.js'
import { errorCodes } from '../errors.js'
import { kindOfValue, warnHostMistakeOnce } from '../warnings.js'
import { isStoreUnavailable } from '../errors.js'
import { csrfTokenFor } from '../session/csrf.js'
import type { SessionAdapter } from '../session/session-adapter.js'
import { defaultViews, fileName, type Page, type PageContext, type Views } from './views.js'
import { SafeHtml } from './html.js'
import { CategoryPageCache, type CategoryPageData } from './page-cache.js'
import { PageLanguages } from './page-language.js'
import type { Translations } from '../i18n/translations.js'
import type { RequestLocales } from '../i18n/request-locale.js'

const { FST_SR_REGISTER_PREFIX, FST_SR_INVALID_VIEW } = errorCodes

export type SectionPaths = PageContext['paths']

/**
 * The register prefix the section's routes are mounted under (`fastify.prefix` of the context it was
 * registered in: `register(fn, { prefix })` or an @fastify/autoload folder), as a path to put in front
 * of every link: `''` at the root, else `/site` (no trailing slash, as Fastify joins them). A prefix
 * with a route parameter or wildcard has no one path for links, so it is refused at start-up.
 */
export function mountPoint (registerPrefix: string): string {
  const mount = registerPrefix.endsWith('/') ? registerPrefix.slice(0, -1) : registerPrefix
  if (!/^(?:\/[A-Za-z0-9\-._~]+)*$/.test(mount)) throw new FST_SR_REGISTER_PREFIX(registerPrefix)
  return mount
}

/** The paths links and redirects point to: the section's own, under the register prefix `mount`. */
export function sectionPaths (opts: { prefix: string, loginPath: string, logoutPath: string }, mount = ''): SectionPaths {
  const categoryBase = `${mount}${opts.prefix}/resources/`
  const fileBase = `${mount}${opts.prefix}/files/`
  return {
    index: `${mount}${opts.prefix}/`,
    login: `${mount}${opts.loginPath}`,
    logout: `${mount}${opts.logoutPath}`,
    category: (slug) => `${categoryBase}${encodeURIComponent(slug)}/`,
    // The file's own name last, so that a browser saving the link without our headers names it well.
    file: (slug, { id, file }) => `${fileBase}${encodeURIComponent(slug)}/${encodeURIComponent(id)}/${encodeURIComponent(fileName(file))}`
  }
}

/** The plugin's views with the host's replacements applied. */
export function resolveViews (overrides: Partial<Views>): Views {
  return { ...defaultViews, ...overrides }
}

/** What a page's context holds whatever its language. */
type Base = Omit<PageContext, 'member' | 'siteName' | 'locale' | 'dir' | 't' | 'tHtml'>

export class PageRenderer {
  readonly #views: Views
  readonly #base: Base
  readonly #categoryPages: CategoryPageCache | undefined
  readonly #locales: RequestLocales
  readonly #languages: PageLanguages
  readonly #siteName: string | undefined
  // Per locale, the context every page of it starts from (made on its first page).
  readonly #bases = new Map<string, Omit<PageContext, 'member'>>()

  // The section's session (none with signIn off and getMember): logout forms only where it is live.
  readonly #session: SessionAdapter | undefined

  constructor (views: Views, opts: { siteName: string | undefined, translations: Translations, locales: RequestLocales, signIn: boolean, stylesheet: { href?: string }, logoutUrl?: string, returnParam: string, session?: SessionAdapter, signOutEverywhere?: boolean }, paths: SectionPaths) {
    this.#session = opts.session
    this.#views = views
    this.#locales = opts.locales
    this.#languages = new PageLanguages(opts.translations)
    this.#siteName = opts.siteName
    this.#base = { signIn: opts.signIn, paths, returnParam: opts.returnParam }
    if (opts.stylesheet.href !== undefined) this.#base.stylesheet = opts.stylesheet.href
    if (opts.logoutUrl !== undefined) this.#base.logoutUrl = opts.logoutUrl
    if (opts.signOutEverywhere === true && opts.signIn) this.#base.signOutEverywhere = true
    // Only the plugin's own views are cached (see page-cache.ts); a host's are rendered every time.
    if (views.layout === defaultViews.layout && views.category === defaultViews.category) {
      this.#categoryPages = new CategoryPageCache((data, ctx) => String(defaultViews.layout(defaultViews.category(data, ctx), ctx)))
    }
  }

  /**
   * The context for one page; members get a CSRF token for the logout form when the plugin owns sign-in.
   * Where no token can be made (a host's route), the page offers no sign-out form rather than one that fails.
   */
  context (member: Member | undefined, reply: FastifyReply): PageContext | Promise<PageContext> {
    const locale = this.#locales.of(reply.request)
    if (typeof locale !== 'string') return locale.then((tag) => this.#context(member, reply, tag))
    return this.#context(member, reply, locale)
  }

  #context (member: Member | undefined, reply: FastifyReply, locale: string): PageContext {
    const base = this.#baseOf(locale, reply)
    const csrfToken = this.csrfToken(member, reply)
    if (member !== undefined && csrfToken === undefined) return { ...base, signIn: false, member }
    return { ...base, member, csrfToken }
  }

  /** The context pages in `locale` start from; the answer says its language (and varies with the header). */
  #baseOf (locale: string, reply: FastifyReply): Omit<PageContext, 'member'> {
    sayLanguage(reply, locale, this.#locales.negotiated)
    let base = this.#bases.get(locale)
    if (base === undefined) {
      const language = this.#languages.of(locale)
      base = { ...this.#base, ...language, siteName: this.#siteName ?? language.t('site.name') }
      this.#bases.set(locale, base)
    }
    return base
  }

  /** The logout form's CSRF token for a member's page, when the plugin owns sign-in. */
  csrfToken (member: Member | undefined, reply: FastifyReply): string | undefined {
    return member !== undefined && this.#base.signIn ? csrfTokenFor(reply, this.#session) : undefined
  }

  /**
   * Renders the view `name` with `data`, wraps its page in the layout and sends the document. A host's
   * view is checked where its answer enters: one that throws, or gives something other than a page
   * (`{ title, body }`) or, for the layout, markup, fails with FST_SR_INVALID_VIEW, which the section
   * answers with its 500 page, and is logged once with the fix.
   */
  async sendView<K extends PageView> (reply: FastifyReply, name: K, data: Parameters<Views[K]>[0], context: PageContext | Promise<PageContext>): Promise<FastifyReply> {
    const ctx = await context
    const view = this.#views[name] as (data: Parameters<Views[K]>[0], ctx: PageContext) => Page | Promise<Page>
    const page = await rendered(reply, name, () => view(data, ctx))
    if (!isPage(page)) throw invalidView(reply, name, `gave ${kindOfValue(page)} instead of a page`, 'return { title, body } (title a string, body a string or html`...`)')
    const document = await rendered(reply, 'layout', () => this.#views.layout(page, ctx))
    if (!isMarkup(document)) throw invalidView(reply, 'layout', `gave ${kindOfValue(document)} instead of markup`, 'return the document as a string or html`...`')
    return sendHtml(reply, String(document))
  }

  /**
   * Sends `member` one page of a category (`data`: the resources on it, after the filter; `start`: the
   * offset that names the page), with a CSRF token in its logout form where the plugin owns sign-in.
   */
  sendCategory (reply: FastifyReply, data: CategoryPageData, start: number, member: Member): FastifyReply | Promise<FastifyReply> {
    const locale = this.#locales.of(reply.request)
    if (typeof locale !== 'string') return locale.then((tag) => this.#sendCategory(reply, data, start, member, tag))
    return this.#sendCategory(reply, data, start, member, locale)
  }

  #sendCategory (reply: FastifyReply, data: CategoryPageData, start: number, member: Member, locale: string): FastifyReply | Promise<FastifyReply> {
    const ctx = { ...this.#baseOf(locale, reply), member, csrfToken: this.csrfToken(member, reply) }
    // The cached page is sent at once: no promise on the path of every signed-in page view.
    if (this.#categoryPages !== undefined) return sendHtml(reply, this.#categoryPages.page(data, start, ctx))
    return this.sendView(reply, 'category', data, ctx)
  }
}

/** The views that render a page (the layout wraps them). */
export type PageView = Exclude<keyof Views, 'layout'>

function isMarkup (value: unknown): value is string | SafeHtml {
  return typeof value === 'string' || value instanceof SafeHtml
}

function isPage (value: unknown): value is Page {
  return value !== null && typeof value === 'object' && typeof (value as Page).title === 'string' && isMarkup((value as Page).body)
}

/** A host view's answer, awaited; what it throws becomes FST_SR_INVALID_VIEW (a store outage stays one: the 503). */
async function rendered<T> (reply: FastifyReply, name: keyof Views, render: () => T | Promise<T>): Promise<T> {
  try {
    return await render()
  } catch (error) {
    if (isStoreUnavailable(error)) throw error
    throw invalidView(reply, name, 'threw', 'it must not throw (what it threw is in the error line of the request)', error)
  }
}

/** FST_SR_INVALID_VIEW for `views.<name>`, logged once per view and problem with `fix`. */
function invalidView (reply: FastifyReply, name: keyof Views, problem: string, fix: string, cause?: unknown): Error {
  warnHostMistakeOnce(reply.server.log, `views.${name}:${problem}`, { code: 'FST_SR_INVALID_VIEW', view: `views.${name}` },
    `fastify-schools-resources: views.${name} ${problem}, so the section answers its 500 page instead. Fix the view: ${fix}; ` +
    `or leave views.${name} out to use the built-in one.`)
  return new FST_SR_INVALID_VIEW(name, problem, { cause })
}

function sendHtml (reply: FastifyReply, document: string): FastifyReply {
  return reply.type('text/html; charset=utf-8').send(document)
}

/**
 * Says the answer's language: `Content-Language`, and `Vary: Accept-Language` when the header chose it
 * (`negotiated`), added to what `Vary` already has. Every answer in a language says it here.
 */
export function sayLanguage (reply: FastifyReply, locale: string, negotiated: boolean): void {
  reply.header('content-language', locale)
  if (negotiated) addVary(reply, 'Accept-Language')
}

/** Adds `field` to the answer's `Vary` (once), keeping what is there. */
function addVary (reply: FastifyReply, field: string): void {
  const vary = reply.getHeader('vary')
  if (vary === undefined) {
    reply.header('vary', field)
    return
  }
  const fields = String(vary)
  if (!fields.toLowerCase().split(/\s*,\s*/).includes(field.toLowerCase())) reply.header('vary', `${fields}, ${field}`)
}
