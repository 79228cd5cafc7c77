import type { Answer } from './politeness.js'

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
 * RFC 9111 as a cache reads it: no-store (and no-cache, which allows no use without asking the site
 * again) is nobody; private is the browser only; otherwise an explicit lifetime, `public`, or a
 * heuristically cacheable status lets a shared cache keep it.
 */
export function cacheabilityOf (status: number, headers: Headers): Cacheability {
  const directives = (headers.get('cache-control') ?? '').toLowerCase().split(',').map((d) => d.trim().split('=')[0])
  if (directives.includes('no-store') || directives.includes('no-cache') || /no-cache/i.test(headers.get('pragma') ?? '')) return 'none'
  if (directives.includes('private')) return 'private'
  const maxAge = /(?:^|,)\s*(?:s-maxage|max-age)\s*=\s*"?(\d+)/i.exec(headers.get('cache-control') ?? '')
  if (maxAge !== null) return Number(maxAge[1]) > 0 ? 'shared' : 'none'
  if (directives.includes('public') || headers.has('expires') || HEURISTIC.has(status)) return 'shared'
  return 'none'
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

export function observe (answer: Answer, site: SiteView): Observation {
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
  const sessionCookie = answer.headers.getSetCookie().some((c) => site.sessionCookies.includes(c.split('=')[0].trim()))
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
}

const shown = (v: string | null) => v ?? '(none)'

export interface CompareOptions {
  /** Legacy 5 strips the trailing slash before it redirects: the return addresses are compared without it. */
  ignoreTrailingSlashInBackUrl?: boolean
}

/** Every way the candidate's answer differs from the legacy's, by kind; empty when they agree. */
export function compare (legacy: Observation, candidate: Observation, options: CompareOptions = {}): Difference[] {
  const out: Difference[] = []
  const add = (kind: DifferenceKind, a: string, b: string) => { if (a !== b) out.push({ kind, legacy: a, candidate: b }) }
  add('status', String(legacy.status), String(candidate.status))
  add('location-form', legacy.locationForm, candidate.locationForm)
  add('location', shown(legacy.location), shown(candidate.location))
  if (legacy.backUrl !== null && candidate.backUrl !== null) {
    const strip = (v: string) => options.ignoreTrailingSlashInBackUrl === true ? v.replace(/(?:%2F|\/)((?:%3F|\?).*)?$/i, '$1') : v
    const [a, b] = [strip(legacy.backUrl), strip(candidate.backUrl)]
    if (a !== b) {
      if (phpUrldecode(a) === phpUrldecode(b)) add('back-url-encoding', legacy.backUrl, candidate.backUrl)
      else add('back-url', `${legacy.backUrl} (${phpUrldecode(legacy.backUrl)})`, `${candidate.backUrl} (${phpUrldecode(candidate.backUrl)})`)
    }
  } else {
    add('back-url', shown(legacy.backUrl), shown(candidate.backUrl))
  }
  add('cacheability', legacy.cacheability, candidate.cacheability)
  add('session-cookie', legacy.sessionCookie ? 'set' : 'none', candidate.sessionCookie ? 'set' : 'none')
  return out
}
