import type { Answer } from './politeness.js'
import type { CookieJar } from './sign-in.js'

/** Who may store an answer: a shared cache (a proxy, a CDN), only the visitor's browser, or nobody. */
export type Cacheability = 'shared' | 'private' | 'none'

/** What matters in one site's answer, with the site's own origin taken out. */
export interface Observation {
  status: number
  /** The Location as a path and query when it pointed at the site itself; as given otherwise; null when absent. */
  location: string | null
  /** Whether the Location was absolute (`https://…`), relative (`/…`), or absent. */
  locationForm: 'absolute' | 'relative' | 'none'
  /** The return parameter's value exactly as written in the Location (null when it has none). */
  backUrl: string | null
  cacheability: Cacheability
  sessionCookie: boolean
}

export interface SiteView {
  /** The origins this site's own addresses may be written with (where it runs, and its public origin). */
  origins: string[]
  returnParam: string
  sessionCookies: string[]
}

/** Statuses a cache may store without an explicit freshness (RFC 9110 §15.1, "heuristically cacheable"). */
const HEURISTIC = new Set([200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501])

/**
 * The directives of a Cache-Control value (several headers arrive joined with commas), names in lower
 * case, values unquoted; the first of two with one name counts. Read in one pass, quoted strings kept
 * whole, so that a comma or a directive's name inside quotes (`private="Set-Cookie, X"`) is no directive.
 */
export function directivesOf (value: string): Map<string, string | undefined> {
  const directives = new Map<string, string | undefined>()
  let i = 0
  while (i < value.length) {
    let end = i
    while (end < value.length && value[end] !== ',' && value[end] !== '=') end++
    const name = value.slice(i, end).trim().toLowerCase()
    let argument: string | undefined
    i = end
    if (value[i] === '=') {
      i++
      while (value[i] === ' ' || value[i] === '\t') i++
      let quoted: string | undefined
      let valid = true
      if (value[i] === '"') {
        quoted = ''
        // A quoted-string, its backslash escapes undone.
        for (i++; i < value.length && value[i] !== '"'; i++) quoted += value[i] === '\\' ? value[++i] ?? '' : value[i]
        valid = i < value.length
        i++
      }
      const rest = value.indexOf(',', Math.min(i, value.length))
      const raw = value.slice(Math.min(i, value.length), rest === -1 ? value.length : rest).trim()
      // A quote never closed, text after one, or nothing at all: an argument no one can read.
      const text = quoted === undefined ? raw : raw === '' ? quoted : ''
      argument = valid && text !== '' ? text : undefined
      i = rest === -1 ? value.length : rest
    }
    if (name !== '' && !directives.has(name)) directives.set(name, argument)
    i++
  }
  return directives
}

// RFC 9110 §5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms; nothing else is a date.
const HTTP_DATE = /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/
const httpDate = (value: string | null) => value !== null && HTTP_DATE.test(value) ? Date.parse(/GMT$/.test(value) ? value : `${value} GMT`) : Number.NaN

/**
 * RFC 9111 as a shared cache reads it: no-store (and an unqualified no-cache, which allows no use
 * without asking the site again) is nobody; an unqualified private is the browser only (qualified,
 * they name fields a shared cache must not keep, and it may keep the rest). Then the lifetime:
 * s-maxage, else max-age; a lifetime that is zero or invalid is none (RFC 9111 §4.2.1: stale). `Expires`
 * only where the answer has no `Cache-Control` at all (a date after the answer's shared, else none): an
 * app that wrote its own Cache-Control meant it, and PHP's session pages carry a 1981 `Expires`
 * beside whatever the page set. Without one, `public` or a heuristically cacheable status
 * lets a shared cache keep it. `Pragma` means nothing in an answer (RFC 9111 §5.4), though PHP sends
 * it with every session.
 */
export function cacheabilityOf (status: number, headers: Headers): Cacheability {
  const directives = directivesOf(headers.get('cache-control') ?? '')
  if (directives.has('no-store') || (directives.has('no-cache') && directives.get('no-cache') === undefined)) return 'none'
  if (directives.has('private') && directives.get('private') === undefined) return 'private'
  const lifetime = directives.has('s-maxage') ? directives.get('s-maxage') : directives.get('max-age')
  if (directives.has('s-maxage') || directives.has('max-age')) return /^\d+$/.test(lifetime ?? '') && Number(lifetime) > 0 ? 'shared' : 'none'
  if (!headers.has('cache-control') && headers.has('expires')) {
    const date = httpDate(headers.get('date'))
    return httpDate(headers.get('expires')) > (Number.isNaN(date) ? Date.now() : date) ? 'shared' : 'none'
  }
  return directives.has('public') || HEURISTIC.has(status) ? 'shared' : 'none'
}

/**
 * The raw value of the return parameter `name` in a query string (`a=1&BackURL=x`), and the query with
 * that pair written as `{return}`, so that two sites naming the parameter differently still agree.
 */
function takeParam (query: string, name: string): { value: string | null, rest: string } {
  let value: string | null = null
  const rest = query.split('&').map((pair) => {
    if (value !== null || pair.split('=')[0] !== name) return pair
    value = pair.slice(name.length + 1)
    return '{return}'
  })
  return { value, rest: rest.join('&') }
}

