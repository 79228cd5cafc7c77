import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startStandIn } from './legacy-stand-in.js'
import { runCli, SPEC_ADDRESSES, startExample, tempDir } from './run-cli.js'

// The checker against a stand-in of the legacy site and the real example app.

interface JsonReport {
  exitCode: number
  requests: number
  results: Array<{ target: string, source: string, differences: Array<{ kind: string, legacy: string, candidate: string }>, allowed: Array<{ kind: string, rule: string }>, followed?: string }>
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as JsonReport
const FAST = ['--rate', '1000', '--concurrency', '8']

t.test('the stand-in and the example app answer the spec\'s addresses and their variants alike', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const candidate = await startExample(t)
  const { dir, file } = tempDir(t)
  const addresses = file('addresses.txt', `# from the access log\n\n${SPEC_ADDRESSES.join('\n')}\n${legacy.origin}/schools/resources/resources/maths/?from=newsletter\n`)
  const json = join(dir, 'report.json')
  const junit = join(dir, 'report.xml')
  const run = await runCli(['parity', '--legacy', legacy.origin, '--candidate', candidate, '--addresses', addresses, '--variants', '--json', json, '--junit', junit, ...FAST])
  t.equal(run.code, 0, run.stdout + run.stderr)
  t.match(run.stdout, /No differences beyond the allow-list\./)
  t.match(run.stdout, /Allowed \(deliberate\): session cookie \d+/)
  t.match(run.stdout, /Exit code 0\./)
  const report = readJson(json)
  t.equal(report.exitCode, 0)
  t.same(report.results.filter((r) => r.differences.length > 0), [])
  t.equal(report.results.filter((r) => r.source === 'file').length, SPEC_ADDRESSES.length + 1)
  t.equal(report.results.filter((r) => r.source === 'variant').length, 6 * 5, 'five variants per category')
  t.ok(report.results.filter((r) => r.allowed.length > 0).every((r) => r.allowed.every((a) => a.kind === 'session-cookie' && a.rule === 'default allow-list:3')), 'only the documented session cookie')
  t.same(readdirSync(dir).sort(), ['addresses.txt', 'report.json', 'report.xml'], 'no temporary file left')
  // A real XML parser (Python's) reads the JUnit report.
  const counts = execFileSync('python3', ['-c', 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); print(len(d.getElementsByTagName("testcase")), len(d.getElementsByTagName("failure")))', junit], { encoding: 'utf8' })
  t.equal(counts.trim(), `${report.results.length} 0`)
  t.ok(legacy.log.every((l) => l.method === 'GET' && /^fastify-schools-resources-parity\//.test(String(l.headers['user-agent']))), 'GETs with the checker\'s User-Agent')
})

t.test('each planted difference is reported with its kind, and nothing else is', async (t) => {
  const legacy = await startStandIn({ plant: { status: 'maths', encoding: 'english', relativeLocation: 'science', indexCacheable: true, dropQuery: 'humanities' } })
  t.teardown(legacy.close)
  const candidate = await startExample(t)
  const { dir, file } = tempDir(t)
  const addresses = file('addresses.txt', [...SPEC_ADDRESSES, '/schools/resources/resources/humanities/?term=2'].join('\n'))
  const json = join(dir, 'report.json')
  const junit = join(dir, 'report.xml')
  const run = await runCli(['parity', '--legacy', legacy.origin, '--candidate', candidate, '--addresses', addresses, '--json', json, '--junit', junit, ...FAST])
  t.equal(run.code, 1)
  const differing = Object.fromEntries(readJson(json).results.filter((r) => r.differences.length > 0).map((r) => [r.target, r.differences]))
  t.same(differing, {
    '/schools/resources/resources/maths/': [{ kind: 'status', legacy: '301', candidate: '302' }],
    '/schools/resources/resources/english/': [{
      kind: 'back-url-encoding',
      legacy: '%2fschools%2fresources%2fresources%2fenglish%2f',
      candidate: '%2Fschools%2Fresources%2Fresources%2Fenglish%2F'
    }],
    '/schools/resources/resources/science/': [{ kind: 'location-form', legacy: 'relative', candidate: 'absolute' }],
    '/schools/resources/': [{ kind: 'cacheability', legacy: 'shared', candidate: 'none' }],
    '/schools/resources/resources/humanities/?term=2': [{
      kind: 'back-url',
      legacy: '%2Fschools%2Fresources%2Fresources%2Fhumanities%2F (/schools/resources/resources/humanities/)',
      candidate: '%2Fschools%2Fresources%2Fresources%2Fhumanities%2F%3Fterm%3D2 (/schools/resources/resources/humanities/?term=2)'
    }]
  })
  t.match(run.stdout, /5 of 9 comparisons differ/)
  for (const title of ['return address (decoded)', 'status code', 'return address encoding', 'Location absolute or relative', 'cacheability']) t.match(run.stdout, title)
  t.match(run.stdout, /Exit code 1\./)
  const failures = execFileSync('python3', ['-c', 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); print(" ".join(sorted(f.getAttribute("type") for f in d.getElementsByTagName("failure"))))', junit], { encoding: 'utf8' })
  t.equal(failures.trim(), 'back-url back-url-encoding cacheability location-form status')
})
