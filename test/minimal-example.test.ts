import t from 'tap'
import { resolve } from 'node:path'
import { signInThroughForm, startListeningApp } from './helpers/listening-app.js'

// examples/minimal.mts, built as `npm run build` builds it, is a working host app.
const root = resolve(__dirname, '..')

t.test('the minimal host example redirects, signs in and serves the page', async (t) => {
  const origin = await startListeningApp(t, resolve(root, 'dist/examples/minimal.mjs'), root)
  const category = '/schools/resources/resources/science/'
  const anonymous = await fetch(origin + category, { redirect: 'manual' })
  t.equal(anonymous.status, 302)
  t.equal(anonymous.headers.get('location'), `${origin}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fscience%2F`)
  const signIn = await signInThroughForm(origin, category)
  t.equal(signIn.status, 303)
  t.equal(signIn.location, origin + category)
  const page = await fetch(origin + category, { headers: { cookie: signIn.cookie } })
  t.equal(page.status, 200)
  t.match(await page.text(), /<h1>Science<\/h1>/)
})
