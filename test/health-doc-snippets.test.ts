import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import Fastify from 'fastify'
import { compileSnippets, snippet } from './helpers/doc-snippets.js'

// docs/health.md's code blocks as a host copies them: the recipe and its wiring compiled with the
// project's TypeScript (strict, nodenext) as the host's own files, the compiled recipe run, and the
// HAProxy configuration checked by haproxy itself. The wiring is run against Redis in
// test/redis/health.test.ts.

const root = resolve(__dirname, '..')
const doc = readFileSync(join(root, 'docs', 'health.md'), 'utf8')

t.test('the recipe and its wiring compile as a host app\'s files, and the compiled recipe answers', async (t) => {
  const dir = compileSnippets(t, { 'health.ts': snippet(doc, 'health-recipe'), 'server.mts': snippet(doc, 'health-wiring') })
  const { healthRoutes } = await import(join(dir, 'health.js')) as typeof import('../examples/health.js')
  const app = Fastify()
  healthRoutes(app, { draining: () => false })
  t.teardown(() => app.close())
  t.equal((await app.inject('/readyz')).body, 'ready\n')
  t.same((await app.inject('/storez')).json(), { ok: true, store: 'memory' })
})

const haproxy = spawnSync('haproxy', ['-v']).status === 0
t.test('the HAProxy configuration is valid as written', { skip: haproxy ? false : 'haproxy is not installed' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'schools-resources-haproxy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'haproxy.cfg'), snippet(doc, 'health-haproxy') + '\n')
  t.doesNotThrow(() => execFileSync('haproxy', ['-c', '-q', '-f', join(dir, 'haproxy.cfg')], { stdio: 'pipe' }))
})
