import t from 'tap'
import { buildTestApp, signIn } from '../helpers/app.js'

// Finding 5 of issue 12: every response that shows who is signed in must not be stored by any cache.

t.test('every page that shows the member is private, no-store', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const urls = [
    '/schools/resources/', '/schools/resources', '/schools/resources/no-such-page', '/schools/resources/resources/maths/',
    '/schools/resources/resources/no-such-category/', '/Security/login'
  ]
  let shown = 0
  for (const url of urls) {
    for (const accept of ['text/html', 'application/json']) {
      const res = await app.inject({ url, headers: { cookie, accept } })
      if (!/Ada Teacher|"signedIn":true/.test(res.body)) continue
      shown++
      t.match(res.headers['cache-control'], /\bno-store\b/, `${accept} ${url} (${res.statusCode}) is no-store`)
    }
  }
  t.ok(shown >= 6, `${shown} responses showed the member`)
})

t.test('the index and the 404 page vary with the session, so they are never stored either', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  for (const url of ['/schools/resources/', '/schools/resources/nope']) {
    t.equal((await app.inject(url)).headers['cache-control'], 'private, no-store', url)
  }
})
