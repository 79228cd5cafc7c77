import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { createServer } from 'node:net'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../examples/app.js'
import { main } from '../src/cli.js'

export interface CliRun { code: number, stdout: string, stderr: string }

/** The command in-process, its output captured; `tty` makes stderr look like a terminal. */
export async function runCli (args: string[], tty = false, env: Record<string, string> = {}): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const code = await main(args, {
    stdout: { write: (s: string) => { stdout += s } },
    stderr: { write: (s: string) => { stderr += s }, isTTY: tty },
    env
  })
  return { code, stdout, stderr }
}

/** A temporary directory, removed when the test ends, and a way to write files into it. */
export function tempDir (t: Test): { dir: string, file: (name: string, text: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'parity-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return { dir, file: (name, text) => { const path = join(dir, name); writeFileSync(path, text); return path } }
}

/** The example app listening on a free port, writing `baseUrl` in its Locations when given. */
export async function startExample (t: Test, baseUrl?: string): Promise<string> {
  const app = await buildApp({ sessionSecret: 's'.repeat(40), demoEmail: 'teacher@example.org', demoPassword: 'correct horse battery staple', baseUrl })
  t.teardown(() => app.close())
  return await app.listen({ port: 0, host: '127.0.0.1' })
}

export const CATEGORY_SLUGS = ['maths', 'english', 'science', 'humanities', 'wellbeing', 'staff-room']

/** The spec's addresses: the category pages, the section index and the login page with its BackURL. */
export const SPEC_ADDRESSES = [
  ...CATEGORY_SLUGS.map((slug) => `/schools/resources/resources/${slug}/`),
  '/schools/resources/',
  '/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F'
]

/** An origin on this machine where nothing listens (a port just freed). */
export async function closedOrigin (scheme = 'http'): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return `${scheme}://127.0.0.1:${port}`
}
