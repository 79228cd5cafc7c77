import t from 'tap'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { compileSnippets, snippet } from './helpers/doc-snippets.js'
import { signInThroughForm, startListeningApp } from './helpers/listening-app.js'

// The README's usage snippet, compiled with the project's TypeScript (strict, as an ES module) and run as
// written against the build: a host app that a reader can copy must work.

const root = resolve(__dirname, '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

t.test('the usage snippet compiles and serves the section as the spec says', async (t) => {
  const dir = compileSnippets(t, { 'usage.mts': snippet(readme, 'usage-snippet') })

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
