import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Readable } from 'node:stream'

export const EXAMPLE_SERVER = resolve(__dirname, '../../dist/examples/server.js')

/**
 * Node's flags from package.json's `start` script (`... && node <flags> dist/examples/server.js`), so that
 * the tests run the server the way `npm start` does.
 */
export const EXAMPLE_NODE_FLAGS: string[] = (() => {
  const start: string = JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')).scripts.start
  const command = start.split('&&').pop()!.trim().split(/\s+/)
  if (command[0] !== 'node' || command[command.length - 1] !== 'dist/examples/server.js') {
    throw new Error(`package.json "start" no longer ends with "node ... dist/examples/server.js": ${start}`)
  }
  return command.slice(1, -1)
})()

export interface ExampleServer {
  child: ChildProcessByStdio<null, Readable, Readable>
  /** `http://127.0.0.1:<port>`, as the server logged it. */
  address: string
  /** Everything the server wrote to stderr so far (Node's warnings go there). */
  stderr: () => string
  /** Everything the server wrote to stdout so far (its pino log). */
  stdout: () => string
}

/** The built example server (`npm start`) in a child process with `env`; resolves once it listens. */
export async function startExampleServer (env: NodeJS.ProcessEnv): Promise<ExampleServer> {
  // --warnings: under tap on Node 26, @tapjs/processinfo puts --no-warnings into every child's
  // NODE_OPTIONS (even an env without it), which would hide the server's own warnings; npm start has none.
  const child = spawn(process.execPath, ['--warnings', ...EXAMPLE_NODE_FLAGS, EXAMPLE_SERVER], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)
      if (match !== null) resolve(match[1])
    })
    child.on('exit', (code) => reject(new Error(`example server exited with ${code}: ${stderr}`)))
  })
  return { child, address, stderr: () => stderr, stdout: () => stdout }
}

/**
 * Signs the demo teacher in over HTTP, as a browser would; returns the session's Cookie pair, or the
 * status when the sign-in was not answered 303.
 */
export async function signInOverHttp (address: string): Promise<string | number> {
  const form = await fetch(`${address}/Security/login`)
  const pairs = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0])
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? ''
  const body = new URLSearchParams({ _csrf: token, email: 'teacher@example.org', password: 'correct horse battery staple' })
  const res = await fetch(`${address}/Security/login`, { method: 'POST', body, headers: { cookie: pairs(form).join('; ') }, redirect: 'manual' })
  await res.arrayBuffer()
  return res.status === 303 ? pairs(res).find((c) => c.startsWith('sessionId='))! : res.status
}
