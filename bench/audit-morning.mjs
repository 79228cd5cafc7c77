// A scripted school morning against the example server with METRICS=1 (issue 22): prints the server's
// audit lines and the /metrics counters before and after. Not part of the tests or the bench:
//   npm run build && node bench/audit-morning.mjs
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { startFlags } from './lib/npm-start-flags.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const TEACHER = { email: 'teacher@example.org', password: 'correct horse battery staple' }
const PARENT = { email: 'parent@example.org', password: 'parents evening in the hall' }
// The section's default lockout: 10 failures for one username from one address.
const LOCK_AFTER = 10

const child = spawn(process.execPath, [...startFlags(root), 'dist/examples/server.js'], {
  cwd: root,
  env: { ...process.env, PORT: '0', METRICS: '1', LOG_LEVEL: 'info', REDIS_URL: '', SESSION_SECRET: 's'.repeat(40) },
  stdio: ['ignore', 'pipe', 'inherit']
})
let log = ''
const origin = await new Promise((resolve, reject) => {
  child.stdout.on('data', (chunk) => {
    log += chunk
    const found = /Resources section: (http:\/\/[^/]+)\//.exec(log)
    if (found !== null) resolve(found[1])
  })
  child.once('exit', (code) => reject(new Error(`the server exited (${code})`)))
})

/** A browser: keeps its cookies, follows nothing. */
function browser () {
  const jar = new Map()
  return async function request (path, { method = 'GET', form } = {}) {
    const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') }
    let body
    if (form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(form).toString()
    }
    const res = await fetch(`${origin}${path}`, { method, headers, body, redirect: 'manual' })
    for (const cookie of res.headers.getSetCookie()) {
      const [pair, ...attrs] = cookie.split(';')
      const [name, value] = pair.split('=')
      if (value === '' || attrs.some((a) => /max-age=0/i.test(a))) jar.delete(name)
      else jar.set(name, value)
    }
    return { status: res.status, text: await res.text() }
  }
}

const token = (html) => /name="_csrf" value="([^"]+)"/.exec(html)[1]

async function signIn (request, credentials) {
  const form = await request('/Security/login')
  return (await request('/Security/login', { method: 'POST', form: { _csrf: token(form.text), ...credentials } })).status
}

const COUNTERS = /^(schools_resources_\w+|http_request_duration_seconds_count)(\{[^}]*\})? /
async function counters () {
  const text = await (await fetch(`${origin}/metrics`)).text()
  return new Map(text.split('\n').filter((l) => COUNTERS.test(l)).map((l) => {
    const at = l.lastIndexOf(' ')
    return [l.slice(0, at), Number(l.slice(at + 1))]
  }))
}

const before = await counters()
const steps = []
const step = (what, status) => steps.push(`${String(status).padEnd(4)}${what}`)

const teacher = browser()
const parent = browser()
const guesser = browser()
step('anonymous visitor opens a category (login redirect)', (await browser()('/schools/resources/resources/maths/')).status)
step('teacher signs in', await signIn(teacher, TEACHER))
step('parent mistypes the password', await signIn(parent, { email: PARENT.email, password: 'parents evening' }))
step('parent signs in', await signIn(parent, PARENT))
step('parent opens the staff room', (await parent('/schools/resources/resources/staff-room/')).status)
step('teacher downloads the fraction wall', (await teacher('/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf')).status)
for (let i = 1; i <= LOCK_AFTER + 1; i++) {
  const status = await signIn(guesser, { email: 'head@example.org', password: `guess-${i}` })
  if (i === 1 || i >= LOCK_AFTER) step(`someone guesses head@example.org's password (try ${i})`, status)
}
const page = await teacher('/schools/resources/')
step('teacher signs out', (await teacher('/Security/logout', { method: 'POST', form: { _csrf: token(page.text) } })).status)
const after = await counters()

child.kill('SIGTERM')
await new Promise((resolve) => child.once('exit', resolve))

console.log('# The morning (status, step)')
for (const line of steps) console.log(line)
console.log('\n# The audit lines in the server log')
for (const line of log.split('\n').filter((l) => l.includes('"audit"'))) {
  const { level, time, pid, hostname, ...rest } = JSON.parse(line)
  console.log(JSON.stringify({ level, ...rest }))
}
console.log('\n# /metrics: the counters that moved (before -> after)')
for (const [series, value] of after) {
  const was = before.get(series) ?? 0
  if (value !== was) console.log(`${series} ${was} -> ${value}`)
}
