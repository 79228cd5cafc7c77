import type { ParityOptions } from './args.js'
import { readAddressFile, type Address, type Source } from './addresses.js'
import { allowedBy, DEFAULT_ALLOW_LIST, parseAllowList, readAllowList, type AllowRule } from './allow-list.js'
import { compare, observe, type Difference, type SiteView } from './compare.js'
import { crawl } from './crawl.js'
import { ParityInputError } from './errors.js'
import { Notes, type Cap, type Noted } from './notes.js'
import { checkAllowedOrigins, Scope, type Place, type SiteName } from './origins.js'
import { OriginLimiter, politeRequest, RequestFailure, type Answer, type BodyRead } from './politeness.js'
import { cookieHeader, signIn, type CookieJar, type Requester } from './sign-in.js'
import { readSitemap } from './sitemap.js'
import { variantsOf } from './variants.js'

export interface AddressResult {
  target: string
  /** Compared signed in to both sites (absent: as an anonymous visitor). */
  as?: 'member'
  source: Source
  /** Differences no allow rule covers: these fail the run. */
  differences: Difference[]
  /** Differences an allow rule covers, with the rule's `file:line`. */
  allowed: Array<Difference & { rule: string }>
  /** Legacy 5's trailing-slash redirect, followed before comparing. */
  followed?: string
}

export interface RunResult {
  legacy: string
  candidate: string
  startedAt: string
  durationMs: number
  requests: number
  results: AddressResult[]
  /** Addresses on other origins the inputs named: never fetched. */
  skipped: Noted
  /** The caps hit, by flag: what was not read. */
  capped: Partial<Record<Cap, Noted>>
}

/** The signed-in sessions, one a site. */
interface Jars { legacy: CookieJar, candidate: CookieJar }

export type ProgressListener = (done: number, total: number, differing: number) => void

interface Fetch {
  method?: 'GET' | 'HEAD' | 'POST'
  /** Headers for this request alone (a signed-in session's cookie), added to the site's own. */
  extra?: Record<string, string>
  body?: string
  /** How the body is read; by default a page's, up to --max-body (a hit noted). */
  read?: BodyRead
  /** The body is not wanted: read up to --max-body and dropped. */
  discard?: boolean
}

/**
 * Every request of a run goes through here: each origin's limiter, made on first use, and each site's
 * own headers chosen by the site the address belongs to, so that `--legacy-header` (and the legacy
 * session) reach only `--legacy`, `--candidate-header` only `--candidate`, `--header` only those two,
 * and an `--allow-origin` gets the User-Agent alone. Redirects are never followed.
 */
class Fetcher {
  readonly #limiters = new Map<string, OriginLimiter>()
  readonly #headers: Record<SiteName, Record<string, string>>
  requests = 0
  constructor (private readonly options: ParityOptions, private readonly notes: Notes) {
    this.#headers = { legacy: options.legacyHeaders, candidate: options.candidateHeaders, other: { 'user-agent': options.userAgent } }
  }

  /** `target` (a path) on one of the two sites. */
  async site (site: 'legacy' | 'candidate', target: string, fetch: Fetch = {}): Promise<Answer> {
    return await this.get({ site, url: (site === 'legacy' ? this.options.legacy : this.options.candidate) + target }, fetch)
  }

