import type { CategoryWithResources, Resource } from '../types.js'

/** The category page's filters: what was asked for (when it exists in the category) and what can be. */
export interface ResourceFilter {
  /** The subject the list is filtered by, or undefined for all. */
  subject: string | undefined
  /** The year level the list is filtered by, or undefined for all. */
  year: string | undefined
  /** Every subject in the category, sorted. */
  subjects: string[]
  /** Every year level in the category, in school order (Foundation, Year 1, ..., Year 10). */
  years: string[]
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' })

function pick (query: unknown, name: string, allowed: readonly string[]): string | undefined {
  const value = query !== null && typeof query === 'object' ? (query as Record<string, unknown>)[name] : undefined
  // Repeated, empty or unknown values mean "all": a stale or hand-edited link still shows a page.
  return typeof value === 'string' && allowed.includes(value) ? value : undefined
}

// The choices depend only on the category record, so they are worked out once per record.
const choicesOf = new WeakMap<CategoryWithResources, { subjects: string[], years: string[] }>()

/** Every subject (sorted) and year level (in school order) of the category's resources. */
export function choices (category: CategoryWithResources): { readonly subjects: readonly string[], readonly years: readonly string[] } {
  let found = choicesOf.get(category)
  if (found === undefined) {
    found = sortedChoices(category.resources.map((r) => r.subject), category.resources.flatMap((r) => r.yearLevels))
    choicesOf.set(category, found)
  }
  return found
}

/** `subjects` and `years` without repeats, in the order the filters show them. */
export function sortedChoices (subjects: readonly string[], years: readonly string[]): { subjects: string[], years: string[] } {
  return { subjects: [...new Set(subjects)].sort(collator.compare), years: [...new Set(years)].sort(collator.compare) }
}

/** Reads `?subject=...&year=...`; values that are not in the category are ignored. */
export function resourceFilter (category: CategoryWithResources, query: unknown): ResourceFilter {
  const { subjects, years } = choices(category)
  return filterOf(query, subjects, years)
}

/** The filter `query` asks for among these choices; values that are none of them are ignored. */
export function filterOf (query: unknown, subjects: readonly string[], years: readonly string[]): ResourceFilter {
  return { subject: pick(query, 'subject', subjects), year: pick(query, 'year', years), subjects: [...subjects], years: [...years] }
}

/** What `query` asks to filter by, before the choices are known: a string, or nothing. */
export function askedFilter (query: unknown): { subject?: string, year?: string } {
  const asked: { subject?: string, year?: string } = {}
  if (query === null || typeof query !== 'object') return asked
  const { subject, year } = query as Record<string, unknown>
  if (typeof subject === 'string' && subject !== '') asked.subject = subject
  if (typeof year === 'string' && year !== '') asked.year = year
  return asked
}

export function applyFilter (resources: readonly Resource[], filter: Pick<ResourceFilter, 'subject' | 'year'>): Resource[] {
  return resources.filter((r) =>
    (filter.subject === undefined || r.subject === filter.subject) &&
    (filter.year === undefined || r.yearLevels.includes(filter.year)))
}

/**
 * The category's resources that match `filter` (choices of the category: see resourceFilter), worked out
 * once per record and filter, so that a request for a page already rendered costs nothing that grows
 * with the category. Bounded by the data: a resource is in at most 1 + 2 × (its year levels) lists.
 */
export function matchingResources (category: CategoryWithResources, filter: Pick<ResourceFilter, 'subject' | 'year'>): readonly Resource[] {
  if (filter.subject === undefined && filter.year === undefined) return category.resources
  let bySubject = matchingOf.get(category)
  if (bySubject === undefined) {
    bySubject = new Map()
    matchingOf.set(category, bySubject)
  }
  let byYear = bySubject.get(filter.subject)
  if (byYear === undefined) {
    byYear = new Map()
    bySubject.set(filter.subject, byYear)
  }
  let list = byYear.get(filter.year)
  if (list === undefined) {
    list = Object.freeze(applyFilter(category.resources, filter))
    byYear.set(filter.year, list)
  }
  return list
}

const matchingOf = new WeakMap<CategoryWithResources, Map<string | undefined, Map<string | undefined, readonly Resource[]>>>()
