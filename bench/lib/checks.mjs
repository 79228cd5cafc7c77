// The answers every server must give before and after it is loaded: a load tool counts a wrong 302 as a
// success, so the bench refuses to go on unless they are right. And, for our servers, every
// redirect-conflict warning raised must be found in the server's output.
import { createReadStream, readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { BASE_URL, CATEGORY_PATH } from './servers.mjs'
import { serverStats, terminate } from './processes.mjs'

export const EXPECTED_LOCATION = `${BASE_URL}/Security/login?BackURL=${encodeURIComponent(CATEGORY_PATH)}`
const EXPECTED_CONFLICT = `Already directed to ${EXPECTED_LOCATION}; now trying to direct to /schools/resources/`
const EXPECTED_WARNING = `[FST_SR_REDIRECT_CONFLICT] UserWarning: ${EXPECTED_CONFLICT}`
const CREDENTIALS = 'email=teacher%40example.org&password=correct+horse+battery+staple'
// Anonymous requests each check of our server makes (plain and with a forged cookie): one warning each.
export const ANONYMOUS_REQUESTS_PER_CHECK = 2

export function http (port, { method = 'GET', path = CATEGORY_PATH, headers = {}, body, agent = false, localAddress } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent, localAddress }, (res) => {
      let data = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { data += c })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const SESSION_COOKIES = ['sessionId', 'connect.sid']

/** A browser's cookie jar: keeps every cookie a response sets (and drops those it expires), sends them all back. */
class CookieJar {
  #cookies = new Map()

  keep (res) {
    for (const line of res.headers['set-cookie'] ?? []) {
      const [pair, ...attributes] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]) < Date.now())
      if (expired) this.#cookies.delete(name)
      else this.#cookies.set(name, pair.slice(eq + 1).trim())
    }
    return res
  }

  has (name) { return this.#cookies.has(name) }

  /** The Cookie header a browser sends (undefined with none). */
  header () {
    return this.#cookies.size === 0 ? undefined : [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  headers () {
    const cookie = this.header()
    return cookie === undefined ? {} : { cookie }
  }
}

/**
 * Signs in as a browser does and resolves to the Cookie header a browser then sends: every cookie the
 * login form, the sign-in and the landing page set (a session cookie among them). Ours: the login form
 * (its CSRF token's secret is in a cookie of its own), the post, then the page the 303 leads to. The
 * hand-wired peers (`signInForm: false`) take a bare POST, which answers 204 with their cookies; the
 * other peers take the post alone (`landing: false`: without the landing page). Measuring with the session cookie alone would make a server hand
 * out a new CSRF secret on every page: the figures would measure the bench, not the server.
 */
export async function signIn (port, server = {}, { landing = true } = {}) {
  const jar = new CookieJar()
  const form = jar.keep(await http(port, { path: '/Security/login' }))
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1]
  // Our site is https behind a proxy (bench/servers/ours.mjs); the other servers ignore the header.
  const proto = { 'x-forwarded-proto': 'https' }
  const res = server.signInForm === false
    ? jar.keep(await http(port, { method: 'POST', path: '/Security/login', headers: { ...proto, ...jar.headers() } }))
    : jar.keep(await http(port, {
      method: 'POST',
      path: '/Security/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...proto, ...jar.headers() },
      body: token === undefined ? CREDENTIALS : `${CREDENTIALS}&_csrf=${encodeURIComponent(token)}`
    }))
  if (res.status !== 303 && res.status !== 204) throw new Error(`sign-in answered ${res.status}`)
  if (!SESSION_COOKIES.some((name) => jar.has(name))) throw new Error(`sign-in answered ${res.status} without a session cookie`)
  // The landing page, as a browser follows the redirect (same site: a path, or our own origin).
  const location = res.headers.location
  if (landing && res.status === 303 && location !== undefined) {
    const path = location.startsWith('/') ? location : new URL(location).pathname
    jar.keep(await http(port, { path, headers: { ...proto, ...jar.headers() } }))
  }
  return jar.header()
}

/**
 * Checks the server's answers and resolves to a signed-in member's cookie: the exact login redirect
 * without a cookie for an anonymous visitor (and its warning, for ours), the same redirect for a forged
 * session cookie, the member's page twice after sign-in, and only the sign-ins' sessions in the store.
 */
