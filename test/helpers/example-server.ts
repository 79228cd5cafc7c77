import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { formToken } from './app.js'
import { cookiePairs } from './listening-app.js'

export const EXAMPLE_SERVER = resolve(__dirname, '../../dist/examples/server.js')

/**
 * How package.json's `start` script runs the server (`... && [NAME=value ...] node <flags>
 * dist/examples/server.js`): its environment variables and Node's flags, so that the tests run the
 * server the way `npm start` does.
 */
const START: { env: Record<string, string>, flags: string[] } = (() => {
  const start: string = JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')).scripts.start
  const words = start.split('&&').pop()!.trim().split(/\s+/)
  let assignments = 0
  while (/^[A-Z_]+=/.test(words[assignments])) assignments++
  const command = words.slice(assignments)
  if (command[0] !== 'node' || command[command.length - 1] !== 'dist/examples/server.js') {
    throw new Error(`package.json "start" no longer ends with "node ... dist/examples/server.js": ${start}`)
  }
  return { env: Object.fromEntries(words.slice(0, assignments).map((w) => w.split('=') as [string, string])), flags: command.slice(1, -1) }
})()
export const EXAMPLE_NODE_FLAGS: string[] = START.flags
/** The environment variables `npm start` sets for the server (MALLOC_MMAP_THRESHOLD_). */
export const EXAMPLE_ENV: Record<string, string> = START.env

export interface ExampleServer {
  child: ChildProcessByStdio<null, Readable, Readable>
  /** `http://127.0.0.1:<port>`, as the server logged it. */
  address: string
  /** Everything the server wrote to stderr so far (Node's warnings go there). */
  stderr: () => string
  /** Everything the server wrote to stdout so far (its pino log). */
  stdout: () => string
  /** Resolves once the server's stdout matches `pattern` (rejects after `ms`). */
  waitFor: (pattern: RegExp, ms?: number) => Promise<RegExpExecArray>
  /** The exit code, once it exits. */
  exited: Promise<number | null>
}

/** The built example server (`npm start`) in a child process with `env`; resolves once it listens. */
export async function startExampleServer (env: NodeJS.ProcessEnv): Promise<ExampleServer> {
  // --warnings: under tap on Node 26, @tapjs/processinfo puts --no-warnings into every child's
  // NODE_OPTIONS (even an env without it), which would hide the server's own warnings; npm start has none.
  const child = spawn(process.execPath, ['--warnings', ...EXAMPLE_NODE_FLAGS, EXAMPLE_SERVER], { env: { ...EXAMPLE_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  const listeners = new Set<() => void>()
  child.stderr.on('data', (d) => { stderr += d })
  child.stdout.on('data', (d) => { stdout += d; for (const listener of listeners) listener() })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const waitFor = (pattern: RegExp, ms = 20_000) => new Promise<RegExpExecArray>((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(stdout)
      if (match !== null) { done(); resolve(match) }
    }
    const timer = setTimeout(() => { done(); reject(new Error(`no ${pattern} within ${ms} ms; stdout:\n${stdout}\nstderr:\n${stderr}`)) }, ms)
    const done = () => { clearTimeout(timer); listeners.delete(check) }
    listeners.add(check)
    check()
  })
  const address = await Promise.race([
    waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/).then((match) => match[1]),
    exited.then((code) => { throw new Error(`example server exited with ${code}: ${stderr}`) })
  ])
  return { child, address, stderr: () => stderr, stdout: () => stdout, waitFor, exited }
}

/** Signs the demo teacher in over HTTP, as a browser would; returns the Cookie header. */
export async function signInOverHttp (address: string): Promise<string> {
  const form = await fetch(`${address}/Security/login`)
  const body = new URLSearchParams({ _csrf: formToken(await form.text()), email: 'teacher@example.org', password: 'correct horse battery staple' })
  const res = await fetch(`${address}/Security/login`, { method: 'POST', body, headers: { cookie: cookiePairs(form).join('; ') }, redirect: 'manual' })
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`)
  return cookiePairs(res).find((c) => c.startsWith('sessionId='))!
}

/**
 * Signs the demo teacher in over HTTP, as a browser would; returns the session's Cookie pair, or the
 * status when the sign-in was not answered 303.
 */
export async function trySignInOverHttp (address: string): Promise<string | number> {
  const form = await fetch(`${address}/Security/login`)
  const pairs = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0])
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? ''
  const body = new URLSearchParams({ _csrf: token, email: 'teacher@example.org', password: 'correct horse battery staple' })
  const res = await fetch(`${address}/Security/login`, { method: 'POST', body, headers: { cookie: pairs(form).join('; ') }, redirect: 'manual' })
  await res.arrayBuffer()
  return res.status === 303 ? pairs(res).find((c) => c.startsWith('sessionId='))! : res.status
}
