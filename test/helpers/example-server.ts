import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { resolve } from 'node:path'
import type { Readable } from 'node:stream'

export const EXAMPLE_SERVER = resolve(__dirname, '../../dist/examples/server.js')

export interface ExampleServer {
  child: ChildProcessByStdio<null, Readable, Readable>
  /** `http://127.0.0.1:<port>`, as the server logged it. */
  address: string
  /** Everything the server wrote to stderr so far (Node's warnings go there). */
  stderr: () => string
}

/** The built example server (`npm start`) in a child process with `env`; resolves once it listens. */
export async function startExampleServer (env: NodeJS.ProcessEnv): Promise<ExampleServer> {
  const child = spawn(process.execPath, [EXAMPLE_SERVER], { env, stdio: ['ignore', 'pipe', 'pipe'] })
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
  return { child, address, stderr: () => stderr }
}
