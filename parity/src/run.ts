import type { ParityOptions } from './args.js'
import { readAddressFile, type Address, type Source } from './addresses.js'
import { allowedBy, DEFAULT_ALLOW_LIST, parseAllowList, readAllowList, type AllowRule } from './allow-list.js'
import { compare, observe, type Difference, type SiteView } from './compare.js'
import { crawl } from './crawl.js'
import { ParityInputError } from './errors.js'
import { OriginLimiter, politeRequest, RequestFailure, type Answer } from './politeness.js'
import { cookieHeader, signIn } from './sign-in.js'
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
}

export type ProgressListener = (done: number, total: number, differing: number) => void

/** Each origin's limiter, made on first use, so a sitemap on a third host is limited too. */
class Limiters {
  readonly #map = new Map<string, OriginLimiter>()
  requests = 0
  constructor (private readonly options: ParityOptions) {}
  async get (url: string, headers: Record<string, string>, method: 'GET' | 'HEAD' | 'POST' = 'GET', body?: string): Promise<Answer> {
    const origin = new URL(url).origin
    let limiter = this.#map.get(origin)
    if (limiter === undefined) this.#map.set(origin, limiter = new OriginLimiter(this.options.politeness.concurrency, this.options.politeness.ratePerSecond))
    this.requests++
    // A sign-in is never retried: a failed password counts towards the site's lockout.
    const politeness = method === 'POST' ? { ...this.options.politeness, retries: 0 } : this.options.politeness
    return await politeRequest(url, method, headers, limiter, politeness, body)
  }
}

const stripSlash = (target: string) => target.replace(/(.)\/(\?|$)/, '$1$2')

async function gather (options: ParityOptions, limiters: Limiters): Promise<Address[]> {
  const seen = new Map<string, Source>()
  const add = (targets: string[], source: Source) => { for (const t of targets) if (!seen.has(t)) seen.set(t, source) }
  for (const file of options.addressFiles) add(await readAddressFile(file), 'file')
  // A sitemap lists the legacy site's public addresses: those are fetched from where it runs.
  const fromLegacy = (url: string) => { const u = new URL(url); return options.legacyOrigins.includes(u.origin) ? options.legacy + u.pathname + u.search : url }
  for (const sitemap of options.sitemaps) add(await readSitemap(sitemap, (url) => limiters.get(fromLegacy(url), options.legacyHeaders)), 'sitemap')
  if (options.crawl !== undefined) {
    // Legacy 5 would answer the index with a slash by its canonical redirect, which has no links.
    const start = options.legacyMajor === 5 ? options.prefix : `${options.prefix}/`
    add(await crawl(options.prefix, start, options.legacyOrigins, options.crawl, (target) => limiters.get(options.legacy + target, options.legacyHeaders)), 'crawl')
  }
  if (options.variants) add([...seen.keys()].flatMap((t) => variantsOf(t, options.prefix)), 'variant')
  if (seen.size === 0) throw new ParityInputError('the inputs hold no address')
  return [...seen].map(([target, source]) => ({ target, source }))
}

/** Both sites must answer something before thousands of addresses are tried against them. */
async function reach (name: string, origin: string, target: string, headers: Record<string, string>, limiters: Limiters): Promise<void> {
  try {
    await limiters.get(origin + target, headers)
  } catch (err) {
    throw new ParityInputError(`cannot reach the ${name} site ${origin}: ${(err as RequestFailure).message}`)
  }
}

export async function runParity (options: ParityOptions, onProgress: ProgressListener): Promise<RunResult> {
  const started = performance.now()
  const startedAt = new Date().toISOString()
  const rules: AllowRule[] = options.defaultAllow ? parseAllowList(DEFAULT_ALLOW_LIST, 'default allow-list') : []
  for (const file of options.allowFiles) rules.push(...await readAllowList(file))
  const limiters = new Limiters(options)
  await reach('legacy', options.legacy, `${options.prefix}/`, options.legacyHeaders, limiters)
  await reach('candidate', options.candidate, `${options.prefix}/`, options.candidateHeaders, limiters)
  const addresses = await gather(options, limiters)

  const legacySite: SiteView = { origins: options.legacyOrigins, returnParam: options.legacyReturnParam, sessionCookies: options.sessionCookies }
  const candidateSite: SiteView = { origins: options.candidateOrigins, returnParam: options.returnParam, sessionCookies: options.sessionCookies }
  const ask = (origin: string, headers: Record<string, string>, target: string) => limiters.get(origin + target, headers, options.method)

  async function one ({ target, source }: Address, legacyHeaders: Record<string, string>, candidateHeaders: Record<string, string>): Promise<AddressResult> {
    const [l, c] = await Promise.allSettled([ask(options.legacy, legacyHeaders, target), ask(options.candidate, candidateHeaders, target)])
    if (l.status === 'rejected' || c.status === 'rejected') {
      const said = (r: PromiseSettledResult<Answer>) => r.status === 'rejected' ? (r.reason as Error).message : `answered ${r.value.status}`
      return { target, source, differences: [{ kind: 'request-failed', legacy: said(l), candidate: said(c) }], allowed: [] }
    }
    let legacy = observe(l.value, legacySite)
    let followed: string | undefined
    // Legacy 5 (SilverStripe 5.1+, add_trailing_slash off) sends /x/ to /x before its access check.
    if (options.legacyMajor === 5 && [301, 308].includes(legacy.status) && legacy.location === stripSlash(target) && legacy.location !== target) {
      followed = legacy.location
      legacy = observe(await ask(options.legacy, legacyHeaders, followed), legacySite)
    }
    const found = compare(legacy, observe(c.value, candidateSite), { ignoreTrailingSlashInBackUrl: followed !== undefined })
    const result: AddressResult = { target, source, differences: [], allowed: [], ...(followed === undefined ? {} : { followed }) }
    for (const d of found) {
      const rule = allowedBy(rules, target, d)
      if (rule === undefined) result.differences.push(d)
      else result.allowed.push({ ...d, rule: rule.from })
    }
    return result
  }

  const results: AddressResult[] = []
  let done = 0
  let differing = 0
  async function pass (legacyHeaders: Record<string, string>, candidateHeaders: Record<string, string>, extra: Partial<AddressResult>, total: number): Promise<void> {
    const found: AddressResult[] = new Array(addresses.length)
    let next = 0
    // As many workers as one origin may have requests in flight: each asks both sites at once.
    const workers = Array.from({ length: Math.min(options.politeness.concurrency, addresses.length) }, async () => {
      while (next < addresses.length) {
        const i = next++
        const r = await one(addresses[i], legacyHeaders, candidateHeaders).catch((err: Error) => ({
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
  await pass(options.legacyHeaders, options.candidateHeaders, {}, total)
  if (options.signIn !== undefined) {
    const { loginPath } = options.signIn
    const request = (url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string) => limiters.get(url, headers, method, body)
    const legacyJar = await signIn('legacy', options.legacy, loginPath, options.legacyHeaders, options.signIn.legacy, request)
    const candidateJar = await signIn('candidate', options.candidate, loginPath, options.candidateHeaders, options.signIn.candidate, request)
    await pass({ ...options.legacyHeaders, cookie: cookieHeader(legacyJar) }, { ...options.candidateHeaders, cookie: cookieHeader(candidateJar) }, { as: 'member' }, total)
  }
  return { legacy: options.legacy, candidate: options.candidate, startedAt, durationMs: Math.round(performance.now() - started), requests: limiters.requests, results }
}
