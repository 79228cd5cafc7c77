import t from 'tap'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, watch, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { join } from 'node:path'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipBomb, MEMBER, startStandIn } from './legacy-stand-in.js'
import { runCli, tempDir } from './run-cli.js'
import { writeReports } from '../src/report.js'
import { addressKind, checkAllowedOrigins } from '../src/origins.js'
import { DEFAULT_POLITENESS, OriginLimiter, politeRequest } from '../src/politeness.js'
import { tags } from '../src/scan.js'
import { fillLoginForm } from '../src/sign-in.js'

// The legacy site is not ours: a hostile (or compromised) one gets nothing it was not given, cannot send
// the checker elsewhere, cannot exhaust it, and cannot have it write through a planted link.

const FAST = ['--rate', '1000', '--concurrency', '8']
const PASSWORDS = { PARITY_LEGACY_PASSWORD: MEMBER.password, PARITY_CANDIDATE_PASSWORD: 'candidate secret' }
const STAGING = 'Authorization: Basic c3RhZ2U6c2VjcmV0'
type Report = { skipped: { count: number, examples: string[] }, capped: Record<string, { count: number, examples: string[] }>, results: Array<{ source: string, target: string }> }
const report = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Report

t.test('a login form posting to another origin: refused, and the canary hears nothing', async (t) => {
  const canary = await startStandIn()
  t.teardown(canary.close)
  const legacy = await startStandIn({ hostile: { loginAction: `${canary.origin}/steal` } })
  t.teardown(legacy.close)
  const candidate = await startStandIn()
  t.teardown(candidate.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const args = ['parity', '--legacy', legacy.origin, '--candidate', candidate.origin, '--addresses', file('a.txt', '/schools/resources/'),
    '--header', STAGING, '--legacy-header', 'X-Legacy-Token: t0ken', '--legacy-user', MEMBER.email, '--candidate-user', MEMBER.email, '--json', json, ...FAST]
  const run = await runCli(args, false, PASSWORDS)
  t.equal(run.code, 2)
  t.match(run.stderr, `\nparity: cannot sign in to the legacy site: its login form posts to ${canary.origin}/steal, which is not ${legacy.origin}; nothing was sent there\n`)
  t.same(canary.log, [], 'the canary received no request at all: no password, no header, no cookie')
  t.same(legacy.log.filter((l) => l.method !== 'GET'), [], 'nothing was posted to the legacy site either')
  t.notOk(existsSync(json), 'no report')

  // The candidate's password goes to the candidate alone, even to a form naming the legacy site.
  const sly = await startStandIn({ hostile: { loginAction: `${legacy.origin}/Security/LoginForm` } })
  t.teardown(sly.close)
  const honest = await startStandIn()
  t.teardown(honest.close)
  const crossed = await runCli(['parity', '--legacy', honest.origin, '--candidate', sly.origin, ...args.slice(5)], false, PASSWORDS)
  t.match(crossed, { code: 2, stderr: new RegExp(`cannot sign in to the candidate site: its login form posts to ${legacy.origin}/Security/LoginForm, which is not ${sly.origin};`) })
  t.notOk(legacy.log.some((l) => l.method === 'POST'), 'the legacy site got no candidate password')
  const posted = honest.log.filter((l) => l.method === 'POST')
  t.equal(posted.length, 1, 'the legacy sign-in went to the legacy site')
  t.equal(posted[0].headers.authorization, 'Basic c3RhZ2U6c2VjcmV0', '--header goes to the site it was given for')

  // A form on the legacy site's public origin is posted to where it runs, as its sitemap's addresses are.
  const behindProxy = await startStandIn({ publicOrigin: 'https://www.example.org', hostile: { loginAction: 'https://www.example.org/Security/LoginForm' } })
  t.teardown(behindProxy.close)
  const proxied = await runCli(['parity', '--legacy', behindProxy.origin, '--legacy-public-origin', 'https://www.example.org', '--candidate', honest.origin, ...args.slice(5)], false, { ...PASSWORDS, PARITY_CANDIDATE_PASSWORD: MEMBER.password })
  t.equal(proxied.code, 0, proxied.stderr + proxied.stdout)
  t.same(behindProxy.log.filter((l) => l.method === 'POST').map((l) => [l.target, l.headers['x-legacy-token']]), [['/Security/LoginForm', 't0ken']])
  // A form whose action is no address at all.
  const broken = await startStandIn({ hostile: { loginAction: 'http://[bad' } })
  t.teardown(broken.close)
  const brokenRun = await runCli(['parity', '--legacy', broken.origin, '--candidate', honest.origin, ...args.slice(5)], false, PASSWORDS)
  t.match(brokenRun, { code: 2, stderr: /its login form posts to http:\/\/\[bad, which is not/ })
})

t.test('inputs naming other origins: skipped and counted, never fetched, unless allowed by name', async (t) => {
  const canary = await startStandIn()
  t.teardown(canary.close)
  const internal = ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/sitemap.xml', 'http://localhost:9/sitemap.xml']
  const legacy = await startStandIn({
    hostile: {
      indexLocs: [`${canary.origin}/sitemap-pages.xml`, ...internal],
      links: [`${canary.origin}/schools/resources/resources/elsewhere/`, 'http://169.254.169.254/schools/resources/x']
    }
  })
  t.teardown(legacy.close)
  const candidate = await startStandIn()
  t.teardown(candidate.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const base = ['parity', '--legacy', legacy.origin, '--candidate', candidate.origin, '--header', STAGING, '--legacy-header', 'User-Agent: legacy-only', '--json', json, ...FAST]
  const sitemap = await runCli([...base, '--sitemap', `${legacy.origin}/sitemap.xml`])
  t.equal(sitemap.code, 0, sitemap.stderr)
  t.same(canary.log, [], 'the canary received nothing')
  t.same(report(json).skipped, { count: 4, examples: [`${canary.origin}/sitemap-pages.xml`, ...internal] })
  t.match(sitemap.stdout, /Skipped, on neither site \(never fetched; --allow-origin to include an origin\): 4\n {4}http:\/\/127\.0\.0\.1:\d+\/sitemap-pages\.xml, http:\/\/169\.254\.169\.254\/latest\/meta-data\//)

  const crawled = await runCli([...base, '--crawl', '--crawl-depth', '1'])
  t.equal(crawled.code, 0, crawled.stderr)
  t.equal(report(json).skipped.count, 2, 'two links under the prefix on other origins')
  t.same(canary.log, [])

  const addresses = file('a.txt', `${legacy.origin}/schools/resources/\nhttp://169.254.169.254/schools/resources/\nhttps://evil.example/schools/resources/resources/maths/\n${candidate.origin}/schools/resources/resources/english/\n`)
  const listed = await runCli([...base, '--addresses', addresses])
  t.equal(listed.code, 0)
  t.same(report(json).skipped.examples, ['http://169.254.169.254/schools/resources/', 'https://evil.example/schools/resources/resources/maths/'])
  t.same(report(json).results.map((r) => r.target), ['/schools/resources/', '/schools/resources/resources/english/'], 'on either site: kept')
  const none = await runCli([...base, '--addresses', file('b.txt', 'https://evil.example/x\n')])
  t.match(none, { code: 2, stderr: /the inputs hold no address on either site \(1 on other origins, skipped\)/ })

  // Allowed by name: fetched, with the User-Agent alone (no --header, no cookie).
  const allowed = await runCli([...base, '--sitemap', `${legacy.origin}/sitemap.xml`, '--allow-origin', canary.origin])
  t.equal(allowed.code, 0, allowed.stderr)
  t.same(canary.log.map((l) => [l.method, l.target, l.headers.authorization, l.headers.cookie]), [['GET', '/sitemap-pages.xml', undefined, undefined]])
  t.match(canary.log[0].headers['user-agent'], /^fastify-schools-resources-parity\//, 'the User-Agent of --user-agent, not a header given for a site')
  t.equal(report(json).skipped.count, 3)
})

t.test('--allow-origin inside the network: only when a site given is there too', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const { file } = tempDir(t)
  const base = ['parity', '--legacy', legacy.origin, '--candidate', legacy.origin, '--addresses', file('a.txt', '/schools/resources/'), ...FAST]
  const refused: Array<[string, string]> = [['http://169.254.169.254', 'link-local'], ['http://10.1.2.3:8080', 'private'], ['http://[fe80::1]', 'link-local'], ['https://[fd00::1]', 'private']]
  for (const [origin, kind] of refused) {
    const run = await runCli([...base, '--allow-origin', origin])
    t.match(run, { code: 2, stderr: `--allow-origin ${origin} is on a ${kind} address, and neither --legacy nor --candidate is` }, origin)
    t.equal(run.stdout, '')
  }
  t.equal(legacy.log.length, 0, 'refused before any request')
  // The sites run on loopback: loopback may be allowed; so may a public address.
  for (const origin of ['http://localhost:9', 'http://[::1]:9', 'https://93.184.215.14']) t.equal((await runCli([...base, '--allow-origin', origin])).code, 0, origin)
  t.match(await runCli([...base, '--allow-origin', 'nope']), { code: 2, stderr: /--allow-origin "nope" is not an origin/ })
  t.match(await runCli([...base, '--allow-origin', 'http://no-such-host.invalid']), { code: 2, stderr: /--allow-origin http:\/\/no-such-host\.invalid: its host does not resolve \(/ })
  t.same(['::ffff:10.0.0.1', '100.64.0.1', '0.0.0.0', '::', '8.8.8.8', '2001:db8::1'].map(addressKind), ['private', 'private', 'loopback', 'loopback', undefined, undefined])
  // IPv4 written as IPv6 in hex (how a URL writes [::ffff:127.0.0.1]) is the IPv4 address too.
  t.same(['::ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:c0a8:1'].map(addressKind), ['loopback', 'link-local', 'private'])
})

t.test('--allow-origin: every spelling of this machine is loopback when the sites are public', async (t) => {
  // Two public sites (numeric, so that nothing is looked up on the network).
  const sites = { legacy: 'https://93.184.215.14', candidate: 'https://93.184.215.15' }
  const spellings = ['http://[::1]', 'http://[::ffff:127.0.0.1]', 'http://0.0.0.0', 'http://2130706433', 'http://127.1', 'http://0x7f.1', 'http://localhost', 'http://127.0.0.1.', 'http://[::]']
  for (const spelling of spellings) {
    await t.rejects(checkAllowedOrigins({ ...sites, allowOrigins: [new URL(spelling).origin] }), { name: 'ParityInputError', message: /is on a loopback address, and neither --legacy nor --candidate is/ }, spelling)
  }
  await t.rejects(checkAllowedOrigins({ ...sites, allowOrigins: ['http://[::ffff:a9fe:a9fe]'] }), { message: /link-local/ })
  await t.resolves(checkAllowedOrigins({ ...sites, allowOrigins: ['https://93.184.215.16'] }))
})

t.test('bounded work: a gzip bomb, huge sitemaps, each cap a flag, each hit reported', async (t) => {
  const legacy = await startStandIn({ hostile: { links: ['/schools/resources/bomb/'] } })
  t.teardown(legacy.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const addresses = file('a.txt', '/schools/resources/\n')
  const base = ['parity', '--legacy', legacy.origin, '--candidate', legacy.origin, '--json', json, ...FAST]
  // How long each read takes, and the memory it holds, are figures (test/hostile-figures.ts, docs/parity.md),
  // not assertions: these tests pin what is read and kept.

  // A page of 1 GB once decompressed: read to --max-body, its links up to there still followed.
  const bomb = await runCli([...base, '--crawl', '--crawl-depth', '2', '--max-body', '1000000'])
  t.equal(bomb.code, 0, bomb.stderr)
  t.same(report(json).capped['--max-body'], { count: 3, examples: [`${legacy.origin}/schools/resources/bomb/`] }, 'crawled, then compared on each side')
  t.ok(report(json).results.some((r) => r.target === '/schools/resources/bomb/'), 'the bomb\'s own address is compared')
  t.match(bomb.stdout, /Cut short, pages read only up to --max-body: 3\n {4}http:\/\/127\.0\.0\.1:\d+\/schools\/resources\/bomb\/\n/)

  // A sitemap of 1 GB: read to --max-sitemap-body; what it held up to there is kept.
  const sitemapBomb = await runCli([...base, '--addresses', addresses, '--sitemap', `${legacy.origin}/bomb.xml`])
  t.equal(sitemapBomb.code, 0, sitemapBomb.stderr)
  t.same(report(json).capped, { '--max-sitemap-body': { count: 1, examples: [`${legacy.origin}/bomb.xml`] } })
  t.match(sitemapBomb.stdout, /Cut short, sitemaps read only up to --max-sitemap-body: 1\n/)

  // 20,000 addresses on an internal host: read, every one skipped.
  const huge = await runCli([...base, '--addresses', addresses, '--sitemap', `${legacy.origin}/huge-sitemap.xml`])
  t.equal(huge.code, 0, huge.stderr)
  t.equal(report(json).skipped.count, 20_000)
  const capped = await runCli([...base, '--addresses', addresses, '--sitemap', `${legacy.origin}/huge-sitemap.xml`, '--sitemap-max', '100'])
  t.equal(capped.code, 0)
  t.same([report(json).skipped.count, report(json).capped['--sitemap-max'].count], [100, 1])
  t.match(capped.stdout, /Cut short, sitemaps with more addresses than --sitemap-max: 1\n {4}http:\/\/127\.0\.0\.1:\d+\/huge-sitemap\.xml\n/)
  // 1 MB of <loc> never closed: refused at the first, not scanned to the end for each.
  t.match(await runCli([...base, '--sitemap', `${legacy.origin}/open-sitemap.xml`]), { code: 2, stderr: /open-sitemap\.xml does not parse: a <loc> is not closed/ })

  // An index whose sitemaps hold more than --sitemap-max: the rest of one is not read, the next not fetched.
  const before = legacy.log.length
  const sitemaps = ['sitemap-pages', 'huge-sitemap', 'sitemap-pages'].map((name) => `<sitemap><loc>${legacy.origin}/${name}.xml</loc></sitemap>`).join('')
  const index = await runCli([...base, '--sitemap', file('index.xml', `<sitemapindex>${sitemaps}</sitemapindex>`), '--sitemap-max', '100'])
  t.equal(index.code, 0, index.stderr)
  t.same(report(json).capped['--sitemap-max'], { count: 2, examples: [`${legacy.origin}/huge-sitemap.xml`, `${legacy.origin}/sitemap-pages.xml`] })
  t.same([report(json).results.length, report(json).skipped.count], [1, 99])
  t.same(legacy.log.slice(before).map((l) => l.target).filter((p) => p.endsWith('.xml')), ['/sitemap-pages.xml', '/huge-sitemap.xml'])
  const longIndex = await runCli([...base, '--sitemap', file('index.xml', `<sitemapindex>${sitemaps}</sitemapindex>`), '--sitemap-max', '2'])
  t.same([longIndex.code, report(json).capped['--sitemap-max'].examples], [0, [join(dir, 'index.xml'), `${legacy.origin}/huge-sitemap.xml`]], 'the index\'s own list is bounded too')

  for (const [flag, value] of [['--max-body', '0'], ['--max-sitemap-body', 'lots'], ['--sitemap-max', '1.5']]) {
    t.match(await runCli([...base, '--addresses', addresses, flag, value]), { code: 2, stderr: new RegExp(`${flag} "${value.replace('.', '\\.')}" must be a (?:whole )?number of at least 1`) })
  }
})

t.test('pages built to be slow: the login form and the links scanned in one pass', async (t) => {
  // Each about 1 MB. A regular expression looking for each <form>'s </form> (as the login form was
  // once read) goes to the end of the page from every <form>: minutes here, not milliseconds.
  const pages: Array<[string, string, (page: string) => unknown, unknown]> = [
    ['forms never closed', '<form>'.repeat(200_000), (page) => fillLoginForm(page, 'https://old.example/', { user: 'u', password: 'p' }), undefined],
    ['password forms never closed', '<form><input type=password name=p>'.repeat(35_000), (page) => fillLoginForm(page, 'https://old.example/', { user: 'u', password: 'p' }), undefined],
    ['a tag never closed', '<a href="/schools/resources/x" '.repeat(35_000), (page) => [...tags(page)], []],
    ['links without end', '<a href=/x>'.repeat(100_000), (page) => [...tags(page)].length, 100_000]
  ]
  // No clock here (speed is a figure, not an assertion): a scan that went back over the page from each
  // tag would not end within the file's timeout, and the test fails by that.
  for (const [name, page, scan, expected] of pages) t.same(scan(page), expected, `${name}: ${page.length} characters`)
})

t.test('a sitemap answered other than 200: its body is read to the cap and dropped, not kept', async (t) => {
  // A 404 (or a 503, read again at each retry) of a gzip bomb kept as text took a run to 275 MB (400 MB).
  const server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/xml', 'content-encoding': 'gzip' }).end(gzipBomb('<urlset>'))
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sitemap.xml`
  const get = async (read: Parameters<typeof politeRequest>[5]) => await politeRequest(url, 'GET', {}, new OriginLimiter(1, 1000), { ...DEFAULT_POLITENESS, retries: 0 }, read)
  let made = 0
  const sitemap = await get({ maxBytes: 1_000_000, reader: () => { made++; return () => true } })
  t.same([sitemap.status, sitemap.body, sitemap.cut, made], [404, '', true, 0], 'no reader made, no text kept')
  // A page (read without a reader) keeps its text up to the cap, whatever its status.
  const page = await get({ maxBytes: 100 })
  t.same([page.status, page.body, page.cut], [404, `<urlset>${' '.repeat(92)}`, true])
})

t.test('an index within an index: not read past its root element, so it uses none of --sitemap-max', async (t) => {
  const legacy = await startStandIn({ hostile: { indexLocs: Array.from({ length: 5 }, (_, i) => `http://10.0.0.${i}/sitemap.xml`) } })
  t.teardown(legacy.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const index = file('index.xml', `<sitemapindex><sitemap><loc>${legacy.origin}/sitemap.xml</loc></sitemap><sitemap><loc>${legacy.origin}/sitemap-pages.xml</loc></sitemap></sitemapindex>`)
  const run = await runCli(['parity', '--legacy', legacy.origin, '--candidate', legacy.origin, '--sitemap', index, '--sitemap-max', '3', '--json', json, ...FAST])
  t.equal(run.code, 0, run.stderr)
  t.same(report(json).capped, {}, 'its six <loc>s were not read: no cap was hit')
  t.same([report(json).results.map((r) => r.target), report(json).skipped.count], [['/schools/resources/'], 0], 'the next sitemap is read; the nested one\'s addresses are neither kept nor skipped')
})

t.test('sitemap files: read in one pass, whatever falls across a chunk', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const base = ['parity', '--legacy', legacy.origin, '--candidate', legacy.origin, '--json', json, ...FAST]
  const loc = (path: string) => `<url><loc>${legacy.origin}${path}</loc></url>`
  // A file is read 64 KiB at a time: a comment, a tag and a <loc> each cut across a chunk.
  const chunk = 64 * 1024
  const pad = (text: string, at: number) => text + ' '.repeat(at - text.length)
  const head = '<?xml version="1.0"?><urlset>'
  let xml = pad(head, chunk - 10) + `<!-- ${'-'.repeat(100)} > -->` + loc('/a/')
  xml = pad(xml, 2 * chunk - 3) + loc('/b/')
  xml = pad(xml, 3 * chunk - 20) + loc('/c/') + '<loc/></urlset>'
  const across = await runCli([...base, '--sitemap', file('across.xml', xml)])
  t.equal(across.code, 0, across.stderr)
  t.same(report(json).results.map((r) => r.target), ['/a/', '/b/', '/c/'])
  const comment = await runCli([...base, '--sitemap', file('comment.xml', `${head}<!-- ${'x'.repeat(3 * chunk)} -->${loc('/d/')}</urlset>`)])
  t.same([comment.code, report(json).results.map((r) => r.target)], [0, ['/d/']], 'a comment longer than a chunk')
  const cut = await runCli([...base, '--sitemap', file('cut.xml', `${head}${loc('/e/')}${' '.repeat(1000)}${loc('/f/')}</urlset>`), '--max-sitemap-body', '500'])
  t.same([cut.code, report(json).results.map((r) => r.target), report(json).capped['--max-sitemap-body'].count], [0, ['/e/'], 1])
  const full = await runCli([...base, '--sitemap', file('full.xml', `${head}${loc('/g/')}${loc('/h/')}</urlset>`), '--sitemap-max', '1'])
  t.same([full.code, report(json).results.map((r) => r.target), report(json).capped['--sitemap-max'].count], [0, ['/g/'], 1])
  const bad: Array<[string, RegExp]> = [
    [`${head}<loc>http://a/${'x'.repeat(3000)}</loc></urlset>`, /a <loc> is longer than 2048 characters/],
    [`${head}<url ${'x'.repeat(5000)}`, /a tag is longer than 4096 characters/],
    ['<loc>http://a/</loc><urlset>', /no <urlset> or <sitemapindex> element, or it is not closed/],
    ['<urlset></urlset><loc>http://a/', /a <loc> is not closed/]
  ]
  for (const [text, message] of bad) t.match(await runCli([...base, '--sitemap', file('bad.xml', text)]), { code: 2, stderr: message })
})

t.test('reports: an unpredictable temporary name, created exclusively, never through a link', async (t) => {
  const { dir } = tempDir(t)
  const victim = join(dir, 'victim.txt')
  writeFileSync(victim, 'the runner\'s own file\n')
  const report = join(dir, 'r.json')
  // The name a shared folder's other user would plant a link at, had it been predictable.
  symlinkSync(victim, join(dir, '.r.json.0123456789abcdef.tmp'))
  await t.rejects(writeReports([[report, '{}\n']], () => '0123456789abcdef'), { name: 'ParityInputError', message: /cannot write the report: EEXIST/ })
  t.equal(readFileSync(victim, 'utf8'), 'the runner\'s own file\n', 'the link\'s target is not written')
  t.notOk(existsSync(report))
  // The old predictable name (<file>.<pid>.tmp) is not used any more; a dangling link there changes nothing.
  symlinkSync(victim, `${report}.${process.pid}.tmp`)
  await writeReports([[report, '{"ok":true}\n']])
  t.equal(readFileSync(report, 'utf8'), '{"ok":true}\n')
  t.equal(readFileSync(victim, 'utf8'), 'the runner\'s own file\n')
  // A second report that cannot be written: the first is not left half done, and no temporary file stays.
  mkdirSync(join(dir, 'sub'))
  await t.rejects(writeReports([[join(dir, 'sub', 'a.json'), '1'], [join(dir, 'missing', 'b.json'), '2']]), { message: /ENOENT/ })
  t.same(readdirSync(join(dir, 'sub')), [], 'neither the report nor its temporary file')
  // The name itself, seen as it is made: 96 random bits, new at each write.
  const names = new Set<string>()
  const watcher = watch(dir, (_event, name) => { if (name?.endsWith('.tmp') === true) names.add(name) })
  t.teardown(() => { watcher.close() })
  for (const text of ['1', '2', '3']) await writeReports([[report, text]])
  await sleep(200)
  t.equal(names.size, 3, 'three writes, three names')
  for (const name of names) t.match(name, /^\.r\.json\.[0-9a-f]{24}\.tmp$/)
})

t.test('reports: never writable by everyone, whatever the umask', async (t) => {
  const { dir } = tempDir(t)
  const before = process.umask(0)
  t.teardown(() => { process.umask(before) })
  const file = join(dir, 'r.json')
  await writeReports([[file, '{}\n']])
  t.equal(statSync(file).mode & 0o777, 0o664, 'a umask of 0 gives no write to others')
  process.umask(0o027)
  await writeReports([[file, '{}\n']])
  t.equal(statSync(file).mode & 0o777, 0o640, 'a stricter umask is kept')
})

t.test('what a site writes reaches the terminal as text, never as control sequences', async (t) => {
  // OSC 52 writes the runner's clipboard, CSI clears the screen, a newline forges a summary line, a
  // bidi override reverses what follows: a hostile site's return address, sitemap and login form
  // carry them, percent-encoded (decoded for the summary) or raw.
  const evil = '\u001b]52;c;cGF5bG9hZA==\u0007\u001b[2J\nNo differences beyond the allow-list.\u202e\u009b'
  const encoded = encodeURIComponent(evil)
  const legacy = createServer((req, res) => {
    if (req.url === '/Security/login') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<form method="post" action="http://[${evil}"><input type="password" name="p"></form>`)
    } else if (req.url === '/sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' }).end(`<urlset><url><loc>https://evil.example/${evil.replace(/\s/g, '')}</loc></url><url><loc>http://127.0.0.1:${port()}/schools/resources/resources/maths/</loc></url></urlset>`)
    } else if (req.url === '/bad-sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' }).end(`<urlset><url><loc>ftp://${evil}</loc></url></urlset>`)
    } else if (req.url!.startsWith('/schools/resources/resources/')) {
      res.writeHead(302, { location: `/Security/login?BackURL=${encoded}`, 'cache-control': 'no-store' }).end()
    } else {
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' }).end('<h1>Resources</h1>')
    }
  }).listen(0, '127.0.0.1')
  await once(legacy, 'listening')
  const port = () => (legacy.address() as AddressInfo).port
  t.teardown(() => { legacy.closeAllConnections(); legacy.close() })
  const candidate = await startStandIn()
  t.teardown(candidate.close)
  const { dir } = tempDir(t)
  const junit = join(dir, 'r.xml')
  const json = join(dir, 'r.json')
  const base = ['parity', '--legacy', `http://127.0.0.1:${port()}`, '--candidate', candidate.origin, ...FAST]
  // eslint-disable-next-line no-control-regex -- control characters are what must not be there
  const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/
  const run = await runCli([...base, '--sitemap', `http://127.0.0.1:${port()}/sitemap.xml`, '--junit', junit, '--json', json])
  t.equal(run.code, 1, run.stderr)
  t.equal(JSON.parse(readFileSync(json, 'utf8')).skipped.count, 1)
  t.match(run.stdout, /return address/, 'the difference is reported')
  t.notMatch(run.stdout, CONTROL, 'no control character in the summary')
  t.equal(run.stdout.match(/No differences beyond the allow-list/g)?.length ?? 0, 1, 'the forged line is shown as text inside its value, not as a line of its own')
  t.notMatch(run.stdout, /^No differences/m)
  t.notMatch(readFileSync(junit, 'utf8'), CONTROL, 'nor in the JUnit report')
  for (const args of [['--sitemap', `http://127.0.0.1:${port()}/bad-sitemap.xml`], ['--addresses', join(dir, 'a.txt'), '--legacy-user', 'a', '--candidate-user', 'b']]) {
    writeFileSync(join(dir, 'a.txt'), '/schools/resources/\n')
    const failed = await runCli([...base, ...args], false, PASSWORDS)
    t.equal(failed.code, 2)
    t.notMatch(failed.stderr, CONTROL, `no control character on stderr (${args[0]})`)
  }
})

t.test('odd spellings of another origin, a <base href> and redirects carry no credential there', async (t) => {
  const canary = await startStandIn()
  t.teardown(canary.close)
  const c = new URL(canary.origin).port
  let page = ''
  let postAnswer: [number, Record<string, string>] = [302, { location: '/schools/resources/' }]
  const legacy = createServer((req, res) => {
    if (req.url === '/Security/login' && req.method === 'GET') res.writeHead(200, { 'content-type': 'text/html' }).end(page)
    else if (req.method === 'POST') res.writeHead(...postAnswer).end()
    else if (req.url === '/sitemap.xml') res.writeHead(200).end(`<urlset>${spellings.map((s) => `<url><loc>${s.replaceAll('&', '&amp;')}</loc></url>`).join('')}</urlset>`)
    else if (req.url === '/schools/resources/') res.writeHead(200, { 'content-type': 'text/html' }).end(spellings.map((s) => `<a href="${s}">x</a>`).join(''))
    else res.writeHead(404).end()
  }).listen(0, '127.0.0.1')
  await once(legacy, 'listening')
  const l = (legacy.address() as AddressInfo).port
  t.teardown(() => { legacy.closeAllConnections(); legacy.close() })
  const spellings = [`//127.0.0.1:${c}/schools/resources/steal`, `\\\\127.0.0.1:${c}/schools/resources/steal`, `/\\127.0.0.1:${c}/schools/resources/steal`, `HTTP://127.0.0.1:${c}/schools/resources/steal`,
    `http://127.0.0.1:${l}@127.0.0.1:${c}/schools/resources/steal`, `http://localhost:${c}/schools/resources/steal`, `http://127.0.0.1.:${c}/schools/resources/steal`, `http://2130706433:${c}/schools/resources/steal`,
    `http://127.1:${c}/schools/resources/steal`, `http://[::ffff:127.0.0.1]:${c}/schools/resources/steal`, `http://\uff11\uff12\uff17.0.0.1:${c}/schools/resources/steal`, `http://127.0.0.1:0${c}/schools/resources/steal`,
    `\thttp://127.0.0.1:${c}/schools/resources/steal`, 'javascript:fetch(1)']
  const { file } = tempDir(t)
  const base = ['parity', '--legacy', `http://127.0.0.1:${l}`, '--candidate', canary.origin.replace(c, String(l)), '--header', STAGING, ...FAST]
  const signIn = [...base, '--addresses', file('a.txt', '/schools/resources/'), '--legacy-user', MEMBER.email, '--candidate-user', MEMBER.email]
  for (const action of spellings) {
    page = `<form method="post" action="${action}"><input name="Email"><input type="password" name="Password"></form>`
    const run = await runCli(signIn, false, PASSWORDS)
    t.match(run, { code: 2, stderr: /its login form posts to .*, which is not http:\/\/127\.0\.0\.1:\d+; nothing was sent there/ }, action)
  }
  // A <base href> elsewhere is not followed: the relative action is posted to the site itself.
  page = `<base href="${canary.origin}/"><form method="post" action="Security/LoginForm"><input name="Email"><input type="password" name="Password"></form>`
  t.equal((await runCli(signIn, false, PASSWORDS)).code, 0)
  // A redirect from the login page, or from the form's answer (a 307 would have a browser post again), is not followed.
  postAnswer = [307, { location: `${canary.origin}/steal` }]
  t.equal((await runCli(signIn, false, PASSWORDS)).code, 0, 'a redirect away from the login page is a sign-in')
  page = ''
  const redirected = createServer((_req, res) => res.writeHead(302, { location: `${canary.origin}/Security/login` }).end()).listen(0, '127.0.0.1')
  await once(redirected, 'listening')
  t.teardown(() => redirected.close())
  const r = (redirected.address() as AddressInfo).port
  t.match(await runCli([...signIn.slice(0, 2), `http://127.0.0.1:${r}`, ...signIn.slice(3)], false, PASSWORDS), { code: 2, stderr: /has no form with a password field \(answered 302\)/ })
  // The same spellings in a sitemap and in links: none reaches the canary.
  t.equal((await runCli([...base, '--sitemap', `http://127.0.0.1:${l}/sitemap.xml`])).code, 2, 'no address left on either site')
  const json = file('r.json', '')
  const crawled = await runCli([...base, '--crawl', '--crawl-depth', '1', '--json', json])
  t.equal(crawled.code, 0, crawled.stderr)
  t.ok(report(json).skipped.count >= 10, 'the links elsewhere are skipped')
  t.same(canary.log, [], 'the canary received nothing at all')
})
