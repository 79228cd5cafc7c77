import { win32 } from 'node:path'
import type { CategoriesPage, CategoriesPageQuery, Catalog, CatalogData, Category, CategoryWithResources, Resource, ResourcesPage, ResourcesPageQuery } from '../types.js'
import { errorCodes } from '../errors.js'
import { kindOfValue, warnHostMistakeOnce, type MistakeLog } from '../warnings.js'
import { UNSAFE_URL_CHARACTERS } from '../redirect/site-origin.js'
import { choices, matchingResources, sortedChoices } from '../pages/filters.js'

const { FST_SR_INVALID_CATALOG, FST_SR_INVALID_CATALOG_RECORD } = errorCodes

const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
const MAX_SLUG_LENGTH = 100

export function isSlug (value: string): boolean {
  return value.length <= MAX_SLUG_LENGTH && SLUG_PATTERN.test(value)
}

/** What is wrong with a record: the field (`categories[0].resources[2].url`) and why. */
interface Problem {
  field: string
  why: string
}

function invalid (where: string, why: string): never {
  const problem: Problem = { field: where, why }
  throw Object.assign(new FST_SR_INVALID_CATALOG(where, why), problem)
}

/** The problem a check found, or (a getter of an ORM record that threw) the record that could not be read. */
function problemOf (err: unknown, where: string): Problem {
  if (err instanceof FST_SR_INVALID_CATALOG) return err as unknown as Problem
  return { field: where, why: `could not be read (${err instanceof Error ? err.message : String(err)})` }
}

function text (value: unknown, where: string): string {
  if (typeof value !== 'string' || value.trim() === '') invalid(where, 'must be a non-empty string')
  return value
}

// Paths on this site are resolved against it as a browser resolves a link: they must stay on it.
const SITE = 'https://site.invalid'

/** Whether a browser would follow `url` to an http(s) address, and a path (`/x`) to one on this site. */
function isSafeLink (url: string): boolean {
  // A tab or newline is dropped and "\" read as "/" (`/\evil.example/x`); a space is no part of a URL.
  if (UNSAFE_URL_CHARACTERS.test(url) || /\s/.test(url)) return false
  try {
    if (url.startsWith('/')) return new URL(url, SITE).origin === SITE
    const { protocol } = new URL(url)
    return protocol === 'http:' || protocol === 'https:'
  } catch {
    return false
  }
}

function link (value: unknown, where: string): string {
  const url = text(value, where)
  if (isSafeLink(url)) return url
  return invalid(where, `must be an http(s) URL or a path on this site, with no space, control character or "\\", got ${JSON.stringify(url)}`)
}

/**
 * Why `file` cannot name a file in the files directory, or undefined when it can: a relative path of
 * named segments (`maths/fraction-wall.pdf`). Whatever passes can be joined to the root and never
 * leave it by its spelling; the file route still checks where the real path lands (symlinks).
 */
function unsafeFilePath (file: string): string | undefined {
  if (file.includes('\0')) return 'must not contain a NUL character'
  if (file.includes('\\')) return 'must use "/" between folders, not "\\"'
  // win32's test covers both: `/x`, and `C:\\x` or `C:/x`, which a host on Windows would read as absolute.
  if (win32.isAbsolute(file)) return 'must be relative to the files directory, not an absolute path'
  const segments = file.split('/')
  if (segments.includes('..')) return 'must not contain a ".." segment'
  if (segments.some((segment) => segment === '' || segment === '.')) return 'must be folder and file names joined by single "/", with no "." segment and no trailing "/"'
  return undefined
}

function filePath (value: unknown, where: string): string {
  const file = text(value, where)
  const problem = unsafeFilePath(file)
  return problem === undefined ? file : invalid(where, `${problem}, got ${JSON.stringify(file)}`)
}

/** Set: neither undefined nor null (a nullable column of a host's database gives null for "none"). */
function isSet (value: unknown): boolean {
  return value !== undefined && value !== null
}

/** Whether the resource is a file (true) or an address (false): exactly one of `url` and `file`. */
function isFile (raw: Record<string, unknown>, where: string): boolean {
  const hasUrl = isSet(raw.url)
  const hasFile = isSet(raw.file)
  if (hasUrl && hasFile) invalid(where, 'must have a url or a file, not both')
  if (!hasUrl && !hasFile) invalid(where, 'must have a url (an address) or a file (a path in the files directory)')
  return hasFile
}

