import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { Difference, DifferenceKind } from './compare.js'
import { ParityInputError, printable } from './errors.js'
import type { Cap, Noted } from './notes.js'
import type { RunResult } from './run.js'

const KIND_TITLES: Record<DifferenceKind, string> = {
  status: 'status code',
  location: 'Location (origin taken out)',
  'location-form': 'Location absolute or relative',
  'back-url': 'return address (decoded)',
  'back-url-encoding': 'return address encoding (same decoded)',
  cacheability: 'cacheability',
  'session-cookie': 'session cookie',
  'request-failed': 'request failed'
}

type Example = { target: string } & Difference

function byKind (result: RunResult, which: 'differences' | 'allowed'): Map<DifferenceKind, Example[]> {
  const groups = new Map<DifferenceKind, Example[]>()
  for (const r of result.results) {
    for (const d of r[which]) {
      const group = groups.get(d.kind) ?? []
      group.push({ target: labelOf(r), ...d })
      groups.set(d.kind, group)
    }
  }
  return groups
}

const labelOf = (r: RunResult['results'][number]) => r.as === 'member' ? `${r.target} (signed in)` : r.target

export const exitCodeOf = (result: RunResult) => result.results.some((r) => r.differences.length > 0) ? 1 : 0

/** The summary for a person: counts per kind of difference, with a few example addresses each. */
export function summaryTable (result: RunResult, examples: number): string {
  const sources = new Map<string, number>()
  const visitor = result.results.filter((r) => r.as === undefined)
  for (const r of visitor) sources.set(r.source, (sources.get(r.source) ?? 0) + 1)
  const members = result.results.length - visitor.length
  const differing = result.results.filter((r) => r.differences.length > 0).length
  const lines = [
    `Parity: legacy ${result.legacy} vs candidate ${result.candidate}`,
    `${visitor.length} addresses (${[...sources].map(([s, n]) => `${n} ${s}`).join(', ')})${members > 0 ? ', each also signed in' : ''}, ${result.requests} requests, ${(result.durationMs / 1000).toFixed(1)} s`,
    ''
  ]
  const groups = byKind(result, 'differences')
  if (groups.size === 0) {
    lines.push('No differences beyond the allow-list.')
  } else {
    lines.push(`${differing} of ${result.results.length} comparisons differ:`, '', `${'kind'.padEnd(40)} ${'addresses'.padStart(9)}  examples (legacy | candidate)`)
    for (const [kind, group] of groups) {
      lines.push(`${KIND_TITLES[kind].padEnd(40)} ${String(group.length).padStart(9)}`)
      for (const e of group.slice(0, examples)) {
        lines.push(`    ${printable(e.target)}\n      legacy:    ${printable(e.legacy)}\n      candidate: ${printable(e.candidate)}`)
        if (e.also !== undefined) lines.push(`      so also:   ${e.also.map((d) => KIND_TITLES[d.kind]).join(', ')}`)
      }
    }
  }
  const allowed = byKind(result, 'allowed')
  if (allowed.size > 0) {
    lines.push('', `Allowed (deliberate): ${[...allowed].map(([kind, g]) => `${KIND_TITLES[kind]} ${g.length}`).join(', ')}`)
  }
  lines.push(...notesOf(result), '', `Exit code ${exitCodeOf(result)}.`)
  return lines.join('\n') + '\n'
}

const CAPS: Record<Cap, string> = {
  '--max-body': 'pages read only up to --max-body',
  '--max-sitemap-body': 'sitemaps read only up to --max-sitemap-body',
  '--sitemap-max': 'sitemaps with more addresses than --sitemap-max'
}

/** What the run left out: the addresses skipped for their origin, and each cap hit. */
function notesOf (result: RunResult): string[] {
  const lines: string[] = []
  if (result.skipped.count > 0) {
    lines.push('', `Skipped, on neither site (never fetched; --allow-origin to include an origin): ${result.skipped.count}`, `    ${result.skipped.examples.map(printable).join(', ')}`)
  }
  for (const [flag, noted] of Object.entries(result.capped) as Array<[Cap, Noted]>) {
    lines.push('', `Cut short, ${CAPS[flag]}: ${noted.count}`, `    ${noted.examples.map(printable).join(', ')}`)
  }
  return lines
}

export function jsonReport (result: RunResult): string {
  return JSON.stringify({ ...result, exitCode: exitCodeOf(result) }, null, 2) + '\n'
}

// XML 1.0 has no place for most control characters, even escaped.
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const xml = (text: string) => text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd')
  .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** One testcase per address, a failure per address that differs: the format CI servers read. */
export function junitReport (result: RunResult): string {
  const failures = result.results.filter((r) => r.differences.length > 0).length
  const name = xml(`parity ${result.legacy} vs ${result.candidate}`)
  const cases = result.results.map((r) => {
    const head = `    <testcase classname="parity.${r.as === 'member' ? 'member.' : ''}${r.source}" name="${xml(printable(r.target))}"`
    if (r.differences.length === 0) return `${head}/>`
    const text = r.differences.map((d) => `${d.kind}: legacy ${printable(d.legacy)} | candidate ${printable(d.candidate)}${d.also === undefined ? '' : ` (so also ${d.also.map((m) => m.kind).join(', ')})`}`).join('\n')
    return `${head}>\n      <failure type="${xml(r.differences.map((d) => d.kind).join(' '))}" message="${xml(text.split('\n')[0])}">${xml(text)}</failure>\n    </testcase>`
  })
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="parity" tests="${result.results.length}" failures="${failures}" time="${result.durationMs / 1000}">
  <testsuite name="${name}" tests="${result.results.length}" failures="${failures}" timestamp="${result.startedAt}">
${cases.join('\n')}
  </testsuite>
</testsuites>
`
}

// Created, never opened if there: no one can have it write through a link or into a file of theirs.
const EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

/**
 * Writes every report to a temporary file beside it, then renames them into place: a reader (or a CI
 * step after a crash) sees a whole report or none. The temporary name is unpredictable and the file
 * is created exclusively, so that in a shared folder another user cannot plant a link at it.
 */
export async function writeReports (files: Array<[string, string]>, random = () => randomBytes(12).toString('hex')): Promise<void> {
  const temps: string[] = []
  try {
    for (const [file, text] of files) {
      const temp = join(dirname(file), `.${basename(file)}.${random()}.tmp`)
      // Never writable by others, even under a umask of 0 (a container's, a CI runner's); the umask still narrows it.
      const handle = await open(temp, EXCLUSIVE, 0o664)
      temps.push(temp)
      try {
        await handle.writeFile(text)
      } finally {
        await handle.close()
      }
    }
    for (const [i, [file]] of files.entries()) await rename(temps[i], file)
  } catch (err) {
    await Promise.all(temps.map((t) => rm(t, { force: true })))
    throw new ParityInputError(`cannot write the report: ${(err as Error).message}`)
  }
}
