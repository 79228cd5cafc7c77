import { createReadStream } from 'node:fs'
import { ParityInputError, printable } from './errors.js'
import type { Notes } from './notes.js'
import type { Place, Scope } from './origins.js'
import type { Answer, BodyRead } from './politeness.js'

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const unescapeXml = (text: string) => text.replace(/&(amp|lt|gt|quot|apos);/g, (_m, name: string) => ENTITIES[name])

/** Sitemaps.org: a URL of under 2,048 characters. A tag of a sitemap is short too. */
const MAX_LOC = 2048
const MAX_TAG = 4096

/**
 * A sitemap read as it arrives, in one pass: only an unfinished tag or `<loc>` is kept between chunks,
 * both bounded, so the work is in proportion to the text and the memory to the `<loc>` URLs kept (at
 * most `limit` of them). Whether it is an index is known from its root element.
 */
class SitemapParser {
  root: string | undefined
  closed = false
  /** It listed more than `limit` URLs: reading stopped there. */
  full = false
  /** An index where none is followed (within an index): reading stopped at its root element. */
  unwanted = false
  readonly locs: string[] = []
  #carry = ''
  #inComment = false
  #loc: string | undefined

  constructor (private readonly name: string, private readonly limit: number, private readonly indexWanted = true) {}

  #bad (why: string): ParityInputError {
    return new ParityInputError(`sitemap ${this.name} does not parse: ${why}`)
  }

  /** Reads the next text; false once it holds `limit` URLs and wants no more. */
  write (text: string): boolean {
    const buf = this.#carry + text
    this.#carry = ''
    let pos = 0
    for (;;) {
      if (this.#inComment) {
        const end = buf.indexOf('-->', pos)
        // The comment's last two characters may begin its end.
        if (end === -1) { this.#carry = buf.slice(Math.max(pos, buf.length - 2)); return true }
        this.#inComment = false
        pos = end + 3
      }
      const lt = buf.indexOf('<', pos)
      if (this.#loc !== undefined) {
        this.#loc += buf.slice(pos, lt === -1 ? buf.length : lt)
        if (this.#loc.length > MAX_LOC) throw this.#bad(`a <loc> is longer than ${MAX_LOC} characters`)
      }
      if (lt === -1) return true
      const gt = buf.indexOf('>', lt)
      if (buf.startsWith('<!--', lt)) {
        this.#inComment = true
        pos = lt + 4
        continue
      }
      if (gt === -1) {
        if (buf.length - lt > MAX_TAG) throw this.#bad(`a tag is longer than ${MAX_TAG} characters`)
        this.#carry = buf.slice(lt)
        return true
      }
      pos = gt + 1
      const [, slash, name] = /^<(\/?)([^\s/>]*)/.exec(buf.slice(lt, gt))!
      if (this.#loc !== undefined) {
        if (slash !== '/' || name !== 'loc') throw this.#bad('a <loc> is not closed')
        if (!this.#keep(unescapeXml(this.#loc.trim()))) return false
      } else if (slash === '' && name === 'loc' && buf[gt - 1] !== '/') {
        this.#loc = ''
      } else if (slash === '' && this.root === undefined && (name === 'urlset' || name === 'sitemapindex')) {
        this.root = name
        // An index within an index is not followed: its list would cost the reading and none of its addresses.
        if (name === 'sitemapindex' && !this.indexWanted) { this.unwanted = true; return false }
      } else if (slash === '/' && name === this.root) {
        this.closed = true
      }
    }
  }

  #keep (url: string): boolean {
    this.#loc = undefined
    if (!/^https?:\/\/[^\s]+$/i.test(url) || !URL.canParse(url)) throw this.#bad(`<loc>${printable(url.slice(0, 80))}</loc> is not an http(s) URL`)
    if (this.locs.length >= this.limit) {
      this.full = true
      return false
    }
    this.locs.push(url)
    return true
  }

  /** The URLs it listed, once the text is over (`whole`: not cut short by a cap). */
  end (whole: boolean): { index: boolean, locs: string[] } {
    const stopped = this.full || this.unwanted
    if (this.root === undefined || (whole && !stopped && !this.closed)) {
      throw this.#bad('no <urlset> or <sitemapindex> element, or it is not closed')
    }
    if (whole && !stopped && this.#loc !== undefined) throw this.#bad('a <loc> is not closed')
    return { index: this.root === 'sitemapindex', locs: this.locs }
  }
}

/** Fetches a sitemap's URL from its site (with that site's headers alone), through the politeness limits. */
export type SitemapGetter = (place: Place, read: BodyRead) => Promise<Answer>

export interface SitemapBounds {
  /** Bytes of one sitemap read at most, after decompression. */
  maxBody: number
  /** URLs one `--sitemap` adds at most, its index's sitemaps included. */
  maxAddresses: number
}

interface Reading {
  scope: Scope
  get: SitemapGetter
  bounds: SitemapBounds
  notes: Notes
}

async function readFileInto (file: string, parser: SitemapParser, maxBytes: number): Promise<boolean> {
  const stream = createReadStream(file, { start: 0, end: maxBytes })
  await new Promise<void>((resolve, reject) => {
    stream.once('ready', resolve)
    stream.once('error', (err: NodeJS.ErrnoException) => reject(new ParityInputError(`sitemap ${file}: cannot read it (${err.code})`)))
  })
  const decoder = new TextDecoder()
  let bytes = 0
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const kept = chunk.subarray(0, maxBytes - bytes)
    bytes += chunk.byteLength
    if (!parser.write(decoder.decode(kept, { stream: true }))) break
  }
  stream.destroy()
  return bytes > maxBytes
}

/** One sitemap (a file, or a URL on a site) read up to its caps; what it lists, and whether it is an index. */
async function loadOne (source: string, place: Place | undefined, limit: number, { get, bounds, notes }: Reading, indexWanted = true): Promise<{ index: boolean, locs: string[] }> {
  let parser = new SitemapParser(source, limit, indexWanted)
  let cut: boolean
  if (place === undefined) {
    cut = await readFileInto(source, parser, bounds.maxBody)
  } else {
    let answer: Answer
    try {
      answer = await get(place, { maxBytes: bounds.maxBody, reader: () => { parser = new SitemapParser(source, limit, indexWanted); return (text) => parser.write(text) } })
    } catch (err) {
      if (err instanceof ParityInputError) throw err
      throw new ParityInputError(`sitemap ${source}: cannot fetch it: ${(err as Error).message}`)
    }
    if (answer.status !== 200) throw new ParityInputError(`sitemap ${source}: answered ${answer.status}, not 200`)
    cut = answer.cut
  }
  if (cut) notes.cap('--max-sitemap-body', source)
  const listed = parser.end(!cut)
  if (parser.full) notes.cap('--sitemap-max', source)
  return listed
}

/**
 * The paths and queries a sitemap (a file or a URL) lists; a sitemap index is followed one level down.
 * Only URLs on the two sites (or an `--allow-origin`) are kept or fetched; the others are noted as
 * skipped. At most `maxAddresses` URLs are read from one `--sitemap` (skipped ones included), however
 * its index spreads them; the index's own list is bounded the same way.
 */
export async function readSitemap (source: string, reading: Reading): Promise<string[]> {
  const { scope, notes, bounds } = reading
  let top: Place | undefined
  if (/^https?:\/\//i.test(source)) {
    top = scope.place(source)
    if (top === undefined) throw new ParityInputError(`sitemap ${source} is on neither site: give --allow-origin ${new URL(source).origin} to read it`)
  }
  const targets: string[] = []
  let read = 0
  const keep = (locs: string[]) => {
    read += locs.length
    for (const loc of locs) {
      if (scope.place(loc) === undefined) notes.skip(loc)
      else { const url = new URL(loc); targets.push(url.pathname + url.search) }
    }
  }
  const { index, locs } = await loadOne(source, top, bounds.maxAddresses, reading)
  if (!index) keep(locs)
  for (const loc of index ? locs : []) {
    const place = scope.place(loc)
    if (place === undefined) { notes.skip(loc); continue }
    if (read === bounds.maxAddresses) { notes.cap('--sitemap-max', loc); break }
    // An index within an index is not followed: it is read up to its root element only.
    const child = await loadOne(loc, place, bounds.maxAddresses - read, reading, false)
    if (!child.index) keep(child.locs)
  }
  return targets
}
