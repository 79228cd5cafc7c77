import t from 'tap'
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { BASE_URL, buildTestApp, conflictWarnings, sessionCookie, signIn } from '../helpers/app.js'

const LOGIN = `${BASE_URL}/Security/login?BackURL=`

t.test('anonymous category requests get 302 to the login page with the path in BackURL', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cases: Array<[string, string]> = [
    ['/schools/resources/resources/maths/', '%2Fschools%2Fresources%2Fresources%2Fmaths%2F'],
    ['/schools/resources/resources/english/', '%2Fschools%2Fresources%2Fresources%2Fenglish%2F'],
    ['/schools/resources/resources/no-such-category/', '%2Fschools%2Fresources%2Fresources%2Fno-such-category%2F'],
    // Without the trailing slash.
    ['/schools/resources/resources/maths', '%2Fschools%2Fresources%2Fresources%2Fmaths'],
    // With its query string, as received.
    ['/schools/resources/resources/maths/?year=7&subject=Mathematics', '%2Fschools%2Fresources%2Fresources%2Fmaths%2F%3Fyear%3D7%26subject%3DMathematics'],
    // Characters PHP's urlencode escapes (%XX upper case) and percent signs already in the path.
    ['/schools/resources/resources/year%207~notes/', '%2Fschools%2Fresources%2Fresources%2Fyear%25207%7Enotes%2F'],
    ["/schools/resources/resources/it's(new)!*/", '%2Fschools%2Fresources%2Fresources%2Fit%27s%28new%29%21%2A%2F'],
    // Any slug shape, so that nothing tells which categories exist.
    ['/schools/resources/resources/UPPER_case.v2/', '%2Fschools%2Fresources%2Fresources%2FUPPER_case.v2%2F'],
    ['/schools/resources/resources/a/b/c/', '%2Fschools%2Fresources%2Fresources%2Fa%2Fb%2Fc%2F'],
    [`/schools/resources/resources/${'x'.repeat(300)}/`, `%2Fschools%2Fresources%2Fresources%2F${'x'.repeat(300)}%2F`]
  ]
  for (const [path, backUrl] of cases) {
    const res = await app.inject(path)
    t.equal(res.statusCode, 302, path)
    t.equal(res.headers.location, LOGIN + backUrl, `Location for ${path}`)
    t.equal(res.headers['cache-control'], 'no-store')
    t.equal(res.body, '')
  }
})