export async function checkAnswers (proc) {
  const { server, port } = proc
  const fail = (what) => { throw new Error(`${server.name}: wrong answer: ${what}`) }
  const anonymous = await http(port)
  if (anonymous.status !== 302) fail(`anonymous status ${anonymous.status}, expected 302`)
  if (anonymous.headers.location !== EXPECTED_LOCATION) fail(`anonymous Location ${anonymous.headers.location}, expected ${EXPECTED_LOCATION}`)
  if (anonymous.headers['set-cookie'] !== undefined) fail(`anonymous redirect sets a cookie: ${anonymous.headers['set-cookie']}`)
  if (server.warns) {
    // Node prints a warning on the next tick and pino writes asynchronously.
    await sleep(50)
    if (server.warningOutput === 'stderr-and-log-each' && !readFileSync(proc.stderrPath, 'utf8').includes(EXPECTED_WARNING)) fail('the redirect-conflict warning is missing from stderr')
    // The first conflict of a process is logged in full (pino escapes nothing in it).
    if (!readFileSync(proc.stdoutPath, 'utf8').includes(`"msg":"${EXPECTED_CONFLICT}"`)) fail('the redirect-conflict warning is missing from the log')
    const { warnings } = await serverStats(proc)
    if (!(warnings >= 1)) fail('no redirect-conflict warning was raised')
  }
  // The limit knows no sessions: it tells members by the Cookie header alone, so it gets no forged one.
  if (server.cookieAware) {
    const forged = await http(port, { headers: { cookie: 'sessionId=not-a-signed-id; connect.sid=not-a-signed-id' } })
    if (forged.status !== 302 || forged.headers.location !== EXPECTED_LOCATION) fail(`a forged session cookie got ${forged.status} ${forged.headers.location}`)
  }
  const cookie = await signIn(port, server)
  proc.signIns++
  for (let i = 0; i < 2; i++) {
    const page = await http(port, { headers: { cookie } })
    if (page.status !== 200) fail(`signed-in status ${page.status}, expected 200`)
    if (!/^text\/html/.test(page.headers['content-type'] ?? '')) fail(`signed-in content-type ${page.headers['content-type']}`)
    if (!server.page.test(page.body)) fail(`signed-in page body does not match ${server.page}`)
  }
  if (server.sessions) await checkSessions(proc, 'after the checks')
  return cookie
}

/** The store holds exactly the sessions of the checks' sign-ins: anonymous visitors leave nothing. */
export async function checkSessions (proc, when) {
  const { sessions } = await serverStats(proc)
  if (sessions !== proc.signIns) throw new Error(`${proc.server.name}: ${sessions} sessions in the store ${when}, expected the ${proc.signIns} of the checks' sign-ins`)
}

/**
 * After an anonymous load: one warning per anonymous request (the checks', the warm-up's, the measured
 * run's), plus at most one per connection still in flight when wrk stopped, for each wrk run.
 */
export async function checkWarningsRaised (proc, { served, wrkRuns, connections }) {
  const { warnings } = await serverStats(proc)
  if (warnings < served || warnings > served + wrkRuns * connections) {
    throw new Error(`${proc.server.name}: ${warnings} warnings raised for ${served} anonymous requests`)
  }
  return warnings
}

/**
 * Stops our server and checks that its output accounts for every warning it raised (as its 'warning'
 * listener counted them): none is lost. Resolves to the count found.
 */
export async function stopAndAccount (proc, what) {
  if (proc.child.exitCode !== null) throw new Error(`${proc.server.name}: exited early`)
  const { warnings: raised } = await serverStats(proc)
  await terminate(proc)
  const found = await warningsInOutput(proc)
  if (found !== raised) throw new Error(`${proc.server.name} (${what}): ${raised} warnings raised, ${found} in its output`)
  return found
}

/**
 * The redirect-conflict warnings the server's output accounts for: printed on stderr and logged one by
 * one, or logged in full plus the counts of the summary lines (pino JSON on stdout).
 */
async function warningsInOutput (proc) {
  if (proc.server.warningOutput === 'stderr-and-log-each') {
    const printed = await countInFile(proc.stderrPath, '[FST_SR_REDIRECT_CONFLICT] UserWarning')
    const logged = await countInFile(proc.stdoutPath, '"code":"FST_SR_REDIRECT_CONFLICT"')
    return Math.min(printed, logged)
  }
  let total = 0
  for (const line of readFileSync(proc.stdoutPath, 'utf8').split('\n')) {
    if (line.includes('"code":"FST_SR_REDIRECT_CONFLICT"')) total += JSON.parse(line).count ?? 1
  }
  return total
}

function countInFile (path, needle) {
  return new Promise((resolve, reject) => {
    let count = 0
    let carry = ''
    createReadStream(path, { encoding: 'utf8' })
      .on('data', (chunk) => {
        const text = carry + chunk
        let last = 0
        let i = text.indexOf(needle)
        while (i !== -1) {
          count++
          last = i + needle.length
          i = text.indexOf(needle, last)
        }
        carry = text.slice(Math.max(last, text.length - needle.length + 1))
      })
      .on('end', () => resolve(count))
      .on('error', reject)
  })
}
