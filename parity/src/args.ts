import { parseArgs } from 'node:util'
import type { CrawlBounds } from './crawl.js'
import type { Credentials } from './sign-in.js'
import { ParityInputError } from './errors.js'
import { DEFAULT_POLITENESS, type Politeness } from './politeness.js'

export interface ParityOptions {
  legacy: string
  candidate: string
  /** Every origin each site writes its own absolute Locations with (where it runs first). */
  legacyOrigins: string[]
  candidateOrigins: string[]
  addressFiles: string[]
  sitemaps: string[]
  crawl?: CrawlBounds
  variants: boolean
  prefix: string
  /** The User-Agent: all an `--allow-origin` is sent. */
  userAgent: string
  legacyHeaders: Record<string, string>
  candidateHeaders: Record<string, string>
  legacyReturnParam: string
  returnParam: string
  legacyMajor: 4 | 5
  sessionCookies: string[]
  method: 'GET' | 'HEAD'
  politeness: Politeness
  allowFiles: string[]
  defaultAllow: boolean
  json?: string
  junit?: string
  examples: number
  /** Origins beyond the two sites that sitemaps and addresses may name (`--allow-origin`), fetched without credentials. */
  allowOrigins: string[]
  /** Bytes of one page's body read at most, after decompression. */
  maxBody: number
  /** Bytes of one sitemap read at most, after decompression. */
  maxSitemapBody: number
  /** Addresses one `--sitemap` (with the sitemaps of its index) adds at most. */
  sitemapMax: number
  /** With both: the addresses are compared a second time, signed in to each site. */
  signIn?: { legacy: Credentials, candidate: Credentials, loginPath: string }
}

/** Sitemaps.org's own limits for a sitemap (50 MB, 50,000 URLs); a page of a school site is far smaller. */
export const DEFAULT_BOUNDS = { maxBody: 10 * 1024 * 1024, maxSitemapBody: 50 * 1024 * 1024, sitemapMax: 50_000 }

const USER_AGENT = 'fastify-schools-resources-parity/1 (+https://www.npmjs.com/package/fastify-schools-resources)'

export const USAGE = `Usage: fastify-schools-resources parity --legacy <origin> --candidate <origin> [inputs] [options]

Requests each address from both sites as an anonymous visitor (GET, redirects not followed) and
compares status, Location (each site's origin taken out), the return address (byte for byte and
decoded), cacheability and whether a session cookie is set. Exit 0: nothing differs beyond the
allow-list; 1: something does; 2: the run could not be made. docs/parity.md has the details.

Inputs (at least one):
  --addresses <file>            one address a line: a path (/schools/...) or an http(s) URL (repeatable)
  --sitemap <file|url>          a sitemap.xml or sitemap index (repeatable)
  --crawl                       follow links under --prefix from the legacy section's index
  --crawl-depth <n>             link levels to follow (default 2)
  --crawl-max <n>               addresses to find at most (default 200)
  --variants                    also each category address without its trailing slash, with a query,
                                percent-encoded, with reserved characters, and in upper case
Sites:
  --candidate-public-origin <origin>  the origin the candidate writes in its Locations (its BASE_URL)
  --legacy-public-origin <origin>     the same for the legacy site (default: --legacy)
  --header 'Name: value'        sent to both sites, and only to them (repeatable); --legacy-header,
                                --candidate-header: one site
  --allow-origin <origin>       another origin a sitemap or an address may name (repeatable); fetched
                                without headers or cookies; none on a private, loopback or link-local
                                address unless --legacy or --candidate is on one of the same kind
  --prefix <path>               the section's path (default /schools/resources)
  --return-param <name>         the candidate's return parameter (default BackURL)
  --legacy-return-param <name>  the legacy site's (default BackURL)
  --legacy-major <4|5>          5: the legacy site redirects /x/ to /x first (default 4)
  --session-cookie <name>       a session cookie's name (repeatable; default PHPSESSID and sessionId)
  --head                        send HEAD rather than GET
Signed in (compared a second time as a member; the only POSTs, to each site's login form):
  --legacy-user <email>         with PARITY_LEGACY_PASSWORD in the environment
  --candidate-user <email>      with PARITY_CANDIDATE_PASSWORD in the environment
  --login-path <path>           the login page on both sites (default /Security/login)
Politeness, per origin:
  --concurrency <n>             requests at once (default ${DEFAULT_POLITENESS.concurrency})
  --rate <n>                    requests started per second (default ${DEFAULT_POLITENESS.ratePerSecond})
  --timeout <ms>                per attempt (default ${DEFAULT_POLITENESS.timeoutMs})
  --retries <n>                 after a network error, 429 or 5xx, with doubling backoff (default ${DEFAULT_POLITENESS.retries})
  --user-agent <text>           (default ${USER_AGENT})
Bounds, per answer (each hit is reported):
  --max-body <bytes>            of a page, after decompression (default ${DEFAULT_BOUNDS.maxBody}, 10 MB)
  --max-sitemap-body <bytes>    of a sitemap, after decompression (default ${DEFAULT_BOUNDS.maxSitemapBody}, 50 MB)
  --sitemap-max <n>             addresses one --sitemap adds, its index's sitemaps included (default ${DEFAULT_BOUNDS.sitemapMax})
Results:
  --allow <file>                more allowed differences (repeatable); --no-default-allow drops the shipped ones
  --json <file>, --junit <file> reports, each written whole or not at all
  --examples <n>                example addresses per kind in the summary (default 3)
`

