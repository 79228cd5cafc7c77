import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Test } from 'tap'

const root = resolve(__dirname, '..', '..')

/** The ```ts block right after `<!-- name -->` in a Markdown text. */
export function snippet (markdown: string, name: string): string {
  const match = new RegExp(`<!-- ${name} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(markdown)
  if (match === null) throw new Error(`no code block after <!-- ${name} -->`)
  return match[1]
}

/**
 * Writes `files` (name to source) into a directory inside the package, so that
 * `fastify-schools-resources` resolves to this build by its own name, and compiles them with the
 * project's TypeScript as a host would (strict, nodenext); resolves to the directory, removed in teardown.
 */
export function compileSnippets (t: Test, files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, 'test', '.snippet-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source)
  execFileSync(process.execPath, [
    join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
    '--ignoreConfig', '--types', 'node', '--skipLibCheck', '--rootDir', dir, '--outDir', dir,
    ...Object.keys(files).map((name) => join(dir, name))
  ], { cwd: root, stdio: 'pipe' })
  return dir
}
