import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import type { ParityOptions } from './args.js'
import { ParityInputError } from './errors.js'

/** The site an address is fetched from, which decides the headers (and cookies) it is sent with. */
export type SiteName = 'legacy' | 'candidate' | 'other'

/** Where a URL named by an input (a sitemap, an address file, a link) is fetched, if anywhere. */
export interface Place {
  site: SiteName
  /** The URL to fetch: a public origin's address rewritten to where that site runs. */
  url: string
}

/**
 * The origins the checker may fetch from: the two sites (where they run, and the public origins their
 * pages are written with, which are fetched where they run) and those allowed by name. Anything else an
 * input names is skipped, never fetched: a sitemap index or an address file is the site's to write.
 */
export class Scope {
  constructor (private readonly options: Pick<ParityOptions, 'legacy' | 'candidate' | 'legacyOrigins' | 'candidateOrigins' | 'allowOrigins'>) {}

  /** Where an http(s) URL (checked where it was read) is fetched; undefined: nowhere. */
  place (url: string): Place | undefined {
    const parsed = new URL(url)
    const rest = parsed.pathname + parsed.search
    const { legacy, candidate, legacyOrigins, candidateOrigins, allowOrigins } = this.options
    if (legacyOrigins.includes(parsed.origin)) return { site: 'legacy', url: legacy + rest }
    if (candidateOrigins.includes(parsed.origin)) return { site: 'candidate', url: candidate + rest }
    if (allowOrigins.includes(parsed.origin)) return { site: 'other', url: parsed.origin + rest }
    return undefined
  }
}

/** Addresses no public site has: the machine itself, its private networks, and the link-local one (cloud metadata). */
const NETWORKS: Record<string, { ipv4: string[], ipv6: string[] }> = {
  loopback: { ipv4: ['127.0.0.0/8', '0.0.0.0/8'], ipv6: ['::1/128', '::/128'] },
  private: { ipv4: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'], ipv6: ['fc00::/7'] },
  'link-local': { ipv4: ['169.254.0.0/16'], ipv6: ['fe80::/10'] }
}
const KINDS = Object.entries(NETWORKS).map(([kind, networks]) => {
  const list = new BlockList()
  for (const family of ['ipv4', 'ipv6'] as const) {
    for (const network of networks[family]) {
      const [address, bits] = network.split('/')
      list.addSubnet(address, Number(bits), family)
    }
  }
  return [kind, list] as const
})

/** The kind of a non-public address (`loopback`, `private`, `link-local`), or undefined for a public one. */
export function addressKind (address: string): string | undefined {
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is the IPv4 one.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  const ip = mapped ?? address
  const family = isIP(ip) === 4 ? 'ipv4' : 'ipv6'
  return KINDS.find(([, list]) => list.check(ip, family))?.[0]
}

async function kindsOf (origin: string, option: string): Promise<Set<string | undefined>> {
  const host = new URL(origin).hostname.replace(/^\[(.*)\]$/, '$1')
  try {
    return new Set((await lookup(host, { all: true })).map((a) => addressKind(a.address)))
  } catch (err) {
    throw new ParityInputError(`${option} ${origin}: its host does not resolve (${(err as NodeJS.ErrnoException).code})`)
  }
}

/**
 * An `--allow-origin` on a private, loopback or link-local address is refused unless `--legacy` or
 * `--candidate` is on one of the same kind: a run against public sites never reaches inside the network
 * it runs in, whatever a sitemap names.
 */
export async function checkAllowedOrigins (options: Pick<ParityOptions, 'legacy' | 'candidate' | 'allowOrigins'>): Promise<void> {
  if (options.allowOrigins.length === 0) return
  const given = new Set([...await kindsOf(options.legacy, '--legacy'), ...await kindsOf(options.candidate, '--candidate')])
  for (const origin of options.allowOrigins) {
    for (const kind of await kindsOf(origin, '--allow-origin')) {
      if (kind !== undefined && !given.has(kind)) {
        throw new ParityInputError(`--allow-origin ${origin} is on a ${kind} address, and neither --legacy nor --candidate is: refused, so that no input can reach inside this network`)
      }
    }
  }
}
