// The login redirect with its BackURL, written the way the legacy PHP site wrote it.

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

/** `{origin}{loginPath}?BackURL=<path as received>` (`returnParam` names it; options.ts keeps it a plain token). */
export function loginRedirectUrl (origin: string, loginPath: string, requestUrl: string, returnParam = 'BackURL'): string {
  return `${origin}${loginPath}?${returnParam}=${phpUrlencode(requestUrl)}`
}
