import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startStandIn } from './legacy-stand-in.js'
import { closedOrigin, runCli, tempDir } from './run-cli.js'
import { variantsOf } from '../src/variants.js'

// Where the addresses come from (a file, a sitemap, a crawl, variants), and every way an input is wrong:
// a clear message naming it, exit 2, and no report written.

const FAST = ['--rate', '1000', '--concurrency', '8']
const targets = (file: string) => (JSON.parse(readFileSync(file, 'utf8')).results as Array<{ target: string, source: string }>).map((r) => `${r.source} ${r.target}`)

t.test('variants of a category address, and none of other addresses', async (t) => {
  t.same(variantsOf('/schools/resources/resources/maths/', '/schools/resources'), [
    '/schools/resources/resources/maths',
    '/schools/resources/resources/maths/?utm_source=newsletter&page=2',
    '/schools/resources/resources/%6Daths/',
    "/schools/resources/resources/maths~!'()*%20+%C3%A9;@/",
    '/schools/resources/resources/MATHS/'
  ])
  t.equal(variantsOf('/site/x.y/resources/maths', '/site/x.y')[0], '/site/x.y/resources/maths/', 'adds the slash it lacks; the prefix is literal')
  t.same(variantsOf('/schools/resources/', '/schools/resources'), [])
  t.same(variantsOf('/sitexxy/resources/maths', '/site/x.y'), [])
  t.same(variantsOf('/schools/resources/resources/maths/?a=1', '/schools/resources'), [])
})

