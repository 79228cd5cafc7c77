import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startStandIn } from './legacy-stand-in.js'
import { runCli, SPEC_ADDRESSES, startExample, tempDir } from './run-cli.js'
import { main } from '../src/cli.js'
import { cacheabilityOf, compare, observe, phpUrldecode } from '../src/compare.js'

// The options a team needs for its own sites: the legacy major version, public origins, a renamed return
// parameter, headers, HEAD, its allow-list; and the command line's own help and mistakes.

const FAST = ['--rate', '1000', '--concurrency', '8']
type Difference = { kind: string, legacy: string, candidate: string, also?: Difference[] }
type Result = { target: string, differences: Difference[], allowed: Array<{ kind: string, rule: string }>, followed?: string }
const results = (file: string) => JSON.parse(readFileSync(file, 'utf8')).results as Result[]

t.test('legacy 5 strips the trailing slash first: expected with --legacy-major 5, a difference otherwise', async (t) => {
  const legacy = await startStandIn({ major: 5, publicOrigin: 'https://www.example.org' })
  t.teardown(legacy.close)
  const candidate = await startExample(t, 'https://new.example.org')
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const addresses = file('a.txt', [...SPEC_ADDRESSES, '/schools/resources/resources/maths?x=1'].join('\n'))
  const site = ['--legacy', legacy.origin, '--candidate', candidate, '--legacy-public-origin', 'https://www.example.org', '--candidate-public-origin', 'https://new.example.org', '--addresses', addresses, '--json', json, ...FAST]
  const five = await runCli(['parity', ...site, '--legacy-major', '5'])
  t.equal(five.code, 0, five.stdout)
  const followed = results(json).filter((r) => r.followed !== undefined).map((r) => r.followed)
  t.same(followed, [...SPEC_ADDRESSES.slice(0, 7).map((a) => a.slice(0, -1))], 'each address ending in a slash was followed once')

  const four = await runCli(['parity', ...site])
  t.equal(four.code, 1)
  const maths = results(json).find((r) => r.target === '/schools/resources/resources/maths/')!
  t.same(maths.differences.map((d) => d.kind), ['status'], 'one cause, once')
  t.same(maths.differences[0].also?.map((d) => d.kind), ['location', 'back-url'], 'the Location and return address, moot, ride along')
  t.same(maths.differences[0].also?.[0], { kind: 'location', legacy: '/schools/resources/resources/maths', candidate: '/Security/login?{return}' })
  t.same(results(json).find((r) => r.target === '/schools/resources/resources/maths?x=1')!.differences, [], 'no slash, no canonical redirect')

  // The followed address fails: reported, not a crash.
  const flaky = await startStandIn({ major: 5, plant: { hangUp: ['/schools/resources/resources/maths'] } })
  t.teardown(flaky.close)
  const run = await runCli(['parity', '--legacy', flaky.origin, '--candidate', candidate, '--candidate-public-origin', 'https://new.example.org', '--addresses', file('m.txt', SPEC_ADDRESSES[0]), '--legacy-major', '5', '--retries', '0', '--json', json])
  t.equal(run.code, 1)
  t.match(results(json)[0].differences, [{ kind: 'request-failed', candidate: '(not compared)' }])
})

