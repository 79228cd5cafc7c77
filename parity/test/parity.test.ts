import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MEMBER, startStandIn } from './legacy-stand-in.js'
import { runCli, SPEC_ADDRESSES, startExample, tempDir } from './run-cli.js'

// The checker against a stand-in of the legacy site and the real example app.

type Difference = { kind: string, legacy: string, candidate: string, also?: Difference[] }
interface JsonReport {
  exitCode: number
  requests: number
  results: Array<{ target: string, as?: string, source: string, differences: Difference[], allowed: Array<{ kind: string, rule: string }>, followed?: string }>
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

t.test('nine planted differences: each found once, under its one kind, and nothing else is', async (t) => {
  const legacy = await startStandIn({
    plant: {
      status: 'maths', // 301 for 302
      relativeLocation: 'science', // a relative Location
      dropQuery: 'humanities', // the return address without its query
      encoding: 'english', // the return address's escapes in lower case
      indexCacheable: true, // no Cache-Control on the index: a shared cache may keep it
      pragmaPublic: 'wellbeing', // public, max-age=300 beside Pragma: no-cache
      removed: 'staff-room', // a category gone: 404 for 302
      open: ['/schools/resources/resources/humanities/'], // a members' page made public: 200 for 302
      newSession: ['/schools/resources/resources/maths/'] // signed in, a new session where the candidate keeps its own
    }
  })
  t.teardown(legacy.close)
  const candidate = await startExample(t)
  const { dir, file } = tempDir(t)
  const addresses = file('addresses.txt', [...SPEC_ADDRESSES, '/schools/resources/resources/humanities/?term=2'].join('\n'))
  const json = join(dir, 'report.json')
  const junit = join(dir, 'report.xml')
  const run = await runCli(['parity', '--legacy', legacy.origin, '--candidate', candidate, '--addresses', addresses, '--json', json, '--junit', junit,
    '--legacy-user', MEMBER.email, '--candidate-user', MEMBER.email, ...FAST], false, { PARITY_LEGACY_PASSWORD: MEMBER.password, PARITY_CANDIDATE_PASSWORD: MEMBER.password })
  t.equal(run.code, 1, run.stderr)
  const differing = readJson(json).results.filter((r) => r.differences.length > 0)
    .map((r) => [`${r.target}${r.as === 'member' ? ' (signed in)' : ''}`, r.differences.map((d) => `${d.kind} ${d.legacy} | ${d.candidate}${d.also === undefined ? '' : `, also ${d.also.map((m) => m.kind).join(' ')}`}`)])
  const lowerCase = '%2fschools%2fresources%2fresources%2fenglish%2f'
  t.same(Object.fromEntries(differing), {
    '/schools/resources/resources/maths/': ['status 301 | 302'],
    '/schools/resources/resources/english/': [`back-url-encoding ${lowerCase} | ${lowerCase.replaceAll('%2f', '%2F')}`],
    '/schools/resources/resources/science/': ['location-form relative | absolute'],
    '/schools/resources/resources/humanities/': ['status 200 | 302, also location-form location back-url'],
    '/schools/resources/resources/wellbeing/': ['cacheability shared | none'],
    '/schools/resources/resources/staff-room/': ['status 404 | 302, also location-form location back-url'],
    '/schools/resources/': ['cacheability shared | none'],
    '/schools/resources/resources/humanities/?term=2': ['back-url %2Fschools%2Fresources%2Fresources%2Fhumanities%2F (/schools/resources/resources/humanities/) | ' +
      '%2Fschools%2Fresources%2Fresources%2Fhumanities%2F%3Fterm%3D2 (/schools/resources/resources/humanities/?term=2)'],
    // Signed in, the uncacheable index is seen again, and the ninth: a new session where the candidate keeps its own.
    '/schools/resources/resources/maths/ (signed in)': ['session-cookie set | none'],
    '/schools/resources/ (signed in)': ['cacheability shared | none']
  })
  t.match(run.stdout, /10 of 18 comparisons differ/)
  t.match(run.stdout, /status code\s+3\n[\s\S]*\/schools\/resources\/resources\/humanities\/\n\s+legacy:\s+200\n\s+candidate: 302\n\s+so also:\s+Location absolute or relative, Location \(origin taken out\), return address \(decoded\)/)
  t.match(run.stdout, /Exit code 1\./)
  const failures = execFileSync('python3', ['-c', 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); print(" ".join(sorted(f.getAttribute("type") for f in d.getElementsByTagName("failure"))))', junit], { encoding: 'utf8' })
  t.equal(failures.trim(), 'back-url back-url-encoding cacheability cacheability cacheability location-form session-cookie status status status')
})

t.test('signed in to a rolling session: its renewal is no difference, a new value is', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const candidate = await startStandIn({ rolling: true, plant: { newSession: ['/schools/resources/resources/english/'] } })
  t.teardown(candidate.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'report.json')
  const run = await runCli(['parity', '--legacy', legacy.origin, '--candidate', candidate.origin, '--addresses', file('a.txt', SPEC_ADDRESSES.join('\n')), '--json', json,
    '--legacy-user', MEMBER.email, '--candidate-user', MEMBER.email, ...FAST], false, { PARITY_LEGACY_PASSWORD: MEMBER.password, PARITY_CANDIDATE_PASSWORD: MEMBER.password })
  t.equal(run.code, 1)
  const member = candidate.log.filter((l) => l.target === '/schools/resources/resources/maths/').at(-1)!
  const cookie = String(member.headers.cookie)
  const renewal = await fetch(`${candidate.origin}/schools/resources/resources/maths/`, { headers: { cookie } })
  t.same(renewal.headers.getSetCookie(), [`${cookie}; path=/; HttpOnly`], 'the candidate sends the session it had with every answer')
  t.same(readJson(json).results.filter((r) => r.differences.length > 0).map((r) => [r.target, r.as, r.differences]), [
    ['/schools/resources/resources/english/', 'member', [{ kind: 'session-cookie', legacy: 'none', candidate: 'set' }]]
  ])
})
