import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, resolve } from 'node:path'

// What `npm pack` ships, from npm's own file list (built first by `npm run test:all`): the compiled library (JS
// without comments; the types keep them for editors) with its types, the parity command compiled, the README, LICENSE and the user's docs; nothing that only runs or reads in a
// clone (examples, benchmarks and their results, screenshots, design notes, contributors' docs).
// Choices and figures: docs/package.md.

const root = resolve(__dirname, '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const pack = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))[0] as
  { size: number, unpackedSize: number, entryCount: number, files: Array<{ path: string }> }
const packed: Set<string> = new Set(pack.files.map((f) => f.path))

// The budget of issue #22: a site pays for what runs, not for the repository's extras. Raised from
// 250,000 for "Keep me signed in" (issue #38, about 10 KB packed) and "Forgotten your password?" (issue
// #39, about 15 KB packed): their modules, types and docs, code every site with them on runs. Raised
// again for the pages' languages (issue #40, about 31 KB packed): the five catalogues (about 3.3 KB each
// compressed), the i18n modules and docs/languages.md with its table of every key (6 KB).
const MAX_PACKED_BYTES = 315_000

t.test('the tarball holds the library, its types, and the user docs: nothing else', async (t) => {
  // No source maps: they would point at lib/*.ts, which is not shipped (docs/package.md).
  const allowed = /^(?:dist\/lib\/.+\.(?:js|mjs|d\.ts|d\.mts)|dist\/parity\/[\w-]+\.js|docs\/[\w-]+\.md|README\.md|LICENSE|package\.json)$/
  t.same([...packed].filter((f) => !allowed.test(f)), [], 'no file of another kind')
  for (const repoOnly of ['docs/architecture.md', 'docs/example-server.md', 'docs/performance.md', 'docs/testing.md', 'docs/upstream-hmac-key.md', 'docs/upstream-next-tick.md', 'docs/upstream-session-lazy.md', 'docs/upstream-node-redis-sentinel.md']) {
    t.ok(existsSync(join(root, repoOnly)) && !packed.has(repoOnly), `${repoOnly} stays in the repository`)
  }
  // Every module of the plugin is shipped compiled and typed. The parity command (parity/src) is a
  // command, not an import: its modules ship compiled only, under dist/parity/.
  const compiled = [...packed].filter((f) => /^dist\/lib\/.+\.js$/.test(f))
  t.ok(compiled.length > 40, `${compiled.length} modules`)
  for (const js of compiled) {
    const typed = packed.has(js.replace(/\.js$/, '.d.ts'))
    t.ok(typed, `${js}: types`)
    t.ok(existsSync(join(root, js.replace(/^dist\//, '').replace(/\.js$/, '.ts'))), `${js} is built from lib/`)
  }
  const command = [...packed].filter((f) => f.startsWith('dist/parity/'))
  t.ok(command.includes('dist/parity/bin.js') && command.every((f) => f.endsWith('.js')), 'the parity command, compiled only')
  for (const js of command) t.ok(existsSync(join(root, 'parity/src', js.slice('dist/parity/'.length).replace(/\.js$/, '.ts'))), `${js} is built from parity/src/`)
  t.ok(pack.size <= MAX_PACKED_BYTES, `packed: ${pack.size} bytes (at most ${MAX_PACKED_BYTES})`)
  t.comment(`npm pack: ${pack.entryCount} files, ${pack.size} bytes packed, ${pack.unpackedSize} unpacked`)
})

t.test('every relative link in the README and the shipped docs is shipped', async (t) => {
  const documents = ['README.md', ...[...packed].filter((f) => f.startsWith('docs/') && f.endsWith('.md'))]
  let links = 0
  for (const doc of documents) {
    // Code (fenced blocks and inline spans) is not prose: `a[i](x)` there is no link. Files only in
    // the repository are not named at all (the next test): the package has no repository URL.
    const text = readFileSync(join(root, doc), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue
      links++
      const path = normalize(join(dirname(doc), target))
      const ok = path.endsWith('/') ? [...packed].some((f) => f.startsWith(path)) : packed.has(path)
      t.ok(ok, `${doc} -> ${target}`)
    }
  }
  t.ok(links > 30, `${links} links checked`)
})

t.test('the README and the shipped docs name no file of the repository', async (t) => {
  // Issue 37: a package user cannot open examples/, test/, lib/, bench/ or parity/ (nor a doc left in the
  // repository), so the docs inline what they need from them or say it in words. Code counts too: a
  // snippet's import of `../examples/x` names a file as much as prose does. Not a repository path: the
  // shipped dist/ (`dist/parity/bin.js`), a word that ends in one of the names (`…-parity/1`), a URL.
  const documents = ['README.md', ...[...packed].filter((f) => f.startsWith('docs/') && f.endsWith('.md'))]
  const named: string[] = []
  for (const doc of documents) {
    readFileSync(join(root, doc), 'utf8').split('\n').forEach((line, i) => {
      const text = line.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, '')
      for (const [path] of text.matchAll(/(?<![\w-])(?<!dist\/)(?:examples|test|lib|bench|parity)\/[\w./-]+/g)) named.push(`${doc}:${i + 1}: ${path}`)
      // A doc of the package is fine (`docs/options.md`, the end of a sentence's full stop left out).
      for (const [path] of text.matchAll(/(?<![\w-])docs\/[\w./-]+/g)) if (!packed.has(path.replace(/\.+$/, ''))) named.push(`${doc}:${i + 1}: ${path}`)
    })
  }
  t.same(named, [], named.length === 0 ? 'none named' : `repository files named: ${named.join(', ')}`)
  t.ok(documents.length > 15, `${documents.length} documents read`)
})

t.test('peer dependencies have upper bounds; file serving\'s and redis are optional', async (t) => {
  for (const [name, range] of Object.entries(pkg.peerDependencies as Record<string, string>)) {
    t.notMatch(range, /^>=[^<]*$/, `${name}: ${range}`)
    t.notMatch(range, /^\*$|^x$|^$/, `${name}: ${range}`)
  }
  t.equal(pkg.peerDependencies['@fastify/cookie'], '^10.0.0 || ^11.0.0')
  t.equal(pkg.peerDependencies.redis, '^5.0.0 || ^6.0.0')
  for (const optional of ['@fastify/static', 'content-disposition', 'redis']) {
    t.equal(pkg.peerDependenciesMeta[optional]?.optional, true, `${optional} is an optional peer`)
    t.equal(pkg.dependencies[optional], undefined, `${optional} is no dependency`)
  }
})
