import { randomUUID } from 'node:crypto'
import escapeHtml from 'escape-html'
import type { CategoryWithResources, Member, Resource } from '../types.js'
import type { ResourceFilter } from './filters.js'
import type { Pagination } from './pagination.js'
import type { PageContext } from './views.js'

/** What one page of a category shows: its resources on this page, the filter, and the page's place in the list. */
export interface CategoryPageData {
  category: CategoryWithResources
  resources: readonly Resource[]
  filter: ResourceFilter
  pagination: Pagination | undefined
}

/** Renders a whole category page (view and layout) as the default views do. */
export type RenderCategoryPage = (data: CategoryPageData, ctx: PageContext) => string

/**
 * How many pages (filter and page combinations) are kept per category record. A category's choices bound
 * them anyway, but a large category has many: the oldest used go first.
 */
export const PAGES_PER_CATEGORY = 64

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

  /** The page `data` describes (`start`: its first resource's offset, which names the page) for the member in `ctx`. */
  page (data: CategoryPageData, start: number, ctx: PageContext & { member: Member }): string {
    const { category, filter } = data
    const token = ctx.csrfToken
    // The filter's values are choices of the category (see resourceFilter), so their positions name them
    // without any possible collision; `start` is always a page boundary (pageWindow).
    const subject = filter.subject === undefined ? -1 : filter.subjects.indexOf(filter.subject)
    const year = filter.year === undefined ? -1 : filter.years.indexOf(filter.year)
    const key = `${ctx.locale}/${subject}/${year}/${start}/${token === undefined ? 0 : 1}`
    let pages = this.#templates.get(category)
    if (pages === undefined) {
      pages = new Map()
      this.#templates.set(category, pages)
    }
    let template = pages.get(key)
    if (template === undefined) {
      template = this.#template(data, ctx)
      if (pages.size >= PAGES_PER_CATEGORY) pages.delete(pages.keys().next().value!)
    } else {
      // Used again: to the back of the map's order, so the least recently used page is first to go.
      pages.delete(key)
    }
    pages.set(key, template)
    const name = escapeHtml(ctx.member.name)
    let out = template.parts[0]
    for (let i = 0; i < template.slots.length; i++) {
      out += (template.slots[i] === 'name' ? name : escapeHtml(token!)) + template.parts[i + 1]
    }
    return out
  }

  #template (data: CategoryPageData, ctx: PageContext): Template {
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
