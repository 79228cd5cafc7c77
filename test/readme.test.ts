import t from 'tap'
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

// The README's usage snippet, compiled with the project's TypeScript (strict, as an ES module) and run
// as written: a host app that a reader can copy must work.

const root = resolve(__dirname, '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

export function usageSnippet (markdown: string): string {
  const match = /<!-- usage-snippet -->\s*```ts\n([\s\S]*?)\n```/.exec(markdown)
  if (match === null) throw new Error('README.md has no ```ts block after <!-- usage-snippet -->')
  return match[1]
}

t.test('the README is for users: at most 15 KB', async (t) => {
  t.ok(Buffer.byteLength(readme) <= 15 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes`)
  for (const heading of ['## Install', '## Usage', '## Options', '## API', '## Errors', '## Security']) {
    t.ok(readme.includes(`\n${heading}`), heading)
  }
})

t.test('every public export is named in the README', async (t) => {
  const pkg = await import('../lib/index.js') as Record<string, unknown>
  for (const name of Object.keys(pkg).filter((n) => n !== 'default')) t.match(readme, new RegExp(`\\b${name}\\b`), name)
  for (const name of ['RedisSessionStore', 'RedisAttemptStore', 'redisRateLimitStore']) t.match(readme, new RegExp(`\\b${name}\\b`), name)
})

t.test('the usage snippet compiles and serves the section as the spec says', async (t) => {
  // Inside the package, so that `fastify-schools-resources` resolves to this build by its own name.
  const dir = mkdtempSync(join(root, 'test', '.snippet-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'usage.mts'), usageSnippet(readme))
  execFileSync(process.execPath, [
    join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
    '--ignoreConfig', '--types', 'node', '--skipLibCheck', '--rootDir', dir, '--outDir', dir, join(dir, 'usage.mts')
  ], { cwd: root, stdio: 'pipe' })

  const child = spawn(process.execPath, [join(dir, 'usage.mjs')], { cwd: dir, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill() })
  const origin = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m !== null) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`the snippet exited with ${code}: ${out}`)))
  })

  const category = '/schools/resources/resources/maths/'
  const anonymous = await fetch(origin + category, { redirect: 'manual' })
  t.equal(anonymous.status, 302)
  t.equal(anonymous.headers.get('location'), `${origin}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  t.equal(anonymous.headers.get('set-cookie'), null, 'no session for an anonymous visitor')

  const form = await fetch(anonymous.headers.get('location')!)
  const cookie = form.headers.get('set-cookie')!.split(';')[0]
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]
  const signIn = await fetch(`${origin}/Security/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: token, email: 'teacher@example.org', password: 'correct horse battery staple', BackURL: category }).toString()
  })
  t.equal(signIn.status, 303)
  t.equal(signIn.headers.get('location'), origin + category, 'back to the page asked for')
  const member = signIn.headers.get('set-cookie')!.split(';')[0]
  const page = await fetch(origin + category, { headers: { cookie: member } })
  t.equal(page.status, 200)
  const body = await page.text()
  t.match(body, /<h1>Mathematics<\/h1>/)
  t.match(body, /Signed in as <strong>Demo Teacher<\/strong>/)
})
