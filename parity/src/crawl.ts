import type { Notes } from './notes.js'
import type { Answer } from './politeness.js'
import { tags } from './scan.js'

export interface CrawlBounds {
  /** Link levels followed from the section's index (0: the index alone). */
  depth: number
  /** Addresses found at most. */
  max: number
}

/** Fetches one address (a path) from the legacy site. */
export type PageGetter = (target: string) => Promise<Answer>

/**
 * The addresses under the section's prefix reachable from its index (`start`) by links, breadth first,
 * as an anonymous visitor sees them (members-only pages are found as links, though their answers are
 * redirects). A link under the prefix on another origin is noted as skipped, never followed.
 */
export async function crawl (prefix: string, start: string, origins: string[], bounds: CrawlBounds, get: PageGetter, notes: Notes): Promise<string[]> {
  const found = [start]
  const known = new Set(found)
  let level = [start]
  for (let depth = 0; depth < bounds.depth && level.length > 0 && found.length < bounds.max; depth++) {
    const next: string[] = []
    for (const target of level) {
      const answer = await get(target).catch(() => undefined)
      if (answer?.status !== 200 || !/html/i.test(String(answer.headers.get('content-type')))) continue
      for (const { attributes: { href } } of tags(answer.body)) {
        const url = href === undefined ? null : URL.parse(href, `${origins[0]}${target}`)
        if (url === null || (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`))) continue
        if (!origins.includes(url.origin)) { notes.skip(url.href); continue }
        const address = url.pathname + url.search
        if (known.has(address)) continue
        if (found.length >= bounds.max) break
        found.push(address)
        known.add(address)
        next.push(address)
      }
    }
    level = next
  }
  return found
}
