import type { Catalog, Category, CategoryWithResources, Member, Resource, ResourcesPage } from '../types.js'
import { askedFilter, filterOf, matchingResources, resourceFilter, type ResourceFilter } from '../pages/filters.js'
import { askedStart, lastStart, pageOf, pageWindow, windowAt, type PageWindow } from '../pages/pagination.js'
import type { OutsideAudience } from '../access/access-guard.js'
import { canSee } from '../access/audience.js'
import { wholeRecordOf } from './catalog.js'

// What the index and a category page read from the catalog: one page through its paged reads when it
// has them (InMemoryCatalog does: docs/pages-and-views.md#paged-reads), else the whole list as before.
// The catalog is the checked one (checkedCatalog), so every record here has passed the boundary.

/** A category as the category route reads it for one request: its page, and what views and JSON get. */
export interface CategoryRead {
  /** What the access guard checks, and the 403 names. */
  title: string
  audience?: readonly string[]
  /**
   * The record views get: the whole category (and then `cacheable`), or, from a host's paged read, its
   * fields with this page's resources.
   */
  category: CategoryWithResources
  /** The resources to show: this page's, or every matching one for a whole read. */
  resources: readonly Resource[]
  /** How many resources the category has, filters aside. */
  count: number
  filter: ResourceFilter
  window: PageWindow
  /** Whether the page may be kept in the category page cache: `category` is a whole record that does not change. */
  cacheable: boolean
}

/** How many times a paged read is asked again (a filter that is no choice, a start off the end) before its answer is shown as it is. */
const REREADS = 2

/**
 * The category `slug` for the request's query (filters and `start`), `size` resources a page; with
 * `whole`, every matching resource (JSON that asks for no page). Undefined when there is no such category.
 */
export async function readCategory (catalog: Catalog, slug: string, query: unknown, size: number, whole: boolean): Promise<CategoryRead | undefined> {
  if (whole || catalog.getCategoryPage === undefined) {
    const category = await catalog.getCategory(slug)
    if (category === undefined) return undefined
    const filter = resourceFilter(category, query)
    const matching = matchingResources(category, filter)
    const window = pageWindow(query, matching.length, size)
    const resources = whole ? matching : pageOf(matching, window)
    return { title: category.title, audience: category.audience, category, resources, count: category.resources.length, filter, window, cacheable: true }
  }
  let asked = askedFilter(query)
  let offset = askedStart(query, size)
  let page: ResourcesPage | undefined
  let filter: ResourceFilter
  for (let reads = 1; ; reads++) {
    page = await catalog.getCategoryPage(slug, { offset, limit: size, ...asked })
    if (page === undefined) return undefined
    // As on an unpaged page: a value that is none of the category's choices means "all", and a start
    // off the end the last page. Either needs the catalog's answer first, so the page is read again.
    filter = filterOf(asked, page.subjects, page.years)
    if (reads > REREADS) break
    if (filter.subject !== asked.subject || filter.year !== asked.year) {
      asked = { ...(filter.subject === undefined ? {} : { subject: filter.subject }), ...(filter.year === undefined ? {} : { year: filter.year }) }
      continue
    }
    const last = lastStart(page.total, size)
    if (offset <= last) break
    offset = last
  }
  const record = wholeRecordOf(page)
  const category = record ?? Object.freeze({ ...page.category, resources: page.resources })
  return {
    title: page.category.title,
    audience: page.category.audience,
    category,
    resources: page.resources,
    count: page.count,
    filter,
    window: windowAt(offset, size, page.total),
    cacheable: record !== undefined
  }
}

/** A category on the index, marked locked for a member outside its audience. */
export type IndexEntry = Category & { locked: boolean }

/** The index's categories for `member` (undefined: not signed in), marked or left out as the option says. */
function indexCategories (categories: readonly Category[], member: Member | undefined, mode: OutsideAudience): IndexEntry[] {
  const listed = categories.map((c) => ({ ...c, locked: member !== undefined && !canSee(member, c.audience) }))
  // Hidden: a restricted category is listed to members of its audience only, so nobody else learns it exists.
  return mode === 'hide' ? listed.filter((c) => c.audience === undefined || (member !== undefined && !c.locked)) : listed
}

/**
 * The index's page the query asks for (`start`), `size` categories a page, for `member`; with `whole`,
 * every category (JSON that asks for no page).
 */
export async function readIndex (catalog: Catalog, query: unknown, size: number, whole: boolean, member: Member | undefined, mode: OutsideAudience): Promise<{ categories: IndexEntry[], window: PageWindow }> {
  if (whole || catalog.listCategoriesPage === undefined) {
    const categories = indexCategories(await catalog.listCategories(), member, mode)
    const window = pageWindow(query, categories.length, size)
    return { categories: whole ? categories : pageOf(categories, window), window }
  }
  // Hidden categories are left out by the catalog, so that the pages and the total count only the visible.
  const visibleTo = mode === 'hide' ? { visibleTo: member?.groups ?? [] } : {}
  let offset = askedStart(query, size)
  let page = await catalog.listCategoriesPage({ offset, limit: size, ...visibleTo })
  if (offset > lastStart(page.total, size)) {
    offset = lastStart(page.total, size)
    page = await catalog.listCategoriesPage({ offset, limit: size, ...visibleTo })
  }
  return { categories: indexCategories(page.categories, member, mode), window: windowAt(offset, size, page.total) }
}