t.test('sitemaps (a file, an index by URL) and a bounded crawl', async (t) => {
  const legacy = await startStandIn({ publicOrigin: 'https://www.example.org' })
  t.teardown(legacy.close)
  const candidate = await startStandIn({ publicOrigin: 'https://www.example.org' })
  t.teardown(candidate.close)
  const { dir, file } = tempDir(t)
  const site = ['--legacy', legacy.origin, '--candidate', candidate.origin, '--legacy-public-origin', 'https://www.example.org', '--candidate-public-origin', 'https://www.example.org', ...FAST]
  const urlset = file('sitemap.xml', `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>https://www.example.org/schools/resources/</loc></url><url><loc> https://www.example.org/schools/resources/resources/maths/?a=1&amp;b=2 </loc></url></urlset>`)
  const json = join(dir, 'r.json')
  const fromFile = await runCli(['parity', ...site, '--sitemap', urlset, '--json', json])
  t.equal(fromFile.code, 0, fromFile.stderr)
  t.same(targets(json), ['sitemap /schools/resources/', 'sitemap /schools/resources/resources/maths/?a=1&b=2'])

  const fromUrl = await runCli(['parity', ...site, '--sitemap', `${legacy.origin}/sitemap.xml`, '--json', json])
  t.equal(fromUrl.code, 0, fromUrl.stderr)
  t.same(targets(json), ['sitemap /schools/resources/'], 'the index\'s sitemap was read')

  const nested = await runCli(['parity', ...site, '--sitemap', `${legacy.origin}/sitemap-of-indexes.xml`, '--sitemap', urlset, '--json', json])
  t.equal(nested.code, 0, nested.stderr)
  t.equal(targets(json).length, 2, 'an index within an index is not followed')

  const crawl = async (depth: string, max: string, more: string[] = []) => {
    const run = await runCli(['parity', ...site, ...more, '--crawl', '--crawl-depth', depth, '--crawl-max', max, '--json', json])
    t.equal(run.code, 0, run.stderr)
    return targets(json).map((s) => s.replace(/^crawl \/schools\/resources\/(?:resources\/)?/, ''))
  }
  t.same(await crawl('0', '100'), [''], 'depth 0: the index alone')
  t.same(await crawl('1', '3'), ['', 'maths/', 'english/'], 'at most --crawl-max; no link outside the prefix or the site')
  t.same(await crawl('2', '100'), ['', 'maths/', 'english/', 'science/', 'humanities/', 'wellbeing/', 'staff-room/'], 'category pages redirect: nothing deeper')
  t.same(await crawl('1', '1'), [''])
  const five = await startStandIn({ major: 5 })
  t.teardown(five.close)
  const fromFive = await runCli(['parity', '--legacy', five.origin, '--candidate', candidate.origin, '--candidate-public-origin', 'https://www.example.org', '--legacy-major', '5', '--crawl', '--crawl-depth', '1', '--crawl-max', '3', '--json', json, ...FAST])
  t.equal(fromFive.code, 0, fromFive.stdout)
  t.same(targets(json), ['crawl /schools/resources', 'crawl /schools/resources/resources/maths/', 'crawl /schools/resources/resources/english/'], 'legacy 5: from the index without its slash')
  // A page that fails while crawling is skipped (and reported when compared).
  const failing = await startStandIn({ plant: { hangUp: ['/schools/resources/resources/maths/'] } })
  t.teardown(failing.close)
  const run = await runCli(['parity', '--legacy', failing.origin, '--candidate', candidate.origin, '--crawl', '--retries', '0', '--json', json, ...FAST])
  t.equal(run.code, 1)
  t.same(targets(json).length, 7)
  t.match(run.stdout, /request failed\s+1\n\s+\/schools\/resources\/resources\/maths\//)
})

t.test('every bad input: a message naming it, exit 2, no report', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'never.json')
  const closed = await closedOrigin()
  const good = file('good.txt', '/schools/resources/\n')
  const base = ['parity', '--legacy', legacy.origin, '--candidate', legacy.origin, '--json', json, ...FAST]
  const cases: Array<[string, string[], RegExp]> = [
    ['address file with bad lines', ['--addresses', file('bad.txt', '/ok\n\nschools/resources/\n# fine\n/has space\nhttps://\nftp://x/y\n//evil.example/\n')],
      /address file .*bad\.txt has 5 bad lines:\n.*bad\.txt:3: "schools\/resources\/" is not a path.*\n.*bad\.txt:5: "\/has space".*\n.*bad\.txt:6: "https:\/\/".*\n.*bad\.txt:7: "ftp:\/\/x\/y".*\n.*bad\.txt:8: "\/\/evil\.example\/"/],
    ['many bad lines', ['--addresses', file('many.txt', 'x\n'.repeat(12))], /has 12 bad lines:[\s\S]*many\.txt:10:[\s\S]*\(and 2 more bad lines\)/],
    ['one bad line', ['--addresses', file('one.txt', 'x\n')], /has 1 bad line:/],
    ['missing address file', ['--addresses', join(dir, 'absent.txt')], /address file .*absent\.txt: cannot read it \(ENOENT\)/],
    ['empty address file', ['--addresses', file('empty.txt', '# nothing yet\n')], /the inputs hold no address/],
    ['sitemap that is not XML', ['--sitemap', file('s1.xml', 'not a sitemap')], /sitemap .*s1\.xml does not parse: no <urlset> or <sitemapindex>/],
    ['sitemap cut short', ['--sitemap', file('s2.xml', '<urlset><url><loc>https://a.example/x</loc></url>')], /s2\.xml does not parse: .*not closed/],
    ['sitemap with a bad loc', ['--sitemap', file('s3.xml', '<urlset><url><loc>/relative</loc></url></urlset>')], /s3\.xml does not parse: <loc>\/relative<\/loc> is not an http\(s\) URL/],
    ['sitemap with an open loc', ['--sitemap', file('s4.xml', '<urlset><url><loc>https://a.example/x</url></urlset>')], /s4\.xml does not parse: a <loc> is not closed/],
    ['sitemap without addresses', ['--sitemap', file('s5.xml', '<urlset></urlset>')], /the inputs hold no address/],
    ['missing sitemap file', ['--sitemap', join(dir, 'absent.xml')], /sitemap .*absent\.xml: cannot read it \(ENOENT\)/],
    ['sitemap URL answering 404', ['--sitemap', `${legacy.origin}/nope.xml`], /sitemap http:.*\/nope\.xml: answered 404, not 200/],
    ['sitemap URL not answering', ['--sitemap', `${closed}/sitemap.xml`, '--allow-origin', closed, '--retries', '0'], /sitemap http:\/\/127\.0\.0\.1:\d+\/sitemap\.xml: cannot fetch it: .*ECONNREFUSED/],
    ['sitemap URL on neither site', ['--sitemap', `${closed}/sitemap.xml`], /sitemap http:\/\/127\.0\.0\.1:(\d+)\/sitemap\.xml is on neither site: give --allow-origin http:\/\/127\.0\.0\.1:\1 to read it/],
    ['allow-list with bad lines', ['--addresses', good, '--allow', file('allow.txt', '# ours\nstatus path=/x/*\nstatuses\ncacheability colour=red\n')],
      /allow-list .*allow\.txt has bad lines:\n.*allow\.txt:3: "statuses" \(expected <kind>.*\n.*allow\.txt:4: "cacheability colour=red"/],
    ['missing allow-list', ['--addresses', good, '--allow', join(dir, 'absent-allow.txt')], /allow-list .*absent-allow\.txt: cannot read it \(ENOENT\)/],
    ['report in a missing folder', ['--addresses', good, '--junit', join(dir, 'no', 'such', 'r.xml')], /cannot write the report: ENOENT/]
  ]
  for (const [name, args, message] of cases) {
    const run = await runCli([...base, ...args])
    t.equal(run.code, 2, name)
    t.match(run.stderr, message, name)
    t.match(run.stderr, /Run with --help for the options\./, name)
    t.equal(run.stdout, '', name)
    t.notOk(existsSync(json), `${name}: no report`)
  }
  t.same(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left')
})
