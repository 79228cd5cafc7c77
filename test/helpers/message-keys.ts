// The table of message keys in docs/languages.md, made from lib/i18n/locales/en.ts: its keys, their
// English messages, under en.ts's section headings. test/i18n/languages-doc.test.ts compares the doc
// with it, and rewrites the doc's table when run with KEY_TABLE=write.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import en from '../../lib/i18n/locales/en.js'

export const LANGUAGES_DOC = resolve(__dirname, '../../docs/languages.md')
export const TABLE_START = '<!-- message keys: start -->'
export const TABLE_END = '<!-- message keys: end -->'

/** Each key's section in en.ts: the `// --- ... ---` heading above it. */
function sections (): Map<string, string> {
  const source = readFileSync(resolve(__dirname, '../../lib/i18n/locales/en.ts'), 'utf8')
  const of = new Map<string, string>()
  let section = 'Messages'
  for (const line of source.split('\n')) {
    const heading = /^\s*\/\/ --- (.+?) ---\s*$/.exec(line)
    // The heading without its source files in brackets: the doc is shipped, the sources are not.
    if (heading !== null) section = heading[1].replace(/\s*\([^)]*\)$/, '')
    const key = /^\s*'([^']+)':/.exec(line)
    if (key !== null) of.set(key[1], section)
  }
  return of
}

/** A message in a table cell: code, with the pipes GitHub's tables would split on escaped. */
function cell (message: string): string {
  return `\`${message.replace(/\|/g, '\\|')}\``
}

/** The generated part of docs/languages.md, between its markers. */
export function keyTable (): string {
  const of = sections()
  const bySection = new Map<string, string[]>()
  for (const key of Object.keys(en)) {
    const section = of.get(key) ?? 'Messages'
    bySection.set(section, [...(bySection.get(section) ?? []), key])
  }
  const lines = [TABLE_START, '<!-- Made from the English catalogue by the test suite; not edited by hand. -->']
  for (const [section, keys] of bySection) {
    lines.push('', `#### ${section}`, '', '| Key | English |', '| --- | --- |')
    for (const key of keys) lines.push(`| \`${key}\` | ${cell(en[key as keyof typeof en])} |`)
  }
  lines.push('', TABLE_END)
  return lines.join('\n')
}

/** docs/languages.md with its table replaced by `table`. */
export function withKeyTable (doc: string, table: string): string {
  const start = doc.indexOf(TABLE_START)
  const end = doc.indexOf(TABLE_END)
  if (start === -1 || end < start) throw new Error(`docs/languages.md has no ${TABLE_START} ... ${TABLE_END}`)
  return doc.slice(0, start) + table + doc.slice(end + TABLE_END.length)
}
