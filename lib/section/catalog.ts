import { win32 } from 'node:path'
import type { Catalog, CatalogData, Category, CategoryWithResources, Resource } from '../types.js'
import { errorCodes } from '../errors.js'

const { FST_SR_INVALID_CATALOG } = errorCodes

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
export const MAX_SLUG_LENGTH = 100

export function isSlug (value: string): boolean {
  return value.length <= MAX_SLUG_LENGTH && SLUG_PATTERN.test(value)
}

function invalid (where: string, why: string): never {
  throw new FST_SR_INVALID_CATALOG(where, why)
}

function text (value: unknown, where: string): string {
  if (typeof value !== 'string' || value.trim() === '') invalid(where, 'must be a non-empty string')
  return value
}

function link (value: unknown, where: string): string {
  const url = text(value, where)
  if (url.startsWith('/') && !url.startsWith('//')) return url
  try {
    const { protocol } = new URL(url)
    if (protocol === 'http:' || protocol === 'https:') return url
  } catch {}
  return invalid(where, `must be an http(s) URL or a path on this site, got ${JSON.stringify(url)}`)
}

/**
 * Why `file` cannot name a file in the files directory, or undefined when it can: a relative path of
 * named segments (`maths/fraction-wall.pdf`). Whatever passes can be joined to the root and never
 * leave it by its spelling; the file route still checks where the real path lands (symlinks).
 */
export function unsafeFilePath (file: string): string | undefined {
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

/** Exactly one of `url` (an address) and `file` (a path in the files directory). */
function location (raw: Resource, where: string): { url: string } | { file: string } {
  const hasUrl = raw.url !== undefined
  const hasFile = raw.file !== undefined
  if (hasUrl && hasFile) invalid(where, 'must have a url or a file, not both')
  if (hasFile) return { file: filePath(raw.file, `${where}.file`) }
  if (!hasUrl) invalid(where, 'must have a url (an address) or a file (a path in the files directory)')
  return { url: link(raw.url, `${where}.url`) }
}

function copyResource (raw: Resource, where: string): Resource {
  if (raw === null || typeof raw !== 'object') invalid(where, 'must be an object')
  const yearLevels = raw.yearLevels
  if (!Array.isArray(yearLevels) || yearLevels.length === 0) invalid(`${where}.yearLevels`, 'must be a non-empty array')
  const id = text(raw.id, `${where}.id`)
  // In a link (`/files/<category>/<id>/<name>`) browsers would resolve these away, to another address.
  if (id === '.' || id === '..') invalid(`${where}.id`, `must not be ${JSON.stringify(id)}`)
  return Object.freeze({
    id,
    title: text(raw.title, `${where}.title`),
    summary: text(raw.summary, `${where}.summary`),
    ...location(raw, where),
    subject: text(raw.subject, `${where}.subject`),
    yearLevels: Object.freeze(yearLevels.map((level, i) => text(level, `${where}.yearLevels[${i}]`))),
    format: text(raw.format, `${where}.format`)
  })
}

/** A category's audience: absent, or a non-empty list of group names (an empty one would lock everyone out). */
function audienceOf (value: unknown, where: string): readonly string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || value.length === 0) invalid(where, 'must be a non-empty array of group names, or left out to open the category to every member')
  return Object.freeze(value.map((group, i) => text(group, `${where}[${i}]`)))
}

/** Where each InMemoryCatalog first names a file, so that a missing files option fails the start. */
const firstFiles = new WeakMap<Catalog, string>()

/** `categories[i].resources[j].file "<path>"` when `catalog` is an InMemoryCatalog that names a file. */
export function namedFile (catalog: Catalog): string | undefined {
  return firstFiles.get(catalog)
}

/**
 * A catalog held in memory, checked and copied once at construction so that bad data fails at
 * start-up rather than on a visitor's request. Its records are frozen: views cannot alter them.
 */
export class InMemoryCatalog implements Catalog {
  readonly #bySlug = new Map<string, CategoryWithResources>()
  readonly #summaries: readonly Category[]

  constructor (data: CatalogData) {
    if (data === null || typeof data !== 'object' || !Array.isArray(data.categories)) {
      invalid('data', 'must be { categories: [...] }')
    }
    data.categories.forEach((raw, i) => {
      const where = `categories[${i}]`
      if (raw === null || typeof raw !== 'object') invalid(where, 'must be an object')
      const slug = text(raw.slug, `${where}.slug`)
      if (!isSlug(slug)) invalid(`${where}.slug`, `must be lower-case letters, digits and single hyphens, got ${JSON.stringify(slug)}`)
      if (this.#bySlug.has(slug)) invalid(`${where}.slug`, `${JSON.stringify(slug)} is used twice`)
      if (!Array.isArray(raw.resources)) invalid(`${where}.resources`, 'must be an array')
      const ids = new Set<string>()
      const resources = raw.resources.map((resource, j) => {
        const copy = copyResource(resource, `${where}.resources[${j}]`)
        if (ids.has(copy.id)) invalid(`${where}.resources[${j}].id`, `${JSON.stringify(copy.id)} is used twice`)
        ids.add(copy.id)
        if (copy.file !== undefined && !firstFiles.has(this)) firstFiles.set(this, `${where}.resources[${j}].file ${JSON.stringify(copy.file)}`)
        return copy
      })
      const audience = audienceOf(raw.audience, `${where}.audience`)
      this.#bySlug.set(slug, Object.freeze({
        slug,
        title: text(raw.title, `${where}.title`),
        description: text(raw.description, `${where}.description`),
        ...(audience === undefined ? {} : { audience }),
        resources: Object.freeze(resources)
      }))
    })
    this.#summaries = Object.freeze([...this.#bySlug.values()].map(({ resources: _resources, ...summary }) => Object.freeze(summary)))
  }

  async listCategories (): Promise<readonly Category[]> {
    return this.#summaries
  }

  async getCategory (slug: string): Promise<CategoryWithResources | undefined> {
    return this.#bySlug.get(slug)
  }
}