t.test('public origins, a renamed return parameter, headers, HEAD and the allow-lists', async (t) => {
  const legacy = await startStandIn({ publicOrigin: 'https://www.example.org' })
  t.teardown(legacy.close)
  const candidate = await startStandIn({ returnParam: 'ReturnTo' })
  t.teardown(candidate.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const addresses = file('a.txt', SPEC_ADDRESSES.slice(0, 2).join('\n'))
  const base = ['parity', '--legacy', legacy.origin, '--candidate', candidate.origin, '--addresses', addresses, '--json', json, ...FAST]

  const unnamed = await runCli(base)
  t.equal(unnamed.code, 1)
  t.same(results(json)[0].differences.map((d) => d.kind), ['location'], 'the legacy Location is elsewhere, the return parameter unknown')
  t.match(results(json)[0].differences[0].legacy, /^https:\/\/www\.example\.org\/Security\/login\?\{return\}$/)
  t.same(results(json)[0].differences[0].also?.map((d) => d.kind), ['back-url'], 'a return address on one side only is part of the Location\'s difference')

  const named = await runCli([...base, '--legacy-public-origin', 'https://www.example.org', '--return-param', 'ReturnTo',
    '--header', 'X-Team: parity', '--candidate-header', 'Authorization: Basic c3RhZ2U6c2VjcmV0', '--legacy-header', 'X-Only: legacy', '--user-agent', 'school-it/1', '--head'])
  t.equal(named.code, 0, named.stdout)
  const seen = (site: typeof legacy) => site.log.at(-1)!
  t.equal(seen(candidate).headers.authorization, 'Basic c3RhZ2U6c2VjcmV0')
  t.equal(seen(legacy).headers.authorization, undefined, 'the staging credentials go to the candidate only')
  t.equal(seen(legacy).headers['x-only'], 'legacy')
  t.same([seen(legacy).headers['x-team'], seen(candidate).headers['x-team']], ['parity', 'parity'])
  t.same([seen(legacy).headers['user-agent'], seen(legacy).method], ['school-it/1', 'HEAD'])

  // Both stand-ins start a session for every visitor: no difference. Against the example app it is one,
  // allowed by default, reported without the default list, and allowed again by the team's own file.
  const example = await startExample(t)
  const againstExample = ['parity', '--legacy', legacy.origin, '--legacy-public-origin', 'https://www.example.org', '--candidate', example, '--addresses', addresses, '--json', json, ...FAST]
  const strict = await runCli([...againstExample, '--no-default-allow'])
  t.equal(strict.code, 1)
  t.match(strict.stdout, /session cookie\s+2\n\s+\/schools\/resources\/resources\/maths\/\n\s+legacy:\s+set\n\s+candidate: none/)
  const ours = file('ours.txt', '# ours\nsession-cookie path=/schools/resources/resources/e* legacy=set\nsession-cookie path=/schools/resources/resources/m*ths/ candidate=none # maths\nsession-cookie as=member\n')
  const team = await runCli([...againstExample, '--no-default-allow', '--allow', ours, '--examples', '0'])
  t.equal(team.code, 0, team.stdout)
  t.same(results(json).map((r) => r.allowed.map((a) => a.rule.replace(/^.*[/\\]/, ''))), [['ours.txt:3'], ['ours.txt:2']])
  const visitorOnly = await runCli([...againstExample, '--no-default-allow', '--allow', file('member.txt', 'session-cookie as=member\n')])
  t.equal(visitorOnly.code, 1, 'a rule for members allows nothing a visitor sees')
  const badAs = await runCli([...againstExample, '--allow', file('as.txt', 'status as=admin\n')])
  t.match(badAs, { code: 2, stderr: /as\.txt:1: "status as=admin" \(expected <kind> \[path=<glob>\] \[as=visitor\|member\]/ })
})

t.test('progress: a bar on a terminal, plain lines otherwise', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const { file } = tempDir(t)
  const args = ['parity', '--legacy', legacy.origin, '--candidate', legacy.origin, '--addresses', file('a.txt', SPEC_ADDRESSES.join('\n')), ...FAST]
  const tty = await runCli(args, true)
  t.match(tty.stderr, /^\r\[#{4}\.{26}\] 1\/8 addresses, 0 differ/)
  t.match(tty.stderr, /\r\[#{30}\] 8\/8 addresses, 0 differ\n$/)
  const plain = await runCli(args)
  t.equal(plain.stderr.split('\n').length - 1, 8, 'a line per tenth (here, per address)')
  t.notMatch(plain.stderr, /\r/)
})

t.test('the command line: help, mistakes, and no stack trace ever', async (t) => {
  const help = await runCli(['--help'])
  t.same([help.code, help.stderr], [0, ''])
  t.match(help.stdout, /parity\s+compare a legacy site/)
  t.match((await runCli(['parity', '-h'])).stdout, /--legacy-major <4\|5>[\s\S]*--rate <n>\s+requests started per second \(default 10\)/)
  t.match((await runCli(['parity', '-h'])).stdout, /--allow-origin <origin>[\s\S]*--max-body <bytes>\s+of a page, after decompression \(default 10485760, 10 MB\)\n\s+--max-sitemap-body <bytes>[\s\S]*--sitemap-max <n>[^\n]*\(default 50000\)/)
  t.match(await runCli([]), { code: 2, stderr: /^No command given\./ })
  t.match(await runCli(['compare']), { code: 2, stderr: /^Unknown command "compare"\./ })
  const ok = ['--legacy', 'http://a.example', '--candidate', 'http://b.example', '--crawl']
  const mistakes: Array<[string[], RegExp]> = [
    [['--colour'], /Unknown option '--colour'/],
    [['--crawl'], /--legacy and --candidate are both required/],
    [['--legacy', 'a.example', '--candidate', 'http://b.example', '--crawl'], /--legacy "a\.example" is not an origin/],
    [['--legacy', 'http://a.example/x', '--candidate', 'http://b.example', '--crawl'], /--legacy "http:\/\/a\.example\/x" is not an origin/],
    [['--legacy', 'http://a.example', '--candidate', 'http://b.example'], /no addresses: give --addresses, --sitemap or --crawl/],
    [[...ok, '--candidate-public-origin', 'ftp://x'], /--candidate-public-origin "ftp:\/\/x" is not an origin/],
    [[...ok, '--legacy-public-origin', 'http://x?y'], /--legacy-public-origin/],
    [[...ok, '--prefix', '/schools/'], /--prefix "\/schools\/" must be a path/],
    [[...ok, '--return-param', 'Back URL'], /--return-param "Back URL" must be a query parameter name/],
    [[...ok, '--legacy-return-param', ''], /--legacy-return-param "" must be/],
    [[...ok, '--legacy-major', '3'], /--legacy-major "3" must be 4 or 5/],
    [[...ok, '--header', 'no colon'], /--header "no colon" is not a header/],
    [[...ok, '--rate', '0'], /--rate "0" must be a number of at least 0\.01/],
    [[...ok, '--concurrency', 'many'], /--concurrency "many" must be a number of at least 1/],
    [[...ok, '--crawl-depth=-1'], /--crawl-depth "-1"/],
    // Counts of things are whole: 1.5 requests at once or 2.5 retries mean nothing.
    [[...ok, '--concurrency', '1.5'], /--concurrency "1\.5" must be a whole number of at least 1/],
    [[...ok, '--crawl-depth', '0.5'], /--crawl-depth "0\.5" must be a whole number of at least 0/],
    [[...ok, '--crawl-max', '2.5'], /--crawl-max "2\.5" must be a whole number of at least 1/],
    [[...ok, '--retries', '0.5'], /--retries "0\.5" must be a whole number of at least 0/],
    [[...ok, '--examples', '1.5'], /--examples "1\.5" must be a whole number of at least 0/]
  ]
  for (const [args, message] of mistakes) {
    const run = await runCli(['parity', ...args])
    t.equal(run.code, 2, args.join(' '))
    t.match(run.stderr, message)
  }
  // A failure of the checker itself (here, writing the summary) is still one message and exit 2.
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const { file } = tempDir(t)
  let stderr = ''
  const code = await main(['parity', '--legacy', legacy.origin, '--candidate', legacy.origin, '--addresses', file('a.txt', '/schools/resources/')], {
    stdout: { write: () => { throw new Error('EPIPE') } },
    stderr: { write: (s: string) => { stderr += s } },
    env: {}
  })
  t.equal(code, 2)
  t.match(stderr, /parity: unexpected error: Error: EPIPE/)
})

t.test('what a cache may do, and PHP\'s urldecode', async (t) => {
  const h = (cacheControl?: string, more: Record<string, string> = {}) => new Headers({ ...(cacheControl === undefined ? {} : { 'cache-control': cacheControl }), ...more })
  t.equal(cacheabilityOf(302, h('no-cache, no-store, must-revalidate')), 'none')
  t.equal(cacheabilityOf(200, h(undefined, { pragma: 'no-cache' })), 'shared', 'Pragma means nothing in an answer')
  t.equal(cacheabilityOf(302, h('public, max-age=300', { pragma: 'no-cache' })), 'shared', 'nor beside Cache-Control')
  const date = 'Sat, 28 Nov 2026 12:00:00 GMT'
  t.equal(cacheabilityOf(302, h(undefined, { expires: 'Sat, 28 Nov 2026 12:05:00 GMT', date })), 'shared', 'Expires after the answer\'s Date')
  t.equal(cacheabilityOf(200, h(undefined, { expires: 'Sat, 28 Nov 2026 11:00:00 GMT', date })), 'none', 'Expires before it: none, whatever the status')
  t.equal(cacheabilityOf(200, h(undefined, { expires: '0' })), 'none', 'Expires not a date: none')
  t.equal(cacheabilityOf(302, h(undefined, { expires: 'Thu, 01 Jan 1970 00:00:00 GMT' })), 'none', 'in the past, without Date: compared with now')
  t.equal(cacheabilityOf(302, h('no-cache', { expires: 'Wed, 21 Oct 2037 07:28:00 GMT' })), 'none', 'Cache-Control first: Expires counts only without it')
  t.equal(cacheabilityOf(200, h('private, max-age=60')), 'private')
  t.equal(cacheabilityOf(302, h('max-age=60')), 'shared')
  t.equal(cacheabilityOf(200, h('s-maxage="0"')), 'none')
  t.equal(cacheabilityOf(302, h('public')), 'shared')
  t.equal(cacheabilityOf(302, h(undefined, { expires: 'Wed, 21 Oct 2037 07:28:00 GMT' })), 'shared')
  t.equal(cacheabilityOf(301, h()), 'shared', 'a 301 is cacheable by default')
  t.equal(cacheabilityOf(302, h()), 'none', 'a 302 is not')
  t.equal(phpUrldecode('%2Fa+b%7E'), '/a b~')
  t.equal(phpUrldecode('%E2%82'), '%E2%82', 'a malformed escape stays as written')
  const site = { origins: ['https://www.example.org'], returnParam: 'BackURL', sessionCookies: ['PHPSESSID'] }
  const at = (location: string) => observe({ status: 302, headers: new Headers({ location }), body: '', cut: false }, site)
  t.match(at('https://www.example.org'), { location: '/', locationForm: 'absolute' })
  t.match(at('https://www.example.org.evil.example/x'), { location: 'https://www.example.org.evil.example/x', locationForm: 'absolute' })
  t.match(at('//www.example.org/x'), { locationForm: 'absolute' })
  const plain = { status: 200, location: null, locationForm: 'none' as const, backUrl: null, cacheability: 'none' as const, sessionCookie: false }
  t.same(compare(plain, { ...plain, sessionCookie: true }), [{ kind: 'session-cookie', legacy: 'none', candidate: 'set' }], 'a new session where the legacy site had none')
  t.same(compare(plain, { ...plain, status: 404 }), [{ kind: 'status', legacy: '200', candidate: '404' }], 'nothing moot: no also')
  const redirect = { ...plain, status: 302, location: '/Security/login?{return}', locationForm: 'relative' as const, backUrl: '%2Fx' }
  t.same(compare(plain, redirect), [{
    kind: 'status',
    legacy: '200',
    candidate: '302',
    also: [{ kind: 'location-form', legacy: 'none', candidate: 'relative' }, { kind: 'location', legacy: '(none)', candidate: '/Security/login?{return}' }, { kind: 'back-url', legacy: '(none)', candidate: '%2Fx' }]
  }], 'a status difference makes the Location and return address moot')
  t.same(compare({ ...redirect, location: null, locationForm: 'none', backUrl: null }, { ...redirect, cacheability: 'shared' }).map((d) => [d.kind, d.also?.map((m) => m.kind)]),
    [['location', ['location-form', 'back-url']], ['cacheability', undefined]], 'a Location on one side only: its form and return address are moot; cacheability stands alone')
  t.same(compare(redirect, { ...redirect, backUrl: '%2fx' }).map((d) => d.kind), ['back-url-encoding'])
  // A rolling session's renewal (the value held) is no new session; a new value is.
  const renewed = (value: string) => observe({ status: 200, headers: new Headers([['set-cookie', `PHPSESSID=${value}; Path=/`], ['set-cookie', 'other=1']]), body: '', cut: false }, site, new Map([['PHPSESSID', 'abc']]))
  t.equal(renewed('abc').sessionCookie, false)
  t.equal(renewed('def').sessionCookie, true)
  t.match(at('/Security/login?a=1&BackURL=x&BackURL=y'), { location: '/Security/login?a=1&{return}&BackURL=y', backUrl: 'x', locationForm: 'relative' })
})

t.test('Cache-Control read as RFC 9111 parses it: quoted values, qualified forms, duplicates, invalid lifetimes', async (t) => {
  const h = (entries: Array<[string, string]>) => new Headers(entries)
  const cc = (...values: string[]) => h(values.map((v) => ['cache-control', v]))
  // A qualified private or no-cache names the fields a shared cache must not keep; it may keep the rest.
  t.equal(cacheabilityOf(200, cc('private="Set-Cookie", max-age=300')), 'shared', 'qualified private')
  t.equal(cacheabilityOf(200, cc('no-cache="Set-Cookie, X-Token", max-age=300')), 'shared', 'qualified no-cache, a comma inside its quotes')
  t.equal(cacheabilityOf(200, cc('community="UCI, no-store", max-age=300')), 'shared', 'no-store inside an extension\'s quoted value is no directive')
  t.equal(cacheabilityOf(200, cc('PRIVATE')), 'private')
  t.equal(cacheabilityOf(200, cc('max-age=300', 'no-store')), 'none', 'no-store in a second header')
  t.equal(cacheabilityOf(200, cc('public, max-age=300', 'Private')), 'private', 'private in a second header')
  // A shared cache takes s-maxage over max-age, wherever each is written.
  t.equal(cacheabilityOf(200, cc('max-age=0, s-maxage=300')), 'shared')
  t.equal(cacheabilityOf(200, cc('s-maxage=0, max-age=300')), 'none')
  // An invalid lifetime is stale (RFC 9111 §4.2.1), not a licence for heuristics.
  for (const bad of ['max-age=abc', 'max-age=-1', 'max-age=', 'max-age="30', 's-maxage=1e3']) t.equal(cacheabilityOf(200, cc(bad)), 'none', bad)
  t.equal(cacheabilityOf(200, cc('max-age="300"')), 'shared', 'a quoted lifetime is read (RFC 9111 §5.2)')
  t.equal(cacheabilityOf(200, cc('max-age=300, max-age=0')), 'shared', 'the first of two')
  t.equal(cacheabilityOf(200, cc('no-cache="x\\", no-store", max-age=\t60')), 'shared', 'an escaped quote inside quotes')
  // An argument no one can read leaves the stricter reading.
  for (const odd of ['private="Set-Cookie', 'private="a\\', 'private="a" b', 'private=', ', ,private']) t.equal(cacheabilityOf(200, cc(odd)), 'private', odd)
})

t.test('Expires read as an HTTP-date only, beside a Cache-Control without a lifetime too', async (t) => {
  const date = 'Sat, 28 Nov 2026 12:00:00 GMT'
  const h = (more: Record<string, string>) => new Headers({ date, ...more })
  // Date.parse takes '2030' or '1 1 2030' for a date: a cache does not.
  for (const bad of ['2030', '99999', '1 1 2030', 'Thu, 01 Jan 2099 00:00:00 GMT, Fri, 01 Jan 2100 00:00:00 GMT']) {
    t.equal(cacheabilityOf(302, h({ expires: bad })), 'none', bad)
  }
  for (const good of ['Sun, 29 Nov 2026 08:49:37 GMT', 'Sunday, 29-Nov-26 08:49:37 GMT', 'Sun Nov 29 08:49:37 2026']) {
    t.equal(cacheabilityOf(302, h({ expires: good })), 'shared', good)
  }
  // Expires counts only where there is no Cache-Control (issue 41): PHP's 1981 date beside a
  // Cache-Control the page set itself does not override it, and a future one adds nothing to it.
  t.equal(cacheabilityOf(200, h({ 'cache-control': 'public', expires: 'Thu, 19 Nov 1981 08:52:00 GMT' })), 'shared')
  t.equal(cacheabilityOf(302, h({ 'cache-control': 'must-revalidate', expires: 'Sun, 29 Nov 2026 08:49:37 GMT' })), 'none', 'a 302 with no lifetime and no public')
  t.equal(cacheabilityOf(200, h({ 'cache-control': 'max-age=60', expires: 'Thu, 19 Nov 1981 08:52:00 GMT' })), 'shared', 'max-age wins over Expires')
  t.equal(cacheabilityOf(200, h({ 'cache-control': 'private', expires: 'Sun, 29 Nov 2026 08:49:37 GMT' })), 'private')
  t.equal(cacheabilityOf(302, new Headers({ date: 'yesterday', expires: 'Sun, 29 Nov 2099 08:49:37 GMT' })), 'shared', 'an unreadable Date: now')
})
