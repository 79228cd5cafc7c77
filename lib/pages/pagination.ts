/**
 * Pages of a long list, as the legacy CMS's lists page them: `?start=<offset>` (its PaginatedList's
 * query name), counted in items. Any start a link can carry shows a page: not a number, negative or
 * off the end reads as the nearest page, and a start between pages as the page it falls in, so that a
 * list has one address per page (which also keeps the page cache to one entry per page).
 */

/** Where a list is cut, and where the pages before and after it begin. */
export interface PageWindow {
  /** The offset of the first item shown (0 on the first page). */
  start: number
  /** How many items a full page shows. */
  size: number
  /** How many items the whole list has (after filters). */
  total: number
  /** The start of the previous page, or undefined on the first. */
  prev: number | undefined
  /** The start of the next page, or undefined on the last. */
  next: number | undefined
}

/** The page's links as views get them: addresses that keep the list's filters. */
export interface Pagination {
  /** 1-based position of the first and last item shown (`from` > `to` for an empty list). */
  from: number
  to: number
  total: number
  /** The page's number (1-based) and the number of pages (at least 1). */
  page: number
  pages: number
  /** The previous and next pages' addresses, when there are such pages. */
  prev?: string
  next?: string
}

export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 1000

const DIGITS = /^\d{1,15}$/

/** The page of a list of `total` items that `query.start` asks for, `size` items a page. */
export function pageWindow (query: unknown, total: number, size: number): PageWindow {
  return windowAt(Math.min(askedStart(query, size), lastStart(total, size)), size, total)
}

/**
 * The start of the page `query.start` asks for (a page boundary), before the list's length is known:
 * what a paged read asks the catalog for. Off the end, it is corrected by lastStart once the total is.
 */
export function askedStart (query: unknown, size: number): number {
  const raw = query !== null && typeof query === 'object' ? (query as Record<string, unknown>).start : undefined
  const asked = typeof raw === 'string' && DIGITS.test(raw) ? Number(raw) : 0
  return Math.floor(asked / size) * size
}

/** The start of the last page of a list of `total` items (0 for an empty list). */
export function lastStart (total: number, size: number): number {
  return total === 0 ? 0 : Math.floor((total - 1) / size) * size
}

/** The page that begins at `start` (a page boundary) of a list of `total` items. */
export function windowAt (start: number, size: number, total: number): PageWindow {
  return {
    start,
    size,
    total,
    prev: start === 0 ? undefined : start - size,
    next: start + size < total ? start + size : undefined
  }
}

/** Whether the query asks for a page by `start` (JSON answers are paged only when it does). */
export function asksForPage (query: unknown): boolean {
  return query !== null && typeof query === 'object' && (query as Record<string, unknown>).start !== undefined
}

/** The items of `list` on the page `window`. */
export function pageOf<T> (list: readonly T[], window: PageWindow): T[] {
  return list.slice(window.start, window.start + window.size)
}

/**
 * The page as views show it, with the previous and next pages at `href(start)`; undefined when the
 * whole list fits on one page (the page then looks as it did before lists were paged).
 */
export function pagination (window: PageWindow, href: (start: number) => string): Pagination | undefined {
  if (window.total <= window.size) return undefined
  return {
    from: window.start + 1,
    to: Math.min(window.start + window.size, window.total),
    total: window.total,
    page: window.start / window.size + 1,
    pages: Math.ceil(window.total / window.size),
    ...(window.prev === undefined ? {} : { prev: href(window.prev) }),
    ...(window.next === undefined ? {} : { next: href(window.next) })
  }
}

/** `base` with `params` (those set) and `start` (unless 0) as its query, in a stable order. */
export function pageHref (base: string, params: Record<string, string | undefined>, start: number): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value)
  if (start > 0) query.append('start', String(start))
  const search = query.toString()
  return search === '' ? base : `${base}?${search}`
}
