import { readFile } from 'node:fs/promises'
import type { Difference, DifferenceKind } from './compare.js'
import { ParityInputError } from './errors.js'

/** One allowed difference: its kind, and optionally the address (a `*` glob) and the two sites' values. */
export interface AllowRule {
  kind: DifferenceKind
  path?: RegExp
  legacy?: string
  candidate?: string
  /** Only as an anonymous visitor, or only signed in. */
  as?: 'visitor' | 'member'
  /** `file:line`, for the report. */
  from: string
}

export const KINDS: DifferenceKind[] = ['status', 'location', 'location-form', 'back-url', 'back-url-encoding', 'cacheability', 'session-cookie', 'request-failed']

/**
 * The deliberate differences of docs/legacy-differences.md that an anonymous visitor can see. The others
 * (no warning for the same target, the refused redirect never reaching the wire, checked return
 * addresses, audiences) show no difference in these answers.
 */
export const DEFAULT_ALLOW_LIST = `# Shipped with fastify-schools-resources: the documented deliberate differences (docs/legacy-differences.md).
# "No session for anonymous redirects": the legacy site started a session for every visitor.
session-cookie as=visitor legacy=set candidate=none
# "Forgotten password: the link moves into a cookie, not the session": its first visit answers 303 (the
# legacy site 302, with the token in its session), and the page without a usable link 400 (the legacy 200).
status path=*/changepassword?* as=visitor legacy=302 candidate=303
status path=*/changepassword as=visitor legacy=200 candidate=400
`

const glob = (pattern: string) => new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)

/** Rules, one a line: `<kind> [path=<glob>] [as=visitor|member] [legacy=<value>] [candidate=<value>]`; `#` starts a comment. */
export function parseAllowList (text: string, name: string): AllowRule[] {
  const rules: AllowRule[] = []
  const bad: string[] = []
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/(?:^|\s)#.*$/, '').trim()
    if (line === '') return
    const [kind, ...fields] = line.split(/\s+/)
    const rule: AllowRule = { kind: kind as DifferenceKind, from: `${name}:${i + 1}` }
    let ok = KINDS.includes(rule.kind)
    for (const field of fields) {
      const [, key, value] = /^(path|legacy|candidate|as)=(.+)$/.exec(field) ?? []
      if (key === 'path') rule.path = glob(value)
      else if (key === 'as' && (value === 'visitor' || value === 'member')) rule.as = value
      else if (key === 'legacy' || key === 'candidate') rule[key] = value
      else ok = false
    }
    if (!ok) bad.push(`${name}:${i + 1}: ${JSON.stringify(raw.trim())} (expected <kind> [path=<glob>] [as=visitor|member] [legacy=<value>] [candidate=<value>], kinds: ${KINDS.join(', ')})`)
    else rules.push(rule)
  })
  if (bad.length > 0) throw new ParityInputError(`allow-list ${name} has bad lines:\n${bad.join('\n')}`)
  return rules
}

export async function readAllowList (file: string): Promise<AllowRule[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new ParityInputError(`allow-list ${file}: cannot read it (${(err as NodeJS.ErrnoException).code})`)
  }
  return parseAllowList(text, file)
}

/** The rule that allows this difference at this address, seen as a visitor or a member, if any. */
export function allowedBy (rules: AllowRule[], target: string, as: 'visitor' | 'member', d: Difference): AllowRule | undefined {
  return rules.find((r) => r.kind === d.kind && (r.path?.test(target) ?? true) && (r.as ?? as) === as && (r.legacy ?? d.legacy) === d.legacy && (r.candidate ?? d.candidate) === d.candidate)
}
