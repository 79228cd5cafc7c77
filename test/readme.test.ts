import t from 'tap'
import { readFileSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
import ts from 'typescript'
import * as main from '../lib/index.js'
import * as redis from '../lib/stores/redis/index.js'

// The README and docs/options.md against the code: every export of both entries named in the README's
// Exports section, every option (and every setting inside one) a row of docs/options.md, read from the
// TypeScript declarations, so that a name added to the code without its docs fails here. The usage
// snippet, which needs a compiler and a server process, is compiled and run in readme-snippet.test.ts.

const root = resolve(__dirname, '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const optionsDoc = readFileSync(join(root, 'docs', 'options.md'), 'utf8')

/** The text under `heading` (a whole line) up to the next heading of the same or a higher level. */
export function section (markdown: string, heading: string): string {
  const level = /^#+/.exec(heading)![0].length
  const lines = markdown.split('\n')
  const start = lines.indexOf(heading)
  if (start === -1) throw new Error(`no heading "${heading}"`)
  const end = lines.findIndex((line, i) => i > start && new RegExp(`^#{1,${level}} `).test(line))
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n')
}

/** Every identifier inside an inline code span (`x`, `f(a)`, `{ a, b }`), fenced blocks left out. */
export function namesInCode (markdown: string): Set<string> {
  const prose = markdown.replace(/```[\s\S]*?```/g, '')
  return new Set([...prose.matchAll(/`([^`\n]+)`/g)].flatMap(([, code]) => code.match(/[A-Za-z_$][\w$]*/g) ?? []))
}

/** The first cell of each table row whose first cell is one code span: `| \`name\` | ... |`. */
export function rowNames (markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([^`]+)` \|/gm)].map(([, name]) => name)
}

/** What is in `names` and not in `known`, sorted: [] when every name is known. */
function missing (names: Iterable<string>, known: Iterable<string>): string[] {
  const set = new Set(known)
  return [...new Set(names)].filter((n) => !set.has(n)).sort()
}

// The declarations, as the compiler reads them with the project's settings.
const ENTRIES = ['lib/index.ts', 'lib/esm.mts', 'lib/stores/redis/index.ts', 'lib/stores/redis/esm.mts']
const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')) } })!
const program = ts.createProgram(ENTRIES.map((e) => join(root, e)), { ...config.options, noEmit: true })
const checker = program.getTypeChecker()
const lib = join(root, 'lib') + sep

function exportsOf (entry: string): ts.Symbol[] {
  const file = program.getSourceFile(join(root, entry))!
  return checker.getExportsOfModule(checker.getSymbolAtLocation(file)!)
}

const isValue = (s: ts.Symbol) => ((s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).flags & ts.SymbolFlags.Value) !== 0

/** An exported type of the main entry, by name. */
function exportedType (name: string): ts.Type {
  const symbol = exportsOf('lib/index.ts').find((s) => s.name === name)
  if (symbol === undefined) throw new Error(`lib/index.ts exports no ${name}`)
  return checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(symbol))
}

const constituents = (type: ts.Type): ts.Type[] => type.isUnion() ? type.types : [type]
const declaredInLib = (s: ts.Symbol) => (s.declarations ?? []).length > 0 && s.declarations!.every((d) => d.getSourceFile().fileName.startsWith(lib))

/**
 * The names a table of options must have: each property of the options type, and `option.setting` for
 * each setting of an option that takes an object declared in lib/ (lockout's, the catalog's methods, the
 * views); not a function's parameters, nor another package's options (helmet's).
 */
const STORES = new Set(['AttemptStore', 'TokenStore'])

export function optionNames (type: ts.Type): string[] {
  const options = new Map(constituents(type).flatMap((c) => checker.getPropertiesOfType(c)).map((p) => [p.name, p]))
  const names = [...options.keys()]
  for (const [name, option] of options) {
    for (const c of constituents(checker.getNonNullableType(checker.getTypeOfSymbol(option)))) {
      // A store is an object a host makes (new RedisTokenStore(client)), not settings: its methods are no rows.
      if ((c.flags & ts.TypeFlags.Object) === 0 || c.getCallSignatures().length > 0 || STORES.has(c.getSymbol()?.name ?? '')) continue
      for (const setting of checker.getPropertiesOfType(c)) if (declaredInLib(setting)) names.push(`${name}.${setting.name}`)
    }
  }
  return [...new Set(names)]
}

// Each table of docs/options.md (a `##` section, its `###` parts included) and the type it documents.
const OPTION_TABLES: Record<string, string> = {
  '## The plugin\'s options': 'FastifySchoolsResourcesOptions',
  '## `passwordReset`': 'PasswordResetOptions',
  '## `redirectOnce`': 'RedirectOnceOptions',
  '## `anonymousShortCircuit`': 'AnonymousShortCircuitOptions',
  '## `membersOnly`': 'MembersOnlyOptions'
}

t.test('the README is for users: at most 15 KB', async (t) => {
  t.ok(Buffer.byteLength(readme) <= 15 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes`)
  for (const heading of ['## Install', '## Usage', '## Options', '## API', '## Errors', '## Security', '## Links']) {
    t.ok(readme.includes(`\n${heading}`), heading)
  }
  t.match(section(readme, '## Options'), /\]\(docs\/options\.md\)/, 'the Options section links every option')
})

t.test('the compiler sees the exports require does', async (t) => {
  // Without this the checks below could pass on an empty list.
  for (const [entry, loaded] of [['lib/index.ts', main], ['lib/stores/redis/index.ts', redis]] as const) {
    t.same(exportsOf(entry).filter(isValue).map((s) => s.name).sort(), Object.keys(loaded).sort(), `${entry}: values`)
  }
  t.ok(exportsOf('lib/index.ts').length > 50, `lib/index.ts: ${exportsOf('lib/index.ts').length} names, values and types`)
})

t.test('every export of both entries is named in the README\'s Exports section', async (t) => {
  const listed = namesInCode(section(readme, '### Exports'))
  for (const entry of ENTRIES) {
    const names = exportsOf(entry).map((s) => s.name).filter((n) => n !== 'default')
    t.same(missing(names, listed), [], `${entry}: ${names.length} names`)
  }
})

t.test('docs/options.md has a row for every option and every row is an option', async (t) => {
  for (const [heading, typeName] of Object.entries(OPTION_TABLES)) {
    const expected = optionNames(exportedType(typeName))
    const rows = rowNames(section(optionsDoc, heading))
    t.same(missing(expected, rows), [], `${heading}: no row missing (${typeName}: ${expected.length} names)`)
    t.same(missing(rows, expected), [], `${heading}: no row that is not an option`)
    t.equal(rows.length, new Set(rows).size, `${heading}: one row each`)
  }
  // The plugin's 30 options when this test was written; only more can come (no option is removed).
  t.ok(optionNames(exportedType('FastifySchoolsResourcesOptions')).filter((n) => !n.includes('.')).length >= 30, 'at least the 30 options of issue 35')
})

t.test('the options the type declares are the ones resolveOptions accepts', async (t) => {
  // lib/options.ts's KNOWN_KEYS, read from its source: an option checked at run time but missing from the
  // type (or the other way round) would be documented wrong.
  const source = program.getSourceFile(join(root, 'lib', 'options.ts'))!
  let known: string[] | undefined
  source.forEachChild(function visit (node) {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'KNOWN_KEYS') {
      known = []
      node.forEachChild(function strings (n) { if (ts.isStringLiteral(n)) known!.push(n.text); else n.forEachChild(strings) })
    } else node.forEachChild(visit)
  })
  const declared = optionNames(exportedType('FastifySchoolsResourcesOptions')).filter((n) => !n.includes('.'))
  t.same([...known!].sort(), declared.sort(), 'KNOWN_KEYS of lib/options.ts: the properties of FastifySchoolsResourcesOptions')
})
