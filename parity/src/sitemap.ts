import { readFile } from 'node:fs/promises'
import { ParityInputError } from './errors.js'

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const unescapeXml = (text: string) => text.replace(/&(amp|lt|gt|quot|apos);/g, (_m, name: string) => ENTITIES[name])

/** A sitemap's `<loc>` URLs and whether it is an index of other sitemaps; a document that is neither fails. */
function parseSitemap (xml: string, name: string): { index: boolean, locs: string[] } {
  const root = /<(urlset|sitemapindex)[\s>]/.exec(xml)
  if (root === null || !xml.includes(`</${root[1]}>`)) {
    throw new ParityInputError(`sitemap ${name} does not parse: no <urlset> or <sitemapindex> element, or it is not closed`)
  }
  const locs: string[] = []
  for (const [, loc] of xml.matchAll(/<loc>([\s\S]*?)<\/loc>/g)) {
    const text = unescapeXml(loc.trim())
    if (!/^https?:\/\/[^\s]+$/i.test(text) || !URL.canParse(text)) throw new ParityInputError(`sitemap ${name} does not parse: <loc>${text.slice(0, 80)}</loc> is not an http(s) URL`)
    locs.push(text)
  }
  if ((xml.match(/<loc>/g) ?? []).length !== locs.length) throw new ParityInputError(`sitemap ${name} does not parse: a <loc> is not closed`)
  return { index: root[1] === 'sitemapindex', locs }
}

/** Fetches a URL's body (through the politeness limits), or fails with a message. */
export type BodyGetter = (url: string) => Promise<{ status: number, body: string }>

async function loadOne (source: string, get: BodyGetter): Promise<string> {
  if (!/^https?:\/\//i.test(source)) {
    try {
      return await readFile(source, 'utf8')
    } catch (err) {
      throw new ParityInputError(`sitemap ${source}: cannot read it (${(err as NodeJS.ErrnoException).code})`)
    }
  }
  let answer: { status: number, body: string }
  try {
    answer = await get(source)
  } catch (err) {
    throw new ParityInputError(`sitemap ${source}: cannot fetch it: ${(err as Error).message}`)
  }
  if (answer.status !== 200) throw new ParityInputError(`sitemap ${source}: answered ${answer.status}, not 200`)
  return answer.body
}

/** The paths and queries a sitemap (a file or a URL) lists; a sitemap index is followed one level down. */
export async function readSitemap (source: string, get: BodyGetter): Promise<string[]> {
  const { index, locs } = parseSitemap(await loadOne(source, get), source)
  const urls = index
    ? (await Promise.all(locs.map(async (loc) => parseSitemap(await loadOne(loc, get), loc)))).flatMap((s) => s.index ? [] : s.locs)
    : locs
  return urls.map((u) => { const url = new URL(u); return url.pathname + url.search })
}
