import { spawn, type ChildProcess } from 'node:child_process'
import type { Test } from 'tap'

/**
 * Starts a Node program that listens on PORT (given 0 here) and logs Fastify's "Server listening at"
 * line; resolves to its origin. The process is killed when the test ends.
 */
export function startListeningApp (t: Test, file: string, cwd: string, env: Record<string, string> = {}): Promise<string> {
  return startListening(t, file, cwd, env).then(({ origin }) => origin)
}

/** startListeningApp, also giving the process (to signal it). */
export function startListening (t: Test, file: string, cwd: string, env: Record<string, string> = {}): Promise<{ origin: string, child: ChildProcess }> {
  const child = spawn(process.execPath, [file], { cwd, env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill() })
  return new Promise((resolve, reject) => {
    let out = ''
    const read = (chunk: Buffer) => {
      out += chunk
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m !== null) resolve({ origin: m[1], child })
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}: ${out}`)))
  })
}

/** Signs in through the login form as the demo teacher, asking to come back to `backUrl`. */
export async function signInThroughForm (origin: string, backUrl: string): Promise<{ status: number, location: string | null, cookie: string }> {
  const form = await fetch(`${origin}/Security/login?BackURL=${encodeURIComponent(backUrl)}`)
  const formCookie = cookiePairs(form).join('; ')
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]
  const res = await fetch(`${origin}/Security/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: formCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: token, email: 'teacher@example.org', password: 'correct horse battery staple', BackURL: backUrl }).toString()
  })
  return { status: res.status, location: res.headers.get('location'), cookie: cookiePairs(res).find((c) => c.startsWith('sessionId='))! }
}

/** The `name=value` pairs a response set, leaving out the ones it cleared. */
export function cookiePairs (res: Response): string[] {
  return res.headers.getSetCookie().map((c) => c.split(';')[0]).filter((pair) => !pair.endsWith('='))
}
