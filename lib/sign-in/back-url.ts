/**
 * The return address read back at sign-in: only one that stays on this site is used.
 */
import { UNSAFE_URL_CHARACTERS } from '../redirect/site-origin.js'

/** Upper bound for a return address (Django uses the same): longer values fall back. */
export const MAX_BACK_URL_LENGTH = 2048

/**
 * The absolute URL to return to after sign-in, or undefined when `value` would leave the site or is
 * not a usable address. Accepts a path on this site (`/x`) or an absolute http(s) URL on this site's
 * origin, never one whose path starts with `//`.
 * The result is always absolute, so that a path like `//evil.example` can never be sent bare.
 */
export function safeBackUrl (value: unknown, origin: string): string | undefined {
  if (typeof value !== 'string' || value === '' || value.length > MAX_BACK_URL_LENGTH) return undefined
  if (UNSAFE_URL_CHARACTERS.test(value)) return undefined
  const isPath = value.startsWith('/')
  let site: URL
  let url: URL
  try {
    site = new URL(origin)
    url = isPath ? new URL(value, site) : new URL(value)
  } catch {
    return undefined
  }
  if (url.origin !== site.origin || url.username !== '' || url.password !== '') return undefined
  // blob: URLs carry their creator's origin; only a page address of the site itself is a place to return to.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  // `/..//evil.example` resolves to `https://site//evil.example`: on the site, but a path that a relative
  // redirect on the next page would read as another host.
  if (url.pathname.startsWith('//')) return undefined
  return url.href
}
