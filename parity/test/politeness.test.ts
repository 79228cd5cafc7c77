import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startStandIn } from './legacy-stand-in.js'
import { closedOrigin, runCli, tempDir } from './run-cli.js'
import { failureOf } from '../src/politeness.js'

// Polite to a live site: the rate per origin (measured at the stand-in), retries, timeouts, and the
// clear stop when a site cannot be reached at all.

const categories = (n: number) => Array.from({ length: n }, (_, i) => `/schools/resources/resources/c${i}/`).join('\n')

t.test('the rate limit holds at the site, measured per time window', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const candidate = await startStandIn()
  t.teardown(candidate.close)
  const { file } = tempDir(t)
  const rate = 20
  const run = await runCli(['parity', '--legacy', legacy.origin, '--candidate', candidate.origin, '--addresses', file('a.txt', categories(40)), '--rate', String(rate)])
  t.equal(run.code, 0, run.stderr)
  for (const site of [legacy, candidate]) {
    const times = site.log.map((l) => l.at)
    t.equal(times.length, 41, 'the reachability check and 40 addresses')
    // In any one-second window the site saw at most the rate, with a generous allowance for timer jitter.
    const busiest = Math.max(...times.map((start) => times.filter((at) => at >= start && at < start + 1000).length))
    t.ok(busiest <= rate * 1.25, `busiest second: ${busiest} requests (limit ${rate})`)
    // ...and the limiter is not idle either: 41 starts spaced 1/rate apart take about two seconds.
    const span = times[times.length - 1] - times[0]
    t.ok(span >= (times.length - 1) * (1000 / rate) * 0.8, `41 requests over ${Math.round(span)} ms`)
  }
})

t.test('retries with backoff after a 503, a timeout, a dropped connection', async (t) => {
  const legacy = await startStandIn({
    plant: { unavailableOnce: ['/schools/resources/resources/maths/'], busyOnce: ['/schools/resources/resources/wellbeing/'], silent: ['/schools/resources/resources/english/'], hangUp: ['/schools/resources/resources/science/'] }
  })
  t.teardown(legacy.close)
  const candidate = await startStandIn()
  t.teardown(candidate.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const addresses = file('a.txt', ['maths', 'english', 'science', 'wellbeing'].map((s) => `/schools/resources/resources/${s}/`).join('\n'))
  const run = await runCli(['parity', '--legacy', legacy.origin, '--candidate', candidate.origin, '--addresses', addresses, '--timeout', '300', '--retries', '1', '--rate', '1000', '--json', json])
  t.equal(run.code, 1)
  const results = JSON.parse(readFileSync(json, 'utf8')).results as Array<{ target: string, differences: Array<{ kind: string, legacy: string, candidate: string }> }>
  t.same(results[0].differences, [], 'the 503 was retried (after its Retry-After) and the retry answered')
  t.same(results[3].differences, [], 'so was the 429')
  t.same(results[1].differences, [{ kind: 'request-failed', legacy: 'no answer within 300 ms', candidate: 'answered 302' }])
  t.equal(results[2].differences[0].kind, 'request-failed')
  t.match(results[2].differences[0].legacy, /other side closed|socket|ECONNRESET/i)
  const tries = (target: string) => legacy.log.filter((l) => l.target === `/schools/resources/resources/${target}/`).length
  t.same([tries('maths'), tries('english'), tries('science'), tries('wellbeing')], [2, 2, 2, 2], 'one retry each')
  t.match(run.stdout, /request failed\s+2/)
})

t.test('a site that cannot be reached, or speaks no TLS: a clear stop before any address', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const addresses = file('a.txt', '/schools/resources/\n')
  const closed = await closedOrigin()
  const unreachable = await runCli(['parity', '--legacy', closed, '--candidate', legacy.origin, '--addresses', addresses, '--retries', '0', '--json', json])
  t.equal(unreachable.code, 2)
  t.match(unreachable.stderr, new RegExp(`cannot reach the legacy site ${closed}: connect ECONNREFUSED .*\\(ECONNREFUSED\\)`))
  // https to a server that speaks plain http: the TLS handshake fails, and is not retried.
  const tls = legacy.origin.replace('http:', 'https:')
  const before = legacy.log.length
  const badTls = await runCli(['parity', '--legacy', legacy.origin, '--candidate', tls, '--addresses', addresses, '--json', json])
  t.equal(badTls.code, 2)
  t.match(badTls.stderr, new RegExp(`cannot reach the candidate site ${tls.replace(/[.]/g, '\\.')}: TLS error: `))
  t.equal(legacy.log.length, before + 1, 'only the legacy reachability check arrived as a request')
  const badPort = await runCli(['parity', '--legacy', 'http://127.0.0.1:1', '--candidate', legacy.origin, '--addresses', addresses, '--retries', '0'])
  t.match(badPort, { code: 2, stderr: /cannot reach the legacy site http:\/\/127\.0\.0\.1:1: bad port \(NETWORK\)/ })
  t.equal(failureOf(new Error('no cause'), 1).message, 'no cause (NETWORK)')
})
