import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, normalize, resolve } from 'node:path'

// What `npm pack` ships, from npm's own file list (built first by `npm test`): every source map carries
// its sources, every relative link in the README and the shipped docs points to a shipped file, and
// the peer ranges are bounded.

const root = resolve(__dirname, '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const packed: Set<string> = new Set((JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))[0].files as Array<{ path: string }>).map((f) => f.path))

t.test('every shipped source map carries its sources, so no map points at a file that is not there', async (t) => {
  const maps = [...packed].filter((f) => f.endsWith('.map'))
  t.ok(maps.length > 0, `${maps.length} maps shipped`)
  for (const file of maps) {
    const map = JSON.parse(readFileSync(join(root, file), 'utf8')) as { sources: string[], sourcesContent?: Array<string | null> }
    const missing = map.sources.filter((source, i) => typeof map.sourcesContent?.[i] !== 'string' && !packed.has(normalize(join(dirname(file), source))))
    t.same(missing, [], file)
  }
})

t.test('every relative link in the README and the shipped docs is shipped (the screenshots included)', async (t) => {
  const documents = ['README.md', ...[...packed].filter((f) => f.startsWith('docs/') && f.endsWith('.md'))]
  let links = 0
  for (const doc of documents) {
    // Code (fenced blocks and inline spans) is not prose: `a[i](x)` there is no link.
    const text = readFileSync(join(root, doc), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue
      links++
      const path = normalize(join(dirname(doc), target))
      const ok = path.endsWith('/') ? [...packed].some((f) => f.startsWith(path)) : packed.has(path)
      t.ok(ok, `${doc} -> ${target}`)
    }
  }
  t.ok([...packed].filter((f) => f.startsWith('docs/screenshots/') && f.endsWith('.png')).length >= 8, 'the screenshots are shipped')
  t.ok(links > 30, `${links} links checked`)
})

t.test('peer dependencies have upper bounds', async (t) => {
  for (const [name, range] of Object.entries(pkg.peerDependencies as Record<string, string>)) {
    if (name === 'redis') continue // optional, for the /redis subpath; v5 and every later major it is tested with
    t.notMatch(range, /^>=[^<]*$/, `${name}: ${range}`)
  }
  t.equal(pkg.peerDependencies['@fastify/cookie'], '^10.0.0 || ^11.0.0')
})
