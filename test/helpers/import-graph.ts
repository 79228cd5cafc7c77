import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

/** Every module of lib/ (path relative to lib/, without extension) and the modules of lib/ it imports. */
export type ImportGraph = Map<string, Set<string>>

function sources (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return /\.m?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

const moduleName = (lib: string, file: string) => relative(lib, file).replace(/\.m?ts$/, '')

/**
 * Reads the imports as TypeScript sees them (`import`, `import type`, `export … from`, dynamic
 * `import()`), so that a type-only import counts as much as any other.
 */
export function importGraph (lib: string): ImportGraph {
  const graph: ImportGraph = new Map()
  for (const file of sources(lib)) {
    const imports = new Set<string>()
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue
      imports.add(moduleName(lib, resolve(dirname(file), fileName.replace(/\.m?js$/, '.ts'))))
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
