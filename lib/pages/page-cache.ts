import { randomUUID } from 'node:crypto'
import escapeHtml from 'escape-html'
import type { CategoryWithResources, Member, Resource } from '../types.js'
import { applyFilter, type ResourceFilter } from './filters.js'
import type { PageContext } from './views.js'

/** Renders a whole category page (view and layout) as the default views do. */
export type RenderCategoryPage = (data: { category: CategoryWithResources, resources: readonly Resource[], filter: ResourceFilter }, ctx: PageContext) => string

/** A rendered page cut at the member's name and the CSRF token: `parts[i]`, then `slots[i]`, ... */
interface Template {
  parts: string[]
  slots: Array<'name' | 'token'>
}

// Placeholders no catalog text contains (a random id per process) and that escaping leaves as they are.
const id = randomUUID()
const NAME = `\u0001${id}:name\u0001`
const TOKEN = `\u0001${id}:token\u0001`
const SLOT = new RegExp(`(${NAME}|${TOKEN})`)

/**
 * Category pages rendered once per category record and filter; each request only fills in the member's
 * name and its CSRF token. Rendering the page was the largest cost of a signed-in page view. Only for
 * the plugin's own views, which use nothing else of the member: a host's view may (its id, its role),
 * so a host's views are rendered on every request. Keyed by the record itself, so a catalog that
 * returns a new record after a change gets a new page, and the old ones go with their record.
 */
export class CategoryPageCache {
  readonly #render: RenderCategoryPage
  readonly #templates = new WeakMap<CategoryWithResources, Map<string, Template>>()

  constructor (render: RenderCategoryPage) {
    this.#render = render
  }

  page (category: CategoryWithResources, filter: ResourceFilter, ctx: PageContext & { member: Member }): string {
    const token = ctx.csrfToken
    // The filter's values are choices of the category (see resourceFilter), so their positions name them
    // without any possible collision, and a category has a bounded number of pages.
    const subject = filter.subject === undefined ? -1 : filter.subjects.indexOf(filter.subject)
    const year = filter.year === undefined ? -1 : filter.years.indexOf(filter.year)
    const key = `${subject}/${year}/${token === undefined ? 0 : 1}`
    let pages = this.#templates.get(category)
    if (pages === undefined) {
      pages = new Map()
      this.#templates.set(category, pages)
    }
    let template = pages.get(key)
    if (template === undefined) {
      template = this.#template({ category, resources: applyFilter(category.resources, filter), filter }, ctx)
      pages.set(key, template)
    }
    const name = escapeHtml(ctx.member.name)
    let out = template.parts[0]
    for (let i = 0; i < template.slots.length; i++) {
      out += (template.slots[i] === 'name' ? name : escapeHtml(token!)) + template.parts[i + 1]
    }
    return out
  }

  #template (data: Parameters<RenderCategoryPage>[0], ctx: PageContext): Template {
    const placeholders: PageContext = { ...ctx, member: { id: 'member', name: NAME }, csrfToken: ctx.csrfToken === undefined ? undefined : TOKEN }
    const pieces = this.#render(data, placeholders).split(SLOT)
    const template: Template = { parts: [], slots: [] }
    pieces.forEach((piece, i) => {
      if (i % 2 === 0) template.parts.push(piece)
      else template.slots.push(piece === NAME ? 'name' : 'token')
    })
    return template
  }
}
