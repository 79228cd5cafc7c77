import t from 'tap'
import { BASE_URL, TEACHER, buildTestApp, postLogin } from '../helpers/app.js'

const MATHS = '/schools/resources/resources/maths/'

t.test('with baseUrl no Location reflects the Host header', async (t) => {
  const { app } = await buildTestApp({ fastify: { trustProxy: true } })
  t.teardown(() => app.close())
  const hostile = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }
  const anonymous = await app.inject({ url: MATHS, headers: hostile })
  t.equal(anonymous.headers.location, `${BASE_URL}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  const login = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, BackURL: MATHS }, { headers: hostile })
  t.equal(login.headers.location, `${BASE_URL}${MATHS}`)
  const absolute = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, BackURL: `http://evil.example${MATHS}` }, { headers: hostile })
  t.equal(absolute.headers.location, `${BASE_URL}/schools/resources/`, 'an absolute URL on the Host-header origin is not this site: the index on baseUrl instead')
})

t.test('without baseUrl a malformed Host header is a clear 400, never a Location', async (t) => {
  const { app } = await buildTestApp({ plugin: { baseUrl: undefined } })
  t.teardown(() => app.close())
  for (const host of ['evil.example/phish?', 'a b', 'user@evil.example', 'evil.example:80:80', '-bad.example', `${'a'.repeat(300)}.example`]) {
    const res = await app.inject({ url: MATHS, headers: { host } })
    t.equal(res.statusCode, 400, host)
    t.equal(res.json().code, 'FST_SR_BAD_HOST', host)
    t.equal(res.headers.location, undefined)
  }
  for (const host of ['school.test', 'school.test:8080', '127.0.0.1:3000', '[::1]:3000', 'localhost']) {
    const res = await app.inject({ url: MATHS, headers: { host } })
    t.equal(res.headers.location, `http://${host}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`, host)
  }
})

t.test('without baseUrl a forwarded scheme other than http or https is a clear 400, never a Location (issue 18)', async (t) => {
  // The proxy's address is trusted, so its X-Forwarded-Proto counts, and so does a client's passed through it.
  const { app } = await buildTestApp({ plugin: { baseUrl: undefined }, fastify: { trustProxy: '127.0.0.1' } })
  t.teardown(() => app.close())
  const host = 'school.test'
  for (const proto of ['javascript', 'data', 'ftp', 'https:evil', 'http, javascript', 'java\tscript', 'x'.repeat(300)]) {
    const headers = { host, 'x-forwarded-proto': proto }
    for (const res of [
      await app.inject({ url: MATHS, headers }),
      await app.inject({ url: '/Security/login?BackURL=%2Fschools%2Fresources%2F', headers }),
      await postLogin(app, { email: TEACHER.email, password: TEACHER.password, BackURL: MATHS }, { headers })
    ]) {
      t.equal(res.statusCode, 400, `${proto}: 400`)
      t.equal(res.json().code, 'FST_SR_BAD_PROTOCOL')
      t.ok(res.json().message.length < 200, 'the value quoted, cut short')
      t.equal(res.headers.location, undefined)
    }
  }
  for (const [proto, scheme] of [['https', 'https'], ['HTTPS', 'https'], ['http', 'http'], ['ftp, https', 'https']]) {
    const res = await app.inject({ url: MATHS, headers: { host, 'x-forwarded-proto': proto } })
    t.equal(res.headers.location, `${scheme}://${host}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`, proto)
  }
})
