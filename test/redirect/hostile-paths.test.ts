import t from 'tap'
import { phpUrlencode } from '../../lib/redirect/login-redirect.js'
import { BASE_URL, buildTestApp, conflictWarnings, signIn } from '../helpers/app.js'
import { locationOf, rawRequest, statusOf } from '../helpers/raw-http.js'

const PREFIX = '/schools/resources/resources/'

// What scanners and broken clients send, as raw bytes on the request line.
const HOSTILE = [
  '%zz/', '%/', '%2/', '%00/', '%0d%0aSet-Cookie:%20a=b/', '%E0%A4/', '%C0%AE%C0%AE/', '..%2F..%2Fetc%2Fpasswd',
  '../../../etc/passwd', '..', '.', '../maths', 'MATHS/', 'Maths/', 'maths.json', 'maths%2F/', 'maths//', 'maths/./',
  `${'a'.repeat(101)}/`, `${'b'.repeat(8000)}/`, 'caf%C3%A9/', '%F0%9F%98%80/', 'a%20b/', 'a+b/', "x'%22%3E%3Cscript%3E/",
  'maths/?BackURL=%zz', 'maths/?BackURL=https://evil.example', 'maths/?%', 'maths/?a=%00', 'maths/#frag', '*', '%2e%2e/'
]
// Raw bytes Node's HTTP parser itself refuses with 400 before any route runs.
const REFUSED_BY_NODE = ['café/', 'a b/', 'tab\there/', 'nul\u0000/', 'del\u007f/']

t.test('hostile paths get the documented redirect or a clear 4xx, never a 5xx or a crash', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const cookie = await signIn(app)
  const outcomes: Record<string, number> = {}
  let redirects = 0
  const warnings = await conflictWarnings(async () => {
    for (const rest of HOSTILE) {
      const path = PREFIX + rest
      const raw = await rawRequest(port, path)
      const status = statusOf(raw)
      outcomes[status] = (outcomes[status] ?? 0) + 1
      if (status === 302) {
        redirects++
        // The path exactly as received, even a fragment a broken client put on the request line.
        t.equal(locationOf(raw), `${BASE_URL}/Security/login?BackURL=${phpUrlencode(path)}`, `anonymous ${rest.slice(0, 40)}`)
      } else {
        t.ok(status >= 400 && status < 500, `${rest.slice(0, 40)}: a clear 4xx (${status})`)
        t.match(raw, /"statusCode":4\d\d/, 'with a JSON error body')
      }
      const member = statusOf(await rawRequest(port, path, cookie))
      t.ok(member === 302 || member === 200 || (member >= 400 && member < 500), `member ${rest.slice(0, 40)}: ${member}`)
    }
    for (const rest of REFUSED_BY_NODE) {
      t.equal(statusOf(await rawRequest(port, PREFIX + rest)), 400, `refused: ${JSON.stringify(rest)}`)
    }
  })
  t.equal(warnings.length, redirects, 'one warning per anonymous redirect')
  for (const w of warnings) t.match(w.message, /^Already directed to https:\/\/www\.example\.org\/Security\/login\?BackURL=%2Fschools%2Fresources%2Fresources%2F\S*; now trying to direct to \/schools\/resources\/$/)
  t.notOk(outcomes[500], 'no 500')
  t.ok(redirects >= HOSTILE.length - 6, `most shapes get the login redirect (${redirects} of ${HOSTILE.length})`)
  t.comment(`hostile paths: ${HOSTILE.length + REFUSED_BY_NODE.length}; outcomes ${JSON.stringify(outcomes)} (+${REFUSED_BY_NODE.length} refused by Node with 400)`)
  t.equal(statusOf(await rawRequest(port, `${PREFIX}maths/`)), 302, 'the server still answers')
})
