import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { ParityInputError } from './errors.js'

/** Where an address came from, for the report. */
export type Source = 'file' | 'sitemap' | 'crawl' | 'variant'

export interface Address {
  /** Path and query, as sent (`/schools/resources/resources/maths/?a=1`). */
  target: string
  source: Source
}

// eslint-disable-next-line no-control-regex -- control characters are what a bad line holds
const UNSENDABLE = /[\s\u0000-\u001f\u007f]/

/**
 * One line of an address file: a path (`/schools/…`) kept as written, or an http(s) URL, kept whole so
 * that its origin can be checked (access logs write the public one). Anything else is a mistake to report.
 */
function parseAddressLine (line: string): string | undefined {
  if (UNSENDABLE.test(line)) return undefined
  if (line.startsWith('/') && !line.startsWith('//')) return line
  if (!/^https?:\/\//i.test(line)) return undefined
  try {
    return new URL(line).href
  } catch {
    return undefined
  }
}

/** The addresses of a file, one per line (blank lines and `#` comments skipped); every bad line is named. */
export async function readAddressFile (file: string): Promise<string[]> {
  const stream = createReadStream(file, { encoding: 'utf8' })
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('ready', resolve)
    stream.once('error', (err: NodeJS.ErrnoException) => reject(new ParityInputError(`address file ${file}: cannot read it (${err.code})`)))
  })
  await opened
  const targets: string[] = []
  const bad: string[] = []
  let n = 0
  for await (const raw of createInterface({ input: stream, crlfDelay: Infinity })) {
    n++
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const target = parseAddressLine(line)
    if (target === undefined) bad.push(`${file}:${n}: ${JSON.stringify(line.slice(0, 80))} is not a path starting with / or an http(s) URL`)
    else targets.push(target)
  }
  if (bad.length > 0) {
    const more = bad.length > 10 ? `\n(and ${bad.length - 10} more bad lines)` : ''
    throw new ParityInputError(`address file ${file} has ${bad.length} bad line${bad.length === 1 ? '' : 's'}:\n${bad.slice(0, 10).join('\n')}${more}`)
  }
  return targets
}