  async get ({ site, url }: Place, { method = 'GET', extra = {}, body, read, discard }: Fetch = {}): Promise<Answer> {
    const origin = new URL(url).origin
    let limiter = this.#limiters.get(origin)
    if (limiter === undefined) this.#limiters.set(origin, limiter = new OriginLimiter(this.options.politeness.concurrency, this.options.politeness.ratePerSecond))
    this.requests++
    // The sign-in is never retried: a failed password counts towards the site's lockout.
    const politeness = method === 'POST' ? { ...this.options.politeness, retries: 0 } : this.options.politeness
    const answer = await politeRequest(url, method, { ...this.#headers[site], ...extra }, limiter, politeness, read ?? { maxBytes: this.options.maxBody, discard }, body)
    if (read === undefined && answer.cut) this.notes.cap('--max-body', url)
    return answer
  }
}

const stripSlash = (target: string) => target.replace(/(.)\/(\?|$)/, '$1$2')

async function gather (options: ParityOptions, fetcher: Fetcher, scope: Scope, notes: Notes): Promise<Address[]> {
  const seen = new Map<string, Source>()
  const add = (targets: string[], source: Source) => { for (const t of targets) if (!seen.has(t)) seen.set(t, source) }
  // An address file's URLs are kept when on either site (or an --allow-origin): their path is compared.
  const local = (entry: string) => {
    if (entry.startsWith('/')) return [entry]
    if (scope.place(entry) === undefined) { notes.skip(entry); return [] }
    const url = new URL(entry)
    return [url.pathname + url.search]
  }
  for (const file of options.addressFiles) add((await readAddressFile(file)).flatMap(local), 'file')
  const reading = { scope, notes, bounds: { maxBody: options.maxSitemapBody, maxAddresses: options.sitemapMax }, get: async (place: Place, read: BodyRead) => await fetcher.get(place, { read }) }
  for (const sitemap of options.sitemaps) add(await readSitemap(sitemap, reading), 'sitemap')
  if (options.crawl !== undefined) {
    // Legacy 5 would answer the index with a slash by its canonical redirect, which has no links.
    const start = options.legacyMajor === 5 ? options.prefix : `${options.prefix}/`
    add(await crawl(options.prefix, start, options.legacyOrigins, options.crawl, async (target) => await fetcher.site('legacy', target), notes), 'crawl')
  }
  if (options.variants) add([...seen.keys()].flatMap((t) => variantsOf(t, options.prefix)), 'variant')
  if (seen.size === 0) throw new ParityInputError(`the inputs hold no address${notes.skipped.count > 0 ? ` on either site (${notes.skipped.count} on other origins, skipped)` : ''}`)
  return [...seen].map(([target, source]) => ({ target, source }))
}

/** Both sites must answer something before thousands of addresses are tried against them. */
async function reach (site: 'legacy' | 'candidate', origin: string, target: string, fetcher: Fetcher): Promise<void> {
  try {
    await fetcher.site(site, target)
  } catch (err) {
    throw new ParityInputError(`cannot reach the ${site} site ${origin}: ${(err as RequestFailure).message}`)
  }
}

export async function runParity (options: ParityOptions, onProgress: ProgressListener): Promise<RunResult> {
  const started = performance.now()
  const startedAt = new Date().toISOString()
  const rules: AllowRule[] = options.defaultAllow ? parseAllowList(DEFAULT_ALLOW_LIST, 'default allow-list') : []
  for (const file of options.allowFiles) rules.push(...await readAllowList(file))
  await checkAllowedOrigins(options)
  const notes = new Notes()
  const fetcher = new Fetcher(options, notes)
  await reach('legacy', options.legacy, `${options.prefix}/`, fetcher)
  await reach('candidate', options.candidate, `${options.prefix}/`, fetcher)
  const addresses = await gather(options, fetcher, new Scope(options), notes)

  const legacySite: SiteView = { origins: options.legacyOrigins, returnParam: options.legacyReturnParam, sessionCookies: options.sessionCookies }
  const candidateSite: SiteView = { origins: options.candidateOrigins, returnParam: options.returnParam, sessionCookies: options.sessionCookies }
  const ask = async (site: 'legacy' | 'candidate', jar: CookieJar | undefined, target: string) =>
    await fetcher.site(site, target, { method: options.method, extra: jar === undefined ? {} : { cookie: cookieHeader(jar) }, discard: true })

  async function one ({ target, source }: Address, jars?: Jars): Promise<AddressResult> {
    const [legacyJar, candidateJar] = [jars?.legacy, jars?.candidate]
    const [l, c] = await Promise.allSettled([ask('legacy', legacyJar, target), ask('candidate', candidateJar, target)])
    if (l.status === 'rejected' || c.status === 'rejected') {
      const said = (r: PromiseSettledResult<Answer>) => r.status === 'rejected' ? (r.reason as Error).message : `answered ${r.value.status}`
      return { target, source, differences: [{ kind: 'request-failed', legacy: said(l), candidate: said(c) }], allowed: [] }
    }
    let legacy = observe(l.value, legacySite, legacyJar)
    let followed: string | undefined
    // Legacy 5 (SilverStripe 5.1+, add_trailing_slash off) sends /x/ to /x before its access check.
    if (options.legacyMajor === 5 && [301, 308].includes(legacy.status) && legacy.location === stripSlash(target) && legacy.location !== target) {
      followed = legacy.location
      legacy = observe(await ask('legacy', legacyJar, followed), legacySite, legacyJar)
    }
    const found = compare(legacy, observe(c.value, candidateSite, candidateJar), { ignoreTrailingSlashInBackUrl: followed !== undefined })
    const result: AddressResult = { target, source, differences: [], allowed: [], ...(followed === undefined ? {} : { followed }) }
    for (const d of found) {
      const rule = allowedBy(rules, target, jars === undefined ? 'visitor' : 'member', d)
      if (rule === undefined) result.differences.push(d)
      else result.allowed.push({ ...d, rule: rule.from })
    }
    return result
  }

  const results: AddressResult[] = []
  let done = 0
  let differing = 0
  async function pass (jars: Jars | undefined, extra: Partial<AddressResult>, total: number): Promise<void> {
    const found: AddressResult[] = new Array(addresses.length)
    let next = 0
    // As many workers as one origin may have requests in flight: each asks both sites at once.
    const workers = Array.from({ length: Math.min(options.politeness.concurrency, addresses.length) }, async () => {
      while (next < addresses.length) {
        const i = next++
        const r = await one(addresses[i], jars).catch((err: Error) => ({
          target: addresses[i].target, source: addresses[i].source, allowed: [], differences: [{ kind: 'request-failed' as const, legacy: err.message, candidate: '(not compared)' }]
        }))
        found[i] = { ...extra, ...r }
        done++
        if (r.differences.length > 0) differing++
        onProgress(done, total, differing)
      }
    })
    await Promise.all(workers)
    results.push(...found)
  }
  const total = addresses.length * (options.signIn === undefined ? 1 : 2)
  await pass(undefined, {}, total)
  if (options.signIn !== undefined) {
    const { loginPath } = options.signIn
    // Each site's sign-in talks to that site alone: its requester cannot name another origin's headers.
    const requester = (site: 'legacy' | 'candidate'): Requester => async (target, method, extra, body) => await fetcher.site(site, target, { method, extra, body })
    const legacy = await signIn({ name: 'legacy', origin: options.legacy, origins: options.legacyOrigins }, loginPath, options.signIn.legacy, requester('legacy'))
    const candidate = await signIn({ name: 'candidate', origin: options.candidate, origins: options.candidateOrigins }, loginPath, options.signIn.candidate, requester('candidate'))
    await pass({ legacy, candidate }, { as: 'member' }, total)
  }
  return {
    legacy: options.legacy,
    candidate: options.candidate,
    startedAt,
    durationMs: Math.round(performance.now() - started),
    requests: fetcher.requests,
    results,
    skipped: notes.skipped,
    capped: notes.capped
  }
}
