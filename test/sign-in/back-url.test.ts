import t from 'tap'
import { safeBackUrl } from '../../lib/index.js'

// Finding 6 of issue 12: only http(s) on the site's own origin, and no result whose path starts with `//`
// (one relative redirect away from another site).

const SITE = 'https://www.example.org'

t.test('only http and https addresses on the site are returned', async (t) => {
  for (const value of [
    'blob:https://www.example.org/3f1c', 'blob:https://www.example.org/schools/resources/',
    'ws://www.example.org/', 'wss://www.example.org/schools/', 'ftp://www.example.org/'
  ]) t.equal(safeBackUrl(value, SITE), undefined, value)
  t.equal(safeBackUrl('https://www.example.org/schools/resources/', SITE), 'https://www.example.org/schools/resources/')
})

t.test('no returned address has a path that starts with //', async (t) => {
  for (const value of [
    '/..//evil.example', '/.//evil.example', '/a/../..//evil.example/x', '/%2e%2e//evil.example', '/./%2F/evil.example',
    'https://www.example.org//evil.example', 'https://www.example.org/..//evil.example', '/x/..//evil.example?y#z'
  ]) {
    const result = safeBackUrl(value, SITE)
    t.ok(result === undefined || !new URL(result).pathname.startsWith('//'), `${value} -> ${String(result)}`)
  }
  t.equal(safeBackUrl('/..//evil.example', SITE), undefined, 'refused, not normalised into the index')
  t.equal(safeBackUrl('/schools/../schools/resources/', SITE), 'https://www.example.org/schools/resources/', 'dot segments that stay on a normal path are fine')
})
