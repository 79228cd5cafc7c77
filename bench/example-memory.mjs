// The example server's memory: its resident set (VmRSS from /proc) after start, and after a short load
// of sign-ins (scrypt), signed-in pages and file downloads, as `npm start` runs it. Not part of CI.
//
//   npm run build && node bench/example-memory.mjs                  # sessions in memory
//   REDIS_URL=redis://127.0.0.1:6379 node bench/example-memory.mjs  # sessions in Redis
//
// Linux only (/proc). Prints one JSON line; docs/example-server.md#memory has the figures.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startEnv, startFlags } from './lib/npm-start-flags.mjs'

const root = join(import.meta.dirname, '..')
const signIns = 200
const pages = 2000

function rssMiB (pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1])
  return { rss: Math.round(kib('VmRSS') / 1024), peak: Math.round(kib('VmHWM') / 1024) }
}

const env = { ...process.env, ...startEnv(root), PORT: '0', LOG_LEVEL: 'warn', SESSION_SECRET: 's'.repeat(40), REDIS_PREFIX: `schools-resources-memory:${process.pid}:` }
const child = spawn(process.execPath, [...startFlags(root), join(root, 'dist/examples/server.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] })
const address = await new Promise((resolve, reject) => {
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
    const match = /Resources section: (http:\/\/[^/\s]+)/.exec(out)
    if (match !== null) resolve(match[1])
  })
  child.on('exit', (code) => reject(new Error(`the server exited with ${code}`)))
})

try {
  await sleep(2000)
  const idle = rssMiB(child.pid)

  const cookies = (res) => res.headers.getSetCookie().map((c) => c.split(';')[0]).filter((p) => !p.endsWith('='))
  // A sign-in the password line refuses (503, busy) tries again after its Retry-After, counted.
  let busy = 0
  async function signIn () {
    const form = await fetch(`${address}/Security/login`)
    const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())[1]
    const body = new URLSearchParams({ _csrf: token, email: 'teacher@example.org', password: 'correct horse battery staple' })
    const res = await fetch(`${address}/Security/login`, { method: 'POST', body, headers: { cookie: cookies(form).join('; ') }, redirect: 'manual' })
    if (res.status === 503) {
      busy++
      await sleep(Number(res.headers.get('retry-after')) * 1000)
      return signIn()
    }
    if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`)
    return cookies(res).find((c) => c.startsWith('sessionId='))
  }
  async function inParallel (count, width, fn) {
    let next = 0
    await Promise.all(Array.from({ length: width }, async () => { while (next < count) await fn(next++) }))
  }
  const sessions = []
  await inParallel(signIns, 8, async () => { sessions.push(await signIn()) })
  const paths = ['/schools/resources/', '/schools/resources/resources/maths/', '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf']
  await inParallel(pages, 16, async (i) => {
    const res = await fetch(`${address}${paths[i % paths.length]}`, { headers: { cookie: sessions[i % sessions.length] } })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${paths[i % paths.length]} answered ${res.status}`)
  })
  const loaded = rssMiB(child.pid)
  await sleep(5000)
  const after = rssMiB(child.pid)
  console.log(JSON.stringify({
    redis: process.env.REDIS_URL !== undefined && process.env.REDIS_URL !== '',
    idleMiB: idle.rss,
    afterLoadMiB: loaded.rss,
    fiveSecondsLaterMiB: after.rss,
    peakMiB: after.peak,
    load: `${signIns} sign-ins (8 at once), ${pages} signed-in requests (16 at once)`,
    busyRetries: busy
  }))
} finally {
  child.kill('SIGTERM')
}
