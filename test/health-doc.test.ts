import t from 'tap'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import Fastify from 'fastify'
import { healthRoutes } from '../examples/health.js'
import { snippet } from './helpers/doc-snippets.js'
import { capturedLog } from './helpers/log-capture.js'

// docs/health.md ships the health routes as a recipe. Its recipe block is examples/health.ts word for
// word, so everything that tests the example's /readyz and /storez (here, test/example-operations.test.ts,
// test/redis/health.test.ts) tests the recipe; health-doc-snippets.test.ts compiles the doc's blocks as a
// host's own files and runs them.

const root = resolve(__dirname, '..')
const doc = readFileSync(join(root, 'docs', 'health.md'), 'utf8')

t.test('the recipe in docs/health.md is examples/health.ts, and the doc ships', async (t) => {
  t.equal(snippet(doc, 'health-recipe') + '\n', readFileSync(join(root, 'examples', 'health.ts'), 'utf8'), 'copy examples/health.ts into docs/health.md after a change')
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] }
  t.ok(pkg.files.includes('docs/*.md') && !pkg.files.includes('!docs/health.md'), 'docs/health.md is in the package')
  const haproxy = snippet(doc, 'health-haproxy')
  t.match(haproxy, /option httpchk GET \/readyz/, 'the balancer checks /readyz')
  t.notMatch(haproxy, /httpchk[^\n]*storez/, 'never /storez')
  t.match(haproxy, /http-request deny if \{ path \/storez \/metrics \}/, '/storez is kept from the public')
})

t.test('the recipe without a store: /healthz, /readyz until draining, /storez "memory"; changes at warn', async (t) => {
  const { lines, logger } = capturedLog('info')
  let draining = false
  const app = Fastify({ logger })
  healthRoutes(app, { draining: () => draining })
  t.teardown(() => app.close())
  const answer = async (url: string) => {
    const res = await app.inject(url)
    return [res.statusCode, res.body, res.headers['cache-control']]
  }
  t.same(await answer('/healthz'), [200, 'ok\n', 'no-store'])
  t.same(await answer('/readyz'), [200, 'ready\n', 'no-store'])
  t.same(await answer('/storez'), [200, '{"ok":true,"store":"memory"}', 'no-store'], 'sessions in memory: nothing to fail')
  draining = true
  const [status, body] = await answer('/readyz')
  t.same([status, body], [503, 'not ready: shutting down\n'])
  t.equal((await app.inject('/readyz')).headers['retry-after'], '5')
  t.same(await answer('/healthz'), [200, 'ok\n', 'no-store'], 'the process still answers')
  draining = false
  t.same(await answer('/readyz'), [200, 'ready\n', 'no-store'])
  t.same(lines.filter((l) => /\/readyz/.test(l.msg)).map((l) => [l.level, l.msg, l.reason]), [
    [40, 'not ready: /readyz answers 503', 'shutting down'],
    [40, 'ready again: /readyz answers 200', undefined]
  ], 'each change once, both at warn')
  t.equal(lines.filter((l) => l.msg === 'incoming request').length, 0, 'the probes write no request log lines')
})
