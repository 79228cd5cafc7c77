import t from 'tap'
import fc from 'fast-check'
import { safeBackUrl } from '../../lib/index.js'
import { phpUrlencode, loginRedirectUrl } from '../../lib/redirect/login-redirect.js'
import { MAX_BACK_URL_LENGTH } from '../../lib/sign-in/back-url.js'

t.test('phpUrlencode matches PHP urlencode', async (t) => {
  // Expected values as PHP 8 prints them for urlencode().
  const vectors: Array<[string, string]> = [
    ['/schools/resources/resources/maths/', '%2Fschools%2Fresources%2Fresources%2Fmaths%2F'],
    ['a b', 'a+b'],
    ['AZaz09_.-', 'AZaz09_.-'],
    ["~!*'()", '%7E%21%2A%27%28%29'],
    ['?&=#+%', '%3F%26%3D%23%2B%25'],
    ['é', '%C3%A9'],
    ['झ', '%E0%A4%9D'],
    ['\u0000\n', '%00%0A'],
    ['', '']
  ]
  for (const [input, expected] of vectors) t.equal(phpUrlencode(input), expected, JSON.stringify(input))
  t.equal(phpUrlencode('\ud800x'), '%EF%BF%BDx', 'a lone surrogate becomes U+FFFD instead of throwing')
})

t.test('phpUrlencode: the shortcut for plain paths gives the same bytes as the full encoding', async (t) => {
  // The full encoding, written independently: every UTF-8 byte outside A-Z a-z 0-9 _ . - as %XX, space as +.
  const reference = (value: string) => [...Buffer.from(value.toWellFormed(), 'utf8')].map((byte) => {
    const c = String.fromCharCode(byte)
    if (/[A-Za-z0-9_.-]/.test(c)) return c
    return byte === 0x20 ? '+' : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }).join('')
  const plain = fc.stringMatching(/^[\w.\-/]{0,60}$/)
  const mixed = fc.string({ unit: fc.constantFrom('/', 'a', 'Z', '0', '_', '.', '-', ' ', '~', '%', '+', 'é', '?', '\\', '\ud800') })
  fc.assert(fc.property(fc.oneof(plain, mixed, fc.string({ unit: 'binary' })), (value) => phpUrlencode(value) === reference(value)), { numRuns: 500 })
  t.pass('500 strings: plain paths, mixed ones and any UTF-16')
})

t.test('BackURL decodes back to exactly the path it was built from', async (t) => {
  const paths = ['/schools/resources/resources/maths/', '/a b/?q=1&r=%20', '/ünï/cødé/', "/x~y!z*'()"]
  for (const path of paths) {
    const location = loginRedirectUrl('https://www.example.org', '/Security/login', path)
    t.equal(new URL(location).searchParams.get('BackURL'), path, path)
  }
})

t.test('safeBackUrl keeps same-site addresses and refuses everything else', async (t) => {
  const origin = 'https://www.example.org'
  t.equal(safeBackUrl('/schools/resources/', origin), 'https://www.example.org/schools/resources/')
  t.equal(safeBackUrl('/a?b=c#d', origin), 'https://www.example.org/a?b=c#d')
  t.equal(safeBackUrl('https://www.example.org/x', origin), 'https://www.example.org/x', 'absolute on this origin')
  t.equal(safeBackUrl('/x', 'http://www.example.org:80'), 'http://www.example.org/x', 'the default port is the same origin')
  for (const bad of [
    undefined, 42, ['/a'], '', 'relative', '//evil.example', '/\\evil.example', 'https://evil.example/',
    'http://www.example.org/x', 'https://www.example.org.evil.example/', 'https://user:pw@www.example.org/',
    'javascript:alert(1)', '/a\u0000', '/a\r\n', '/\t/evil.example', '/a\u0085b', `/${'a'.repeat(MAX_BACK_URL_LENGTH)}`
  ]) {
    t.equal(safeBackUrl(bad, origin), undefined, JSON.stringify(bad))
  }
  t.equal(safeBackUrl('/x', 'not an origin'), undefined, 'an unusable site origin falls back')
})
