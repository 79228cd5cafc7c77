import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { signInThroughForm, startListeningApp } from './helpers/listening-app.js'

// The README's usage snippet, compiled with the project's TypeScript (strict, as an ES module) and run as
// written against the build: a host app that a reader can copy must work.

const root = resolve(__dirname, '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

function usageSnippet (markdown: string): string {
  const match = /<!-- usage-snippet -->\s*```ts\n([\s\S]*?)\n```/.exec(markdown)
  if (match === null) throw new Error('README.md has no ```ts block after <!-- usage-snippet -->')
  return match[1]
}

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

  const origin = await startListeningApp(t, join(dir, 'usage.mjs'), dir)

  const category = '/schools/resources/resources/maths/'
  const anonymous = await fetch(origin + category, { redirect: 'manual' })
  t.equal(anonymous.status, 302)
  t.equal(anonymous.headers.get('location'), `${origin}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  t.equal(anonymous.headers.get('set-cookie'), null, 'no session for an anonymous visitor')

  const signIn = await signInThroughForm(origin, category)
  t.equal(signIn.status, 303)
  t.equal(signIn.location, origin + category, 'back to the page asked for')
  const page = await fetch(origin + category, { headers: { cookie: signIn.cookie } })
  t.equal(page.status, 200)
  const body = await page.text()
  t.match(body, /<h1>Mathematics<\/h1>/)
  t.match(body, /Signed in as <strong>Demo Teacher<\/strong>/)
})