/** A resource checked and copied: its documented fields only, frozen. */
function copyResource (value: unknown, where: string): Resource {
  if (value === null || typeof value !== 'object') invalid(where, 'must be an object')
  const raw = value as Record<string, unknown>
  const yearLevels = raw.yearLevels
  if (!Array.isArray(yearLevels) || yearLevels.length === 0) invalid(`${where}.yearLevels`, 'must be a non-empty array')
  const id = text(raw.id, `${where}.id`)
  // In a link (`/files/<category>/<id>/<name>`) browsers would resolve these away, to another address.
  if (id === '.' || id === '..') invalid(`${where}.id`, `must not be ${JSON.stringify(id)}`)
  const title = text(raw.title, `${where}.title`)
  const summary = text(raw.summary, `${where}.summary`)
  const file = isFile(raw, where)
  return Object.freeze({
    id,
    title,
    summary,
    ...(file ? { file: filePath(raw.file, `${where}.file`) } : { url: link(raw.url, `${where}.url`) }),
    subject: text(raw.subject, `${where}.subject`),
    yearLevels: Object.freeze(yearLevels.map((level, i) => text(level, `${where}.yearLevels[${i}]`))),
    format: text(raw.format, `${where}.format`)
  }) as Resource
}

/** A category's audience: absent, or a non-empty list of group names (an empty one would lock everyone out). */
function audienceOf (value: unknown, where: string): readonly string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || value.length === 0) invalid(where, 'must be a non-empty array of group names, or left out to open the category to every member')
  return Object.freeze(value.map((group, i) => text(group, `${where}[${i}]`)))
}

/** A category's own fields (no resources) checked and copied: its documented fields only, frozen. */
function copyCategory (value: unknown, where: string): Category {
  if (value === null || typeof value !== 'object') invalid(where, 'must be an object')
  const raw = value as Record<string, unknown>
  const slug = text(raw.slug, `${where}.slug`)
  if (!isSlug(slug)) invalid(`${where}.slug`, `must be lower-case letters, digits and single hyphens, got ${JSON.stringify(slug)}`)
  const title = text(raw.title, `${where}.title`)
  const description = text(raw.description, `${where}.description`)
  const audience = audienceOf(raw.audience, `${where}.audience`)
  return Object.freeze(audience === undefined ? { slug, title, description } : { slug, title, description, audience })
}

/**
 * A category's resources checked and copied. A bad one throws, unless `leaveOut` is given: then it is
 * left out and `leaveOut` is told what was wrong and which resource it was (its id, or its position).
 */
function copyResources (value: unknown, where: string, leaveOut?: (problem: Problem, resource: string) => void): readonly Resource[] {
  if (!Array.isArray(value)) invalid(`${where}.resources`, 'must be an array')
  const ids = new Set<string>()
  const resources: Resource[] = []
  value.forEach((raw: unknown, j) => {
    const at = `${where}.resources[${j}]`
    try {
      const copy = copyResource(raw, at)
      if (ids.has(copy.id)) invalid(`${at}.id`, `${JSON.stringify(copy.id)} is used twice`)
      ids.add(copy.id)
      resources.push(copy)
    } catch (err) {
      if (leaveOut === undefined) throw err
      leaveOut(problemOf(err, at), recordName((raw as { id?: unknown } | null)?.id, j))
    }
  })
  return Object.freeze(resources)
}

/** A bad record's name in a warning's key: its id or slug when it has a usable one, else its position. */
function recordName (id: unknown, position: number): string {
  return typeof id === 'string' && id !== '' && id.length <= MAX_SLUG_LENGTH ? JSON.stringify(id) : `#${position}`
}

/** Where each InMemoryCatalog first names a file, so that a missing files option fails the start. */
const firstFiles = new WeakMap<Catalog, string>()

/** `categories[i].resources[j].file "<path>"` when `catalog` is an InMemoryCatalog that names a file. */
export function namedFile (catalog: Catalog): string | undefined {
  return firstFiles.get(catalog)
}

/** Records checked by InMemoryCatalog at construction (frozen): the boundary passes them as they are. */
const checked = new WeakSet<object>()

/** InMemoryCatalog's pages of a category, each with the whole (frozen) record it was cut from. */
const wholeRecords = new WeakMap<object, CategoryWithResources>()

/**
 * The whole record an InMemoryCatalog page of a category was cut from; undefined for a host's page.
 * The section keys its page cache on it: a host's page holds no more than its own resources.
 */
export function wholeRecordOf (page: ResourcesPage): CategoryWithResources | undefined {
  return wholeRecords.get(page)
}

/**
 * A catalog held in memory, checked and copied once at construction so that bad data fails at
 * start-up rather than on a visitor's request. Its records are frozen: views cannot alter them.
 */