function origin (value: string, name: string): string {
  const url = URL.parse(value)
  if (url === null || !/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new ParityInputError(`--${name} ${JSON.stringify(value)} is not an origin such as https://www.example.org`)
  }
  return url.origin
}

function count (value: string, name: string, min: number): number {
  const n = Number(value)
  if (!/^\d+(?:\.\d+)?$/.test(value) || n < min) throw new ParityInputError(`--${name} ${JSON.stringify(value)} must be a number of at least ${min}`)
  return n
}

function whole (value: string, name: string, min: number): number {
  const n = count(value, name, min)
  if (!Number.isSafeInteger(n)) throw new ParityInputError(`--${name} ${JSON.stringify(value)} must be a whole number of at least ${min}`)
  return n
}

function headers (values: string[], name: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const value of values) {
    const [, key, v] = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(value) ?? []
    if (key === undefined) throw new ParityInputError(`--${name} ${JSON.stringify(value)} is not a header such as 'Authorization: Basic dXNlcjpwYXNz'`)
    out[key.toLowerCase()] = v
  }
  return out
}

const PARAM = /^[A-Za-z0-9_.-]+$/

/** The options of `parity`, checked: every mistake is a ParityInputError naming the option. */
export function parseParityArgs (argv: string[], env: Record<string, string | undefined>): ParityOptions | 'help' {
  let values
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        legacy: { type: 'string' },
        candidate: { type: 'string' },
        'candidate-public-origin': { type: 'string' },
        'legacy-public-origin': { type: 'string' },
        addresses: { type: 'string', multiple: true, default: [] },
        sitemap: { type: 'string', multiple: true, default: [] },
        crawl: { type: 'boolean', default: false },
        'crawl-depth': { type: 'string', default: '2' },
        'crawl-max': { type: 'string', default: '200' },
        variants: { type: 'boolean', default: false },
        header: { type: 'string', multiple: true, default: [] },
        'legacy-header': { type: 'string', multiple: true, default: [] },
        'candidate-header': { type: 'string', multiple: true, default: [] },
        prefix: { type: 'string', default: '/schools/resources' },
        'return-param': { type: 'string', default: 'BackURL' },
        'legacy-return-param': { type: 'string', default: 'BackURL' },
        'legacy-major': { type: 'string', default: '4' },
        'session-cookie': { type: 'string', multiple: true, default: ['PHPSESSID', 'sessionId'] },
        head: { type: 'boolean', default: false },
        concurrency: { type: 'string', default: String(DEFAULT_POLITENESS.concurrency) },
        rate: { type: 'string', default: String(DEFAULT_POLITENESS.ratePerSecond) },
        timeout: { type: 'string', default: String(DEFAULT_POLITENESS.timeoutMs) },
        retries: { type: 'string', default: String(DEFAULT_POLITENESS.retries) },
        'user-agent': { type: 'string', default: USER_AGENT },
        'allow-origin': { type: 'string', multiple: true, default: [] },
        'max-body': { type: 'string', default: String(DEFAULT_BOUNDS.maxBody) },
        'max-sitemap-body': { type: 'string', default: String(DEFAULT_BOUNDS.maxSitemapBody) },
        'sitemap-max': { type: 'string', default: String(DEFAULT_BOUNDS.sitemapMax) },
        allow: { type: 'string', multiple: true, default: [] },
        'no-default-allow': { type: 'boolean', default: false },
        json: { type: 'string' },
        junit: { type: 'string' },
        examples: { type: 'string', default: '3' },
        'legacy-user': { type: 'string' },
        'candidate-user': { type: 'string' },
        'login-path': { type: 'string', default: '/Security/login' }
      }
    }))
  } catch (err) {
    throw new ParityInputError((err as Error).message)
  }
  if (values.help === true) return 'help'
  if (values.legacy === undefined || values.candidate === undefined) throw new ParityInputError('--legacy and --candidate are both required')
  const legacy = origin(values.legacy, 'legacy')
  const candidate = origin(values.candidate, 'candidate')
  const legacyPublic = values['legacy-public-origin'] === undefined ? legacy : origin(values['legacy-public-origin'], 'legacy-public-origin')
  const candidatePublic = values['candidate-public-origin'] === undefined ? candidate : origin(values['candidate-public-origin'], 'candidate-public-origin')
  if (values.addresses.length === 0 && values.sitemap.length === 0 && !values.crawl) throw new ParityInputError('no addresses: give --addresses, --sitemap or --crawl')
  if (!/^(?:\/[^/?#\s]+)+$/.test(values.prefix)) throw new ParityInputError(`--prefix ${JSON.stringify(values.prefix)} must be a path such as /schools/resources (no trailing slash)`)
  for (const name of ['return-param', 'legacy-return-param'] as const) {
    if (!PARAM.test(values[name])) throw new ParityInputError(`--${name} ${JSON.stringify(values[name])} must be a query parameter name such as BackURL`)
  }
  if (values['legacy-major'] !== '4' && values['legacy-major'] !== '5') throw new ParityInputError(`--legacy-major ${JSON.stringify(values['legacy-major'])} must be 4 or 5`)
  const both = headers(values.header, 'header')
  let signIn: ParityOptions['signIn']
  if (values['legacy-user'] !== undefined || values['candidate-user'] !== undefined) {
    const credentials = (site: 'legacy' | 'candidate'): Credentials => {
      const user = values[`${site}-user`]
      const password = env[`PARITY_${site.toUpperCase()}_PASSWORD`]
      if (user === undefined || password === undefined || password === '') {
        throw new ParityInputError(`signing in needs --legacy-user and --candidate-user, with PARITY_LEGACY_PASSWORD and PARITY_CANDIDATE_PASSWORD set (${site} is missing)`)
      }
      return { user, password }
    }
    if (!/^(?:\/[^/?#\s]+)+$/.test(values['login-path'])) throw new ParityInputError(`--login-path ${JSON.stringify(values['login-path'])} must be a path such as /Security/login`)
    signIn = { legacy: credentials('legacy'), candidate: credentials('candidate'), loginPath: values['login-path'] }
  }
  const userAgent = { 'user-agent': values['user-agent'] }
  return {
    legacy,
    candidate,
    legacyOrigins: [...new Set([legacy, legacyPublic])],
    candidateOrigins: [...new Set([candidate, candidatePublic])],
    addressFiles: values.addresses,
    sitemaps: values.sitemap,
    crawl: values.crawl ? { depth: whole(values['crawl-depth'], 'crawl-depth', 0), max: whole(values['crawl-max'], 'crawl-max', 1) } : undefined,
    variants: values.variants,
    prefix: values.prefix,
    userAgent: values['user-agent'],
    legacyHeaders: { ...userAgent, ...both, ...headers(values['legacy-header'], 'legacy-header') },
    candidateHeaders: { ...userAgent, ...both, ...headers(values['candidate-header'], 'candidate-header') },
    legacyReturnParam: values['legacy-return-param'],
    returnParam: values['return-param'],
    legacyMajor: values['legacy-major'] === '5' ? 5 : 4,
    sessionCookies: values['session-cookie'],
    method: values.head ? 'HEAD' : 'GET',
    politeness: {
      concurrency: whole(values.concurrency, 'concurrency', 1),
      ratePerSecond: count(values.rate, 'rate', 0.01),
      timeoutMs: count(values.timeout, 'timeout', 1),
      retries: whole(values.retries, 'retries', 0),
      backoffMs: DEFAULT_POLITENESS.backoffMs
    },
    allowOrigins: [...new Set(values['allow-origin'].map((o) => origin(o, 'allow-origin')))],
    maxBody: whole(values['max-body'], 'max-body', 1),
    maxSitemapBody: whole(values['max-sitemap-body'], 'max-sitemap-body', 1),
    sitemapMax: whole(values['sitemap-max'], 'sitemap-max', 1),
    allowFiles: values.allow,
    defaultAllow: !values['no-default-allow'],
    json: values.json,
    junit: values.junit,
    examples: whole(values.examples, 'examples', 0),
    ...(signIn === undefined ? {} : { signIn })
  }
}
