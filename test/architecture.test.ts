import t from 'tap'
import { resolve } from 'node:path'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cycles, importGraph, layerOf, SELF } from './helpers/import-graph.js'

// The rule docs/architecture.md draws: the leaf hubs import nothing but each other; each feature
// folder imports only its own modules, the leaves, and the folders below it; nothing imports the entry
// or the option checking. section and sign-in stand side by side and do not know each other.
const LEAVES = new Set(['errors', 'events', 'interval-log', 'option-checks', 'symbols', 'types', 'warnings'])
const FEATURE_RANK: Record<string, number> = { stores: 1, i18n: 1, redirect: 2, session: 3, pages: 4, access: 5, section: 6, 'sign-in': 6, files: 7, 'password-reset': 7 }
const ENTRY = new Set(['index', 'esm', 'options'])

const graph = importGraph(resolve(__dirname, '..', 'lib'))

function allowed (from: string, to: string): boolean {
  if (to === SELF) return false
  const a = layerOf(from)
  const b = layerOf(to)
  if (LEAVES.has(b)) return true
  if (LEAVES.has(a)) return false
  if (ENTRY.has(b)) return a === 'esm' ? b === 'index' : a === 'index' && b === 'options'
  if (ENTRY.has(a)) return true
  if (a === b) return true
  return FEATURE_RANK[b] < FEATURE_RANK[a]
}

t.test('every module of lib/ belongs to a known folder', async (t) => {
  const unknown = [...graph.keys()].filter((m) => {
    const layer = layerOf(m)
    return !LEAVES.has(layer) && !ENTRY.has(layer) && FEATURE_RANK[layer] === undefined
  })
  t.same(unknown, [], 'add a new folder to FEATURE_RANK and to docs/architecture.md')
})

t.test('imports point one way', async (t) => {
  const wrong: string[] = []
  for (const [from, imports] of graph) {
    for (const to of imports) if (!allowed(from, to)) wrong.push(`${from} → ${to}`)
  }
  t.same(wrong, [])
  // The folder-to-folder edges, printed for the reader (and the closing note of a change).
  const edges = new Set<string>()
  for (const [from, imports] of graph) for (const to of imports) if (layerOf(from) !== layerOf(to)) edges.add(`${layerOf(from)} → ${layerOf(to)}`)
  t.comment(`${graph.size} modules; folder edges: ${[...edges].sort().join(', ')}`)
})

t.test('there is no import cycle, type-only imports included', async (t) => {
  t.same(cycles(graph).map((c) => c.join(' → ')), [])
})

t.test('the checker finds what it is for', async (t) => {
  const sample = new Map([['pages/a', new Set(['pages/b'])], ['pages/b', new Set(['pages/a'])], ['stores/c', new Set(['pages/a'])]])
  t.same(cycles(sample), [['pages/a', 'pages/b', 'pages/a']])
  t.notOk(allowed('stores/c', 'pages/a'), 'stores never import pages')
  t.notOk(allowed('section/x', 'sign-in/y'), 'section and sign-in do not know each other')
  t.notOk(allowed('pages/x', 'options'), 'features never import the options module')
  t.notOk(allowed('redirect/x', 'index'), 'nor the entry')
  t.notOk(allowed('errors', 'pages/views'), 'leaves import nothing upward')
  t.ok(allowed('sign-in/x', 'pages/y'))
  t.notOk(allowed('pages/x', SELF), 'nothing imports the package by its own name')
  t.ok(allowed('stores/redis/client', 'option-checks'), 'every floor refuses an option through the leaf')
  t.ok(allowed('stores/redis/client', 'errors'), 'the Redis stores ask errors.ts whether an error is an outage')
  t.notOk(allowed('session/x', 'access/y'), 'the members-only answer is access/\'s: the floors below do not reach it')
})

t.test('the scanner sees every kind of import', async (t) => {
  const lib = mkdtempSync(join(tmpdir(), 'import-graph-'))
  t.teardown(() => rmSync(lib, { recursive: true, force: true }))
  const files: Record<string, string> = {
    'stores/redis/index.ts': "export * from './client.js'",
    'stores/redis/client.ts': "import type { X } from '../../pages/views.js'\nexport type { X }",
    'pages/views.ts': "import '../stores/redis'\nexport type X = 1",
    'pages/a.mts': "const m = await import('./b.mjs')",
    'pages/b.cts': "import x = require('../section/c.cjs')",
    'section/c.cjs': "require('fastify-schools-resources')",
    'section/d.js': "createRequire(__filename)('#lib')"
  }
  for (const [name, source] of Object.entries(files)) {
    mkdirSync(join(lib, name, '..'), { recursive: true })
    writeFileSync(join(lib, name), source)
  }
  const graph = importGraph(lib)
  t.same([...graph.keys()].sort(), ['pages/a', 'pages/b', 'pages/views', 'section/c', 'section/d', 'stores/redis/client', 'stores/redis/index'])
  t.same([...graph.get('pages/views')!], ['stores/redis/index'], 'a folder import is its index')
  t.same([...graph.get('pages/a')!], ['pages/b'], 'dynamic import, .mjs to .mts')
  t.same([...graph.get('pages/b')!], ['section/c'], 'import = require, .cjs')
  t.same([...graph.get('section/c')!], [SELF], 'the package by its own name')
  t.same([...graph.get('section/d')!], [SELF], 'createRequire(...)(...) with an #imports alias')
  t.same(cycles(graph).map((c) => c.join(' → ')), ['pages/views → stores/redis/index → stores/redis/client → pages/views'], 'a type-only cycle through a folder import')
})
