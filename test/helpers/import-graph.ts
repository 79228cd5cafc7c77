import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

/** Every module of lib/ (path relative to lib/, without extension) and the modules of lib/ it imports. */
export type ImportGraph = Map<string, Set<string>>

function sources (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return /\.[cm]?[jt]s$/.test(entry.name) && !/\.d\.[cm]?ts$/.test(entry.name) ? [path] : []
  })
}

const moduleName = (lib: string, file: string) => relative(lib, file).replace(/\.[cm]?[jt]s$/, '')

/** The module of lib/ a relative specifier names: `./x.js` is x.ts, a folder is its index. */
function resolveRelative (lib: string, from: string, specifier: string): string {
  const path = resolve(dirname(from), specifier)
  if (existsSync(path) && statSync(path).isDirectory()) return moduleName(lib, join(path, 'index.ts'))
  return moduleName(lib, path)
}

/** Imports of the package by its own name or by an `#imports` alias: they reach the entry. */
export const SELF = '(the package itself)'
const SELF_SPECIFIER = /^(?:fastify-schools-resources(?:\/|$)|#)/

/**
 * Reads the imports as TypeScript sees them (`import`, `import type`, `export … from`, dynamic
 * `import()`), so that a type-only import counts as much as any other.
 */
export function importGraph (lib: string): ImportGraph {
  const graph: ImportGraph = new Map()
  for (const file of sources(lib)) {
    const imports = new Set<string>()
    const source = readFileSync(file, 'utf8')
    const specifiers = ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName)
    // createRequire(...)('x') and the like, which the scanner does not see as imports.
    for (const m of source.matchAll(/\bcreateRequire\s*\([^)]*\)\s*\(\s*['"]([^'"]+)['"]/g)) specifiers.push(m[1])
    for (const specifier of specifiers) {
      if (SELF_SPECIFIER.test(specifier)) imports.add(SELF)
      else if (specifier.startsWith('.')) imports.add(resolveRelative(lib, file, specifier))
    }
    graph.set(moduleName(lib, file), imports)
  }
  return graph
}

/** The import cycles, each as the list of modules on it (empty when there is none). */
export function cycles (graph: ImportGraph): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (node: string): void => {
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node)
  return found
}

/** Top-level folder of a module (`pages/views` → `pages`), or the module itself at the top. */
export function layerOf (module: string): string {
  return module.split('/')[0]
}