export class InMemoryCatalog implements Catalog {
  readonly #bySlug = new Map<string, CategoryWithResources>()
  readonly #summaries: readonly Category[]
  readonly #summaryBySlug = new Map<string, Category>()
  /** Whether every category is open to every member (no audience): then every member sees the whole list. */
  readonly #open: boolean

  constructor (data: CatalogData) {
    if (data === null || typeof data !== 'object' || !Array.isArray(data.categories)) {
      invalid('data', 'must be { categories: [...] }')
    }
    const summaries = data.categories.map((raw, i) => {
      const where = `categories[${i}]`
      const summary = copyCategory(raw, where)
      if (this.#bySlug.has(summary.slug)) invalid(`${where}.slug`, `${JSON.stringify(summary.slug)} is used twice`)
      const resources = copyResources(raw.resources, where)
      const j = resources.findIndex((r) => r.file !== undefined)
      if (j !== -1 && !firstFiles.has(this)) firstFiles.set(this, `${where}.resources[${j}].file ${JSON.stringify(resources[j].file)}`)
      const category = Object.freeze({ ...summary, resources })
      checked.add(category).add(summary)
      this.#bySlug.set(summary.slug, category)
      this.#summaryBySlug.set(summary.slug, summary)
      return summary
    })
    this.#summaries = Object.freeze(summaries)
    this.#open = summaries.every((c) => c.audience === undefined)
    checked.add(this.#summaries)
  }

  async listCategories (): Promise<readonly Category[]> {
    return this.#summaries
  }

  async getCategory (slug: string): Promise<CategoryWithResources | undefined> {
    return this.#bySlug.get(slug)
  }

  /** A page of the index: a slice of the list held, or of the categories `visibleTo`'s groups may see. */
  async listCategoriesPage ({ offset, limit, visibleTo }: CategoriesPageQuery): Promise<CategoriesPage> {
    const list = visibleTo === undefined ? this.#summaries : this.#visibleTo(visibleTo)
    const page = { categories: list.slice(offset, offset + limit), total: list.length }
    checked.add(page)
    return page
  }

  /**
   * A page of a category: the matching resources are worked out once per filter (filters.ts), so a
   * page costs a slice of them, whatever the category's size.
   */
  async getCategoryPage (slug: string, { offset, limit, subject, year }: ResourcesPageQuery): Promise<ResourcesPage | undefined> {
    const category = this.#bySlug.get(slug)
    if (category === undefined) return undefined
    const { subjects, years } = choices(category)
    // A value that is no choice matches nothing (the section then asks again without it).
    const known = (subject === undefined || subjects.includes(subject)) && (year === undefined || years.includes(year))
    const matching = known ? matchingResources(category, { subject, year }) : []
    const page = { category: this.#summaryBySlug.get(slug)!, resources: matching.slice(offset, offset + limit), total: matching.length, count: category.resources.length, subjects, years }
    wholeRecords.set(page, category)
    return page
  }

  /** The categories members of `groups` may see (restrictedCategories: 'hide'). */
  #visibleTo (groups: readonly string[]): readonly Category[] {
    if (this.#open) return this.#summaries
    return this.#summaries.filter((c) => c.audience === undefined || c.audience.some((group) => groups.includes(group)))
  }
}

/** A count of a paged read: a whole number, 0 or more. */
function wholeNumber (value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) invalid(where, `must be a whole number of 0 or more, got ${typeof value === 'number' ? value : kindOfValue(value)}`)
  return value
}

/** The choices of a paged read: a list of non-empty strings. */
function choiceList (value: unknown, where: string): string[] {
  if (!Array.isArray(value)) invalid(where, `must be an array of strings, got ${kindOfValue(value)}`)
  return value.map((v, i) => text(v, `${where}[${i}]`))
}

/**
 * Whether `given` items fit the page asked for and the `total` said; throws when they cannot (over the
 * limit, or past the total). A page shorter than the total says is allowed (a row deleted between the
 * count and the page): the answer is how many the page should have held, when it is short.
 */
function shortOf (given: number, total: number, { offset, limit }: { offset: number, limit: number }, where: string, what: string): number | undefined {
  if (given > limit) invalid(`${where}.${what}`, `holds ${given} ${what}, over the limit of ${limit} asked for`)
  // Past the end (a start off the end: the section then asks for the last page) the page is empty.
  const left = Math.max(0, total - offset)
  if (given > left) invalid(`${where}.total`, `is ${total}, fewer than the offset asked for (${offset}) and the ${given} ${what} given: it must count the whole list, not the page`)
  const expected = Math.min(limit, left)
  return given < expected ? expected : undefined
}

/**
 * The host's catalog as the section uses it: every record checked where it enters, as InMemoryCatalog
 * checks its data (the same functions), and copied with its documented fields only, so that neither a
 * view nor a JSON client sees another column of the host's records. `null` or `undefined` from
 * `getCategory` is "no such category". A record that is not a category (and a list that is not a list)
 * throws FST_SR_INVALID_CATALOG_RECORD, the section's 500, after one warn line naming the field; a bad
 * resource of a good category, and a bad entry of the list, are left out with one warn line each.
 *
 * InMemoryCatalog's records pass as they are (checked at construction). A host's record is checked once
 * per object: the same object gives the same copy (the page cache keys on it), and an ORM's new object
 * on each call is checked again, its warnings keyed by slug and id so that they are said once.
 */
export function checkedCatalog (catalog: Catalog, log: MistakeLog, section: string): Catalog {
  const categories = new WeakMap<object, CategoryWithResources | Problem>()
  const summaries = new WeakMap<object, Category | Problem>()

  function warn (key: string, field: string, message: string): void {
    warnHostMistakeOnce(log, `catalog:${section}:${key}`, { code: 'FST_SR_INVALID_CATALOG_RECORD', field }, `fastify-schools-resources: ${message}`)
  }

  /** A record checked once per object (a primitive each time): its copy, or what is wrong with it. */
  function once<T> (cache: WeakMap<object, T | Problem>, raw: unknown, check: () => T, where: string): T | Problem {
    const known = typeof raw === 'object' && raw !== null ? cache.get(raw) : undefined
    if (known !== undefined) return known
    let result: T | Problem
    try {
      result = check()
    } catch (err) {
      result = problemOf(err, where)
    }
    if (typeof raw === 'object' && raw !== null) cache.set(raw, result)
    return result
  }

  function isProblem (value: object): value is Problem {
    return 'why' in value
  }

  /** Fails the request closed: says what is wrong (once per key), then the section's 500. */
  function refuse (key: string, err: unknown, where: string, consequence: string): never {
    const { field, why } = problemOf(err, where)
    warn(`${key}:${field}`, field, `the catalog's ${field} ${why}; ${consequence}`)
    throw new FST_SR_INVALID_CATALOG_RECORD()
  }

  /** The index's entries checked (`where` names each), a bad one left out with a warn line. */
  function listed (list: readonly unknown[], where: (i: number) => string, visibleTo?: readonly string[]): Category[] {
    const categories: Category[] = []
    list.forEach((raw: unknown, i) => {
      const at = where(i)
      const copy = checked.has(raw as object) ? raw as Category : once(summaries, raw, () => copyCategory(raw, at), at)
      const name = recordName((raw as { slug?: unknown } | null)?.slug, i)
      if (isProblem(copy)) {
        warn(`list:${name}:${copy.field}`, copy.field, `a category of the catalog's ${at.slice(0, at.indexOf('('))}() is left out of the section index: ${copy.field} ${copy.why}`)
      } else if (visibleTo !== undefined && copy.audience !== undefined && !copy.audience.some((group) => visibleTo.includes(group))) {
        // Hidden categories stay hidden (restrictedCategories: 'hide'), whatever the catalog gives.
        warn(`list:${name}:visibleTo`, `${at}.audience`, `a category of the catalog's listCategoriesPage() is left out of the section index: ${at} is outside the groups of query.visibleTo; list only the categories those groups may see`)
      } else {
        categories.push(copy)
      }
    })
    return categories
  }

  const paged: Pick<Catalog, 'listCategoriesPage' | 'getCategoryPage'> = {}
  if (typeof catalog.listCategoriesPage === 'function') {
    paged.listCategoriesPage = async (query) => {
      const raw: unknown = await catalog.listCategoriesPage!(query)
      if (checked.has(raw as object)) return raw as CategoriesPage
      const where = 'listCategoriesPage()'
      let total: number
      let list: unknown[]
      let short: number | undefined
      try {
        if (raw === null || typeof raw !== 'object') invalid(where, `must resolve to { categories, total }, got ${kindOfValue(raw)}`)
        list = (raw as { categories?: unknown }).categories as unknown[]
        if (!Array.isArray(list)) invalid(`${where}.categories`, `must be an array, got ${kindOfValue(list)}`)
        total = wholeNumber((raw as { total?: unknown }).total, `${where}.total`)
        short = shortOf(list.length, total, query, where, 'categories')
      } catch (err) {
        return refuse('page', err, where, 'the section index answers with the 500 page until it does')
      }
      if (short !== undefined) {
        warn('page:short', `${where}.total`, `the catalog's ${where} gave ${list.length} categories at offset ${query.offset} where its total (${total}) says ${short}: the pager counts pages the list does not have`)
      }
      return { categories: listed(list, (i) => `${where}.categories[${i}]`, query.visibleTo), total }
    }
  }
  if (typeof catalog.getCategoryPage === 'function') {
    paged.getCategoryPage = async (slug, query) => {
      const raw: unknown = await catalog.getCategoryPage!(slug, query)
      if (raw === null || raw === undefined) return undefined
      if (wholeRecords.has(raw)) return raw as ResourcesPage
      const where = `getCategoryPage(${JSON.stringify(slug)})`
      const fields = raw as Record<string, unknown>
      let page: Omit<ResourcesPage, 'resources'>
      let short: number | undefined
      try {
        if (typeof raw !== 'object') invalid(where, `must resolve to { category, resources, total, count, subjects, years }, or undefined for no such category; got ${kindOfValue(raw)}`)
        const category = copyCategory(fields.category, `${where}.category`)
        if (category.slug !== slug) invalid(`${where}.category.slug`, `must be the slug asked for, got ${JSON.stringify(category.slug)}`)
        if (!Array.isArray(fields.resources)) invalid(`${where}.resources`, `must be an array, got ${kindOfValue(fields.resources)}`)
        const total = wholeNumber(fields.total, `${where}.total`)
        const count = wholeNumber(fields.count, `${where}.count`)
        if (count < total) invalid(`${where}.count`, `is ${count}, fewer than total (${total}): count is every resource of the category, total those that match the filters`)
        short = shortOf(fields.resources.length, total, query, where, 'resources')
        const { subjects, years } = sortedChoices(choiceList(fields.subjects, `${where}.subjects`), choiceList(fields.years, `${where}.years`))
        page = { category, total, count, subjects: Object.freeze(subjects), years: Object.freeze(years) }
      } catch (err) {
        return refuse(`${slug}:page`, err, where, 'members who open the category get the 500 page until it is fixed')
      }
      if (short !== undefined) {
        warn(`${slug}:page:short`, `${where}.total`, `the catalog's ${where} gave ${(fields.resources as unknown[]).length} resources at offset ${query.offset} where its total (${page.total}) says ${short}: the pager counts pages the list does not have`)
      }
      const resources = copyResources(fields.resources, where, (problem, resource) => {
        warn(`${slug}:resource:${resource}`, problem.field,
          `a resource of the catalog's category "${slug}" is left out of its page and JSON: ${problem.field} ${problem.why}`)
      }).filter((r) => {
        if ((query.subject === undefined || r.subject === query.subject) && (query.year === undefined || r.yearLevels.includes(query.year))) return true
        warn(`${slug}:filter`, `${where}.resources`, `a resource of the catalog's category "${slug}" is left out of its page: ${where} gave "${r.id}", which does not match the filters asked for (${JSON.stringify({ subject: query.subject, year: query.year })}); give only matching resources`)
        return false
      })
      return Object.freeze({ ...page, resources: Object.freeze(resources) })
    }
  }

  return {
    ...paged,

    async listCategories () {
      const list: unknown = await catalog.listCategories()
      if (checked.has(list as object)) return list as readonly Category[]
      if (!Array.isArray(list)) {
        warn('list', 'listCategories()', `the catalog's listCategories() must resolve to an array of categories, got ${list === null ? 'null' : typeof list}; the section index answers with the 500 page until it does`)
        throw new FST_SR_INVALID_CATALOG_RECORD()
      }
      return listed(list, (i) => `listCategories()[${i}]`)
    },

    async getCategory (slug) {
      const raw: unknown = await catalog.getCategory(slug)
      if (raw === null || raw === undefined) return undefined
      if (checked.has(raw as object)) return raw as CategoryWithResources
      const where = `getCategory(${JSON.stringify(slug)})`
      const category = once(categories, raw, () => {
        const summary = copyCategory(raw, where)
        if (summary.slug !== slug) invalid(`${where}.slug`, `must be the slug asked for, got ${JSON.stringify(summary.slug)}`)
        const resources = copyResources((raw as { resources?: unknown }).resources, where, (problem, resource) => {
          warn(`${slug}:resource:${resource}`, problem.field,
            `a resource of the catalog's category "${slug}" is left out of its page and JSON: ${problem.field} ${problem.why}`)
        })
        return Object.freeze({ ...summary, resources })
      }, where)
      if (!isProblem(category)) return category
      warn(`${slug}:${category.field}`, category.field,
        `the catalog's category "${slug}" is not a category: ${category.field} ${category.why}; members who open it get the 500 page until the record is fixed`)
      throw new FST_SR_INVALID_CATALOG_RECORD()
    }
  }
}