t.test('HEAD behaves like GET', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'HEAD', url: '/schools/resources/resources/maths/' })
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, `${LOGIN}%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  const cookie = await signIn(app)
  const page = await app.inject({ method: 'HEAD', url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(page.statusCode, 200)
  t.equal(page.body, '')
  t.match(page.headers['content-type'], /text\/html/)
})

t.test('spec Errors rule 1: the index redirect is refused with one warning, the login redirect reaches the client', async (t) => {
  const { app, catalog } = await buildTestApp()
  t.teardown(() => app.close())
  const warnings = await conflictWarnings(async () => {
    for (const slug of ['maths', 'science']) {
      const res = await app.inject(`/schools/resources/resources/${slug}/`)
      t.equal(res.statusCode, 302)
      t.equal(res.headers.location, `${LOGIN}%2Fschools%2Fresources%2Fresources%2F${slug}%2F`)
    }
  })
  t.equal(warnings.length, 2, 'exactly one warning per request')
  t.equal(warnings[0].name, 'UserWarning')
  t.equal(warnings[0].message,
    'Already directed to https://www.example.org/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F; now trying to direct to /schools/resources/')
  t.equal(warnings[1].message,
    'Already directed to https://www.example.org/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fscience%2F; now trying to direct to /schools/resources/')
  t.equal(catalog.lookups, 0, 'an anonymous request costs no catalog lookup')
})

t.test('anonymous visitors leave nothing in the session store and get no cookie', async (t) => {
  const { app, store } = await buildTestApp()
  t.teardown(() => app.close())
  for (let i = 0; i < 5; i++) {
    const res = await app.inject(`/schools/resources/resources/maths/?i=${i}`)
    t.equal(res.headers['set-cookie'], undefined)
  }
  t.equal(store.sessions.size, 0)
  t.equal(store.sets, 0)
})

t.test('the route handler never runs for an anonymous visitor', async (t) => {
  let rendered = 0
  const { app } = await buildTestApp({
    plugin: {
      views: {
        category: ({ category }) => {
          rendered++
          return { title: category.title, body: 'members only' }
        }
      }
    }
  })
  t.teardown(() => app.close())
  await app.inject('/schools/resources/resources/maths/')
  await app.inject({ method: 'HEAD', url: '/schools/resources/resources/maths' })
  t.equal(rendered, 0)
  const cookie = await signIn(app)
  const res = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(rendered, 1, 'the handler does run for a member')
  t.match(res.body, /members only/)
})

t.test('members see the category page; HTML by default, JSON on request', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const warnings = await conflictWarnings(async () => {
    const res = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
    t.equal(res.headers['cache-control'], 'private, no-store')
    t.match(res.body, /<h1>Mathematics<\/h1>/)
    t.match(res.body, /Fraction wall/)
    t.match(res.body, /Signed in as <strong>Ada Teacher<\/strong>/)
    const noSlash = await app.inject({ url: '/schools/resources/resources/maths', headers: { cookie } })
    t.equal(noSlash.statusCode, 200)
    const withoutToken = (body: string) => body.replace(/name="_csrf" value="[^"]+"/, '')
    t.equal(withoutToken(noSlash.body), withoutToken(res.body), 'the same page without the trailing slash')
  })
  t.same(warnings, [], 'members trigger no warning')

  const json = await app.inject({ url: '/schools/resources/resources/science/', headers: { cookie, accept: 'application/json' } })
  t.equal(json.statusCode, 200)
  t.match(json.headers['content-type'], /application\/json/)
  const body = json.json()
  t.same(body.category, { slug: 'science', title: 'Science', description: 'Biological, chemical, earth and space, and physical sciences, with practical investigations.' })
  t.equal(body.resources.length, 3)
  t.same(Object.keys(body.resources[0]).sort(), ['format', 'id', 'subject', 'summary', 'title', 'url', 'yearLevels'])
})

t.test('a member asking for an unknown or malformed category is sent to the section index', async (t) => {
  const { app, catalog } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const warnings = await conflictWarnings(async () => {
    for (const path of ['/schools/resources/resources/astrology/', '/schools/resources/resources/Maths/', '/schools/resources/resources/maths/extra/', '/schools/resources/resources/']) {
      const res = await app.inject({ url: path, headers: { cookie } })
      t.equal(res.statusCode, 302, path)
      t.equal(res.headers.location, '/schools/resources/', path)
      t.equal(res.headers['cache-control'], 'no-store')
    }
  })
  t.same(warnings, [])
  t.equal(catalog.lookups, 1, 'only the well-formed slug was looked up')
})

t.test('without baseUrl the Location uses the request origin; behind a proxy trustProxy decides', async (t) => {
  const direct = await buildTestApp({ plugin: { baseUrl: undefined } })
  t.teardown(() => direct.app.close())
  let res = await direct.app.inject({ url: '/schools/resources/resources/maths/', headers: { host: 'school.test:8080' } })
  t.equal(res.headers.location, 'http://school.test:8080/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F')
  res = await direct.app.inject({ url: '/schools/resources/resources/maths/', headers: { host: 'school.test', 'x-forwarded-host': 'evil.test', 'x-forwarded-proto': 'https' } })
  t.equal(res.headers.location, 'http://school.test/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F', 'forwarded headers ignored without trustProxy')

  const proxied = await buildTestApp({ plugin: { baseUrl: undefined }, fastify: { trustProxy: true } })
  t.teardown(() => proxied.app.close())
  res = await proxied.app.inject({ url: '/schools/resources/resources/maths/', headers: { host: 'internal:3000', 'x-forwarded-host': 'www.school.test', 'x-forwarded-proto': 'https' } })
  t.equal(res.headers.location, 'https://www.school.test/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F')
})

t.test('an HTTP/1.0 request without a Host header still gets a well-formed Location', async (t) => {
  const { app } = await buildTestApp({ plugin: { baseUrl: undefined } })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET /schools/resources/resources/maths/ HTTP/1.0\r\n\r\n'))
    let data = ''
    socket.on('data', (chunk) => { data += chunk })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
  })
  t.match(raw, /^HTTP\/1\.[01] 302/)
  t.match(raw, /\r\nlocation: http:\/\/localhost\/Security\/login\?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F\r\n/i)
})

t.test('getMember lets a host with its own authentication decide who is signed in', async (t) => {
  const { app } = await buildTestApp({
    plugin: {
      signIn: false,
      authenticate: undefined,
      getMember: (request) => request.headers['x-staff-id'] === 's-9' ? { id: 's-9', name: 'Staff Nine' } : null
    }
  })
  t.teardown(() => app.close())
  const anonymous = await app.inject('/schools/resources/resources/maths/')
  t.equal(anonymous.statusCode, 302)
  t.equal(anonymous.headers.location, `${LOGIN}%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
  const staff = await app.inject({ url: '/schools/resources/resources/maths/', headers: { 'x-staff-id': 's-9' } })
  t.equal(staff.statusCode, 200)
  t.match(staff.body, /Signed in as <strong>Staff Nine<\/strong>/)
  t.notMatch(staff.body, /Sign out/, 'no logout button when the plugin does not own sign-in')
  const login = await app.inject('/Security/login')
  t.equal(login.statusCode, 404, 'signIn: false serves no login route')
})

