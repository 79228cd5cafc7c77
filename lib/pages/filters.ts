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

function choices (category: CategoryWithResources): { subjects: string[], years: string[] } {
  let found = choicesOf.get(category)
  if (found === undefined) {
    found = {
      subjects: [...new Set(category.resources.map((r) => r.subject))].sort(collator.compare),
      years: [...new Set(category.resources.flatMap((r) => r.yearLevels))].sort(collator.compare)
    }
    choicesOf.set(category, found)
  }
  return found
}

/** Reads `?subject=...&year=...`; values that are not in the category are ignored. */
export function resourceFilter (category: CategoryWithResources, query: unknown): ResourceFilter {
  const { subjects, years } = choices(category)
  return { subject: pick(query, 'subject', subjects), year: pick(query, 'year', years), subjects: [...subjects], years: [...years] }
}

export function applyFilter (resources: readonly Resource[], filter: Pick<ResourceFilter, 'subject' | 'year'>): Resource[] {
  return resources.filter((r) =>
    (filter.subject === undefined || r.subject === filter.subject) &&
    (filter.year === undefined || r.yearLevels.includes(filter.year)))
}

// A category's resources after each filter, per category record: a member's page view asks for the same
// few (the category's subject and year choices bound them) over and over.
const filteredOf = new WeakMap<CategoryWithResources, Map<string, readonly Resource[]>>()

/** `category`'s resources after `filter` (whose values are choices of the category: see resourceFilter), worked out once per record and filter. */
export function filteredResources (category: CategoryWithResources, filter: Pick<ResourceFilter, 'subject' | 'year'>): readonly Resource[] {
  let lists = filteredOf.get(category)
  if (lists === undefined) filteredOf.set(category, lists = new Map())
  // The values are choices of the category (or undefined), so no key of two filters can be the same.
  const key = `${filter.subject === undefined ? '' : `s:${filter.subject}`}\u0000${filter.year === undefined ? '' : `y:${filter.year}`}`
  let found = lists.get(key)
  if (found === undefined) lists.set(key, found = applyFilter(category.resources, filter))
  return found
}
