import accepts from 'accepts'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Member } from './member.js'
import { csrfTokenFor } from './csrf.js'
import type { ResolvedOptions } from './options.js'
import { defaultViews, type Page, type PageContext, type Views } from './views.js'

export type SectionPaths = PageContext['paths']

export function sectionPaths (opts: Pick<ResolvedOptions, 'prefix' | 'loginPath' | 'logoutPath'>): SectionPaths {
  const categoryBase = `${opts.prefix}/resources/`
  return {
    index: `${opts.prefix}/`,
    login: opts.loginPath,
    logout: opts.logoutPath,
    category: (slug) => `${categoryBase}${encodeURIComponent(slug)}/`
  }
}

/** The plugin's views with the host's replacements applied. */
export function resolveViews (overrides: Partial<Views>): Views {
  return { ...defaultViews, ...overrides }
}

/** Plain `Accept` negotiation: HTML unless the client prefers JSON. */
export function wantsJson (request: FastifyRequest): boolean {
  return accepts(request.raw).type(['html', 'json']) === 'json'
}

export class PageRenderer {
  readonly #views: Views
  readonly #base: Omit<PageContext, 'member'>

  constructor (views: Views, opts: Pick<ResolvedOptions, 'siteName' | 'signIn' | 'stylesheet'>, paths: SectionPaths) {
    this.#views = views
    this.#base = { siteName: opts.siteName, signIn: opts.signIn, paths }
    if (opts.stylesheet.href !== undefined) this.#base.stylesheet = opts.stylesheet.href
  }

  get views (): Views {
    return this.#views
  }

  /** The context for one page; members get a CSRF token for the logout form when the plugin owns sign-in. */
  context (member: Member | undefined, reply: FastifyReply): PageContext {
    const csrfToken = member !== undefined && this.#base.signIn ? csrfTokenFor(reply) : undefined
    return { ...this.#base, member, csrfToken }
  }

  /** Sends `page` wrapped in the layout as an HTML document. */
  send (reply: FastifyReply, page: Page, ctx: PageContext): FastifyReply {
    return reply
      .type('text/html; charset=utf-8')
      .send(String(this.#views.layout(page, ctx)))
  }
}
