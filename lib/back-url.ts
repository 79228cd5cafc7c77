/**
 * The BackURL round trip: written into the login redirect the way the legacy PHP site did, and read
 * back at sign-in only when it stays on this site.
 */

/** Upper bound for a return address (Django uses the same): longer values fall back. */
export const MAX_BACK_URL_LENGTH = 2048

const PLAIN_PATH = /^[\w.\-/]*$/

/**
 * PHP's `urlencode`: only `A-Z a-z 0-9 _ . -` stay literal, space becomes `+`, every other UTF-8 byte
 * is `%XX` in upper case. encodeURIComponent does all but `! ' ( ) * ~` and the space.
 */
export function phpUrlencode (value: string): string {
  // The usual request path (letters, digits, `_ . -` and slashes): only the slashes change.
  if (PLAIN_PATH.test(value)) return value.replaceAll('/', '%2F')
  return encodeURIComponent(value.toWellFormed())
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+')
}

/** `{origin}{loginPath}?BackURL=<path as received>`. */
export function loginRedirectUrl (origin: string, loginPath: string, requestUrl: string): string {
  return `${origin}${loginPath}?BackURL=${phpUrlencode(requestUrl)}`
}

// C0 and C1 controls, DEL, and backslashes (browsers read "\" as "/" in special URLs).
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\\]/

/**
 * The absolute URL to return to after sign-in, or undefined when `value` would leave the site or is
 * not a usable address. Accepts a path on this site (`/x`) or an absolute URL on this site's origin.
 * The result is always absolute, so that a path like `//evil.example` can never be sent bare.
 */
export function safeBackUrl (value: unknown, origin: string): string | undefined {
  if (typeof value !== 'string' || value === '' || value.length > MAX_BACK_URL_LENGTH) return undefined
  if (UNSAFE_CHARACTERS.test(value)) return undefined
  const isPath = value.startsWith('/')
  if (isPath && value.startsWith('//')) return undefined
  let site: URL
  let url: URL
  try {
    site = new URL(origin)
    url = isPath ? new URL(value, site) : new URL(value)
  } catch {
    return undefined
  }
  if (url.origin !== site.origin || url.username !== '' || url.password !== '') return undefined
  return url.href
}