/**
 * What matters in one answer. `held` is the signed-in session's cookies: a Set-Cookie that renews one of
 * them with its value (a rolling session) sets no session; a new value does.
 */
export function observe (answer: Answer, site: SiteView, held?: CookieJar): Observation {
  const raw = answer.headers.get('location')
  let location: string | null = raw
  let locationForm: Observation['locationForm'] = 'none'
  let backUrl: string | null = null
  if (raw !== null) {
    locationForm = /^[a-z][a-z0-9+.-]*:/i.test(raw) || raw.startsWith('//') ? 'absolute' : 'relative'
    const origin = site.origins.find((o) => raw.toLowerCase().startsWith(o.toLowerCase()) && /^(?:[/?#]|$)/.test(raw.slice(o.length)))
    // The site's own origin is normalised away; a Location elsewhere keeps its origin, so it differs.
    const local = origin !== undefined ? raw.slice(origin.length) || '/' : raw
    const q = local.indexOf('?')
    if (q >= 0) {
      const { value, rest } = takeParam(local.slice(q + 1), site.returnParam)
      backUrl = value
      location = `${local.slice(0, q)}?${rest}`
    } else {
      location = local
    }
  }
  const sessionCookie = answer.headers.getSetCookie().some((c) => {
    const [name, value] = c.split(';')[0].split(/=(.*)/s).map((s) => s.trim())
    return site.sessionCookies.includes(name) && held?.get(name) !== value
  })
  return { status: answer.status, location, locationForm, backUrl, cacheability: cacheabilityOf(answer.status, answer.headers), sessionCookie }
}

/** PHP's `urldecode`: `+` is a space, then %XX bytes as UTF-8 (a malformed escape stays as written). */
export function phpUrldecode (value: string): string {
  const plus = value.replaceAll('+', ' ')
  try {
    return decodeURIComponent(plus)
  } catch {
    return plus
  }
}

export type DifferenceKind =
  | 'status' | 'location' | 'location-form' | 'back-url' | 'back-url-encoding' | 'cacheability' | 'session-cookie' | 'request-failed'

export interface Difference {
  kind: DifferenceKind
  legacy: string
  candidate: string
  /** The comparisons this one makes moot (a status difference's Location), listed but not counted. */
  also?: Difference[]
}

const shown = (v: string | null) => v ?? '(none)'

export interface CompareOptions {
  /** Legacy 5 strips the trailing slash before it redirects: the return addresses are compared without it. */
  ignoreTrailingSlashInBackUrl?: boolean
}

/**
 * Every way the candidate's answer differs from the legacy's, each cause once, under its root kind: a
 * different status makes the Location and return-address comparisons moot, as a Location on one side
 * only makes its form and return address moot; those ride along as `also`. Cacheability and the session
 * cookie stand on their own. Empty when they agree.
 */
export function compare (legacy: Observation, candidate: Observation, options: CompareOptions = {}): Difference[] {
  const location: Difference[] = []
  const add = (to: Difference[], kind: DifferenceKind, a: string, b: string) => { if (a !== b) to.push({ kind, legacy: a, candidate: b }) }
  add(location, 'location-form', legacy.locationForm, candidate.locationForm)
  add(location, 'location', shown(legacy.location), shown(candidate.location))
  if (legacy.backUrl !== null && candidate.backUrl !== null) {
    const strip = (v: string) => options.ignoreTrailingSlashInBackUrl === true ? v.replace(/(?:%2F|\/)((?:%3F|\?).*)?$/i, '$1') : v
    const [a, b] = [strip(legacy.backUrl), strip(candidate.backUrl)]
    if (a !== b) {
      if (phpUrldecode(a) === phpUrldecode(b)) add(location, 'back-url-encoding', legacy.backUrl, candidate.backUrl)
      else add(location, 'back-url', `${legacy.backUrl} (${phpUrldecode(legacy.backUrl)})`, `${candidate.backUrl} (${phpUrldecode(candidate.backUrl)})`)
    }
  } else {
    add(location, 'back-url', shown(legacy.backUrl), shown(candidate.backUrl))
  }
  const out: Difference[] = []
  const where = location.find((d) => d.kind === 'location')
  const also = (d: Difference, moot: Difference[]) => moot.length > 0 ? { ...d, also: moot } : d
  if (legacy.status !== candidate.status) {
    out.push(also({ kind: 'status', legacy: String(legacy.status), candidate: String(candidate.status) }, location))
  } else if (where !== undefined && (legacy.location === null || candidate.location === null)) {
    out.push(also(where, location.filter((d) => d !== where)))
  } else if (where !== undefined && (legacy.backUrl === null) !== (candidate.backUrl === null)) {
    // A return address on one side only is part of the Location's difference.
    out.push(...location.filter((d) => d.kind === 'location-form'), also(where, location.filter((d) => d.kind === 'back-url')))
  } else {
    out.push(...location)
  }
  add(out, 'cacheability', legacy.cacheability, candidate.cacheability)
  add(out, 'session-cookie', legacy.sessionCookie ? 'set' : 'none', candidate.sessionCookie ? 'set' : 'none')
  return out
}