t.test('sessionKey chooses where the member lives; malformed members count as signed out', async (t) => {
  const { app } = await buildTestApp({
    plugin: { sessionKey: 'schoolMember' },
    extend: (app) => {
      app.get('/plant', async (request) => {
        request.session.set('member', { id: 'x', name: 'Wrong key' })
        request.session.set('schoolMember' as 'member', { id: '', name: 'No id' })
        return 'ok'
      })
    }
  })
  t.teardown(() => app.close())
  const planted = await app.inject('/plant')
  const wrongKey = sessionCookie(planted)!
  const res = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: wrongKey } })
  t.equal(res.statusCode, 302, 'a member under another key, or one without an id, is not signed in here')
  const cookie = await signIn(app)
  const ok = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(ok.statusCode, 200)
})

t.test('outside the session cookie path nobody is signed in, and nothing breaks', async (t) => {
  const { app } = await buildTestApp({ session: { cookie: { secure: false, path: '/members' } } })
  t.teardown(() => app.close())
  const res = await app.inject('/schools/resources/resources/maths/')
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, `${LOGIN}%2Fschools%2Fresources%2Fresources%2Fmaths%2F`)
})

t.test('a client that half-closes its connection cannot make a redirected request send twice', async (t) => {
  // Regression: an async onRequest hook that returns the reply waits for the response to finish; a
  // client that half-closes (FIN right after its request) ends that wait early, while the async store
  // is still saving in onSend, and the page handler then ran and sent again: ERR_HTTP_HEADERS_SENT,
  // an uncaught exception. The guard is callback-style so that a redirected request stops there.
  let rendered = 0
  const logged: string[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { logged.push(String(chunk)); cb() } })
  const { app } = await buildTestApp({
    fastify: { logger: { level: 'warn', stream } },
    plugin: { views: { category: ({ category }) => { rendered++; return { title: category.title, body: '' } } } }
  })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const cookie = await signIn(app)
  for (const path of ['/schools/resources/resources/nope/', '/schools/resources/resources/Maths/', '/schools/resources/resources/%00/']) {
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nCookie: ${cookie}\r\n\r\n`))
      socket.on('close', () => resolve())
      socket.on('error', () => resolve())
      socket.resume()
    })
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(rendered, 0, 'the page handler never ran')
  t.same(logged.filter((line) => /"level":50|already sent|ERR_HTTP_HEADERS_SENT/.test(line)), [], 'no error, no second send')
  const page = await fetch(`http://127.0.0.1:${port}/schools/resources/resources/maths/`, { headers: { cookie } })
  t.equal(page.status, 200, 'the server is still up')
  t.equal(rendered, 1)
})
