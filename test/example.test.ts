import t from 'tap'
import { once } from 'node:events'
import { Agent, request as httpRequest } from 'node:http'
import { buildApp } from '../examples/app.js'
import { hashPassword, verifyPassword } from '../examples/demo-member.js'
import { postLogin } from './helpers/app.js'
import { signInOverHttp, startExampleServer } from './helpers/example-server.js'

const config = { sessionSecret: 's'.repeat(40), demoEmail: 'teacher@example.org', demoPassword: 'correct horse battery staple' }

t.test('demo passwords are scrypt hashes that verify only the right password', async (t) => {
  const hash = await hashPassword('pa55word')
  t.match(hash, /^scrypt\$32768\$8\$3\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
  t.not(hash, await hashPassword('pa55word'), 'salted')
  t.equal(await verifyPassword('pa55word', hash), true)
  t.equal(await verifyPassword('pa55words', hash), false)
  await t.rejects(verifyPassword('x', 'md5$abc'), /unknown password hash format/)
})

t.test('the example app: the whole journey with the demo member', async (t) => {
  const app = await buildApp(config)
  t.teardown(() => app.close())
  const maths = '/schools/resources/resources/maths/'
  const anonymous = await app.inject(maths)
  t.equal(anonymous.statusCode, 302)
  t.equal(anonymous.headers.location, 'http://localhost:80/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F')
  t.equal(anonymous.headers['set-cookie'], undefined)

  const withoutToken = (body: string) => body.replace(/name="_csrf" value="[^"]+"/, '')
  const wrong = await postLogin(app, { email: config.demoEmail, password: 'nope' })
  t.equal(wrong.statusCode, 401)
  const unknown = await postLogin(app, { email: 'someone@example.org', password: config.demoPassword })
  t.equal(unknown.statusCode, 401)
  t.equal(withoutToken(unknown.body).replace('someone@example.org', config.demoEmail), withoutToken(wrong.body), 'an unknown email gets the same page as a wrong password')

  const ok = await postLogin(app, { email: 'Teacher@Example.org', password: config.demoPassword, BackURL: maths })
  t.equal(ok.statusCode, 303)
  t.equal(ok.headers.location, `http://localhost${maths}`)
  const cookie = ok.cookies.find((c) => c.name === 'sessionId')!
  t.equal(cookie.httpOnly, true)
  t.equal(cookie.sameSite, 'Lax')
  t.ok(Math.abs(new Date(cookie.expires!).getTime() - Date.now() - 8 * 60 * 60 * 1000) < 60_000, 'expires in 8 hours')
  const page = await app.inject({ url: maths, headers: { cookie: `sessionId=${cookie.value}` } })
  t.equal(page.statusCode, 200)
  t.match(page.body, '<title>Mathematics | Riverside School</title>')
  t.match(page.body, 'Demo Teacher')

  const home = await app.inject('/')
  t.equal(home.headers.location, '/schools/resources/')
})

t.test('the example app: the demo parent is refused the staff room and sees it marked; the demo teacher (staff) opens it', async (t) => {
  const parent = { email: 'parent@example.org', password: 'parents evening in the hall' }
  const app = await buildApp({ ...config, demoParent: parent })
  t.teardown(() => app.close())
  const staffRoom = '/schools/resources/resources/staff-room/'
  const signedIn = async (email: string, password: string) => {
    const res = await postLogin(app, { email, password })
    t.equal(res.statusCode, 303, `${email} signs in`)
    return `sessionId=${res.cookies.find((c) => c.name === 'sessionId')!.value}`
  }
  t.equal((await postLogin(app, { email: parent.email, password: config.demoPassword })).statusCode, 401, 'each member has a password of its own')

  const asParent = await signedIn(parent.email, parent.password)
  const refused = await app.inject({ url: staffRoom, headers: { cookie: asParent } })
  t.equal(refused.statusCode, 403)
  t.match(refused.body, '<h1>You don&#39;t have access to Staff room</h1>')
  t.match(refused.body, 'Signed in as <strong>Demo Parent</strong>')
  const index = await app.inject({ url: '/schools/resources/', headers: { cookie: asParent, accept: 'application/json' } })
  t.same(index.json().categories.filter((c: { locked: boolean }) => c.locked).map((c: { slug: string }) => c.slug), ['staff-room'], 'only the staff room is locked for the parent')
  t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: asParent } })).statusCode, 200, 'the other categories open')

  const asTeacher = await signedIn(config.demoEmail, config.demoPassword)
  const staff = await app.inject({ url: staffRoom, headers: { cookie: asTeacher } })
  t.equal(staff.statusCode, 200)
  t.match(staff.body, '<h1>Staff room</h1>')
  t.match(staff.body, 'Unit planning template')

  // The staff room's file and the site's own staff page, behind the same audience.
  const guide = '/schools/resources/files/staff-room/staff-reporting-guide/reporting-guide.pdf'
  const noticeboard = '/staff/noticeboard'
  for (const path of [guide, noticeboard]) {
    const visitor = await app.inject(path)
    t.equal(visitor.statusCode, 302, `visitor: ${path}`)
    t.equal(visitor.headers.location, `http://localhost:80/Security/login?BackURL=${encodeURIComponent(path)}`)
    t.equal(visitor.headers['set-cookie'], undefined)
    t.equal((await app.inject({ url: path, headers: { cookie: asParent } })).statusCode, 403, `parent: ${path}`)
  }
  const file = await app.inject({ url: guide, headers: { cookie: asTeacher } })
  t.equal(file.statusCode, 200)
  t.equal(file.headers['content-type'], 'application/pdf')
  t.equal(file.headers['content-disposition'], 'attachment; filename=reporting-guide.pdf')
  t.equal(file.rawPayload.subarray(0, 8).toString('latin1'), '%PDF-1.4')
  const notices = await app.inject({ url: noticeboard, headers: { cookie: asTeacher } })
  t.equal(notices.statusCode, 200)
  t.match(notices.body, '<h1>Staff noticeboard</h1>')
  t.match(notices.body, 'Signed in as <strong>Demo Teacher</strong>')
  t.match((await app.inject({ url: noticeboard, headers: { cookie: asParent } })).body, 'You don&#39;t have access to the staff noticeboard')

  const teacherOnly = await buildApp(config)
  t.teardown(() => teacherOnly.close())
  t.equal((await postLogin(teacherOnly, parent)).statusCode, 401, 'without demoParent there is no parent account')
})

t.test('the example server as npm start runs it: env settings, the first redirect conflict logged in full and the rest counted, clean shutdown', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', BASE_URL: 'https://school.test', SMTP_URL: 'smtp://127.0.0.1:9', LOG_LEVEL: 'info' }
  delete env.SESSION_SECRET
  delete env.REDIS_URL // the in-memory default; test/redis/example-server.test.ts runs it with Redis
  const { child, address, stderr, stdout } = await startExampleServer(env)
  t.teardown(() => { child.kill('SIGKILL') })
  const science = '/schools/resources/resources/science/'
  const conflict = (path: string) => `Already directed to https://school.test/Security/login?BackURL=${encodeURIComponent(path)}; now trying to direct to /schools/resources/`
  for (const path of [science, science, '/schools/resources/resources/maths/']) {
    const res = await fetch(`${address}${path}`, { redirect: 'manual' })
    t.equal(res.status, 302)
    t.equal(res.headers.get('location'), `https://school.test/Security/login?BackURL=${encodeURIComponent(path)}`)
  }
  const index = await fetch(`${address}/schools/resources/`)
  t.equal(index.status, 200)
  t.match(await index.text(), 'Riverside School')
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'SIGTERM closes the server cleanly')
  t.match(stderr(), /\[EXAMPLE_NO_SESSION_SECRET\] UserWarning: SESSION_SECRET is not set/)
  t.notMatch(stderr(), 'FST_SR_REDIRECT_CONFLICT', 'Node does not print the redirect-conflict warnings (--disable-warning in npm start)')

  const logs = stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  const conflicts = logs.filter((l) => l.code === 'FST_SR_REDIRECT_CONFLICT')
  t.equal(conflicts.length, 2, 'the first conflict, then one summary written at shutdown')
  t.equal(conflicts[0].level, 40)
  t.equal(conflicts[0].msg, conflict(science), 'the first in full, with the warning\'s exact text')
  t.type(conflicts[0].reqId, 'string')
  t.equal(conflicts[1].level, 40)
  t.equal(conflicts[1].count, 2, 'the two after it are counted')
  t.match(conflicts[1].msg, '2 more redirect conflicts in the last ')
  t.match(conflicts[1].msg, `; the latest: ${conflict('/schools/resources/resources/maths/')}`)
})

t.test('an https site: every cookie the example sends is Secure, behind a TLS proxy too (issue 12, item 4)', async (t) => {
  // The TLS proxy's address (inject() connects from 127.0.0.1), as docs/security.md recommends.
  const app = await buildApp({ ...config, baseUrl: 'https://school.test', trustProxy: '127.0.0.1' })
  t.teardown(() => app.close())
  const proxied = { 'x-forwarded-proto': 'https' }
  const form = await app.inject({ url: '/Security/login', headers: proxied })
  const ok = await postLogin(app, { email: config.demoEmail, password: config.demoPassword }, { headers: proxied, form: { cookie: form.cookies.map((c) => `${c.name}=${c.value}`).join('; '), token: /name="_csrf" value="([^"]+)"/.exec(form.body)![1] } })
  t.equal(ok.statusCode, 303)
  // The sign-in's deletion of the CSRF cookie included: a browser ignores a deletion of a __Host- cookie without Secure.
  const cookies = [...form.cookies, ...ok.cookies]
  t.ok(cookies.some((c) => c.name === 'sessionId') && cookies.some((c) => c.name === '__Host-_csrf' && c.value !== ''))
  t.ok(ok.cookies.some((c) => c.name === '__Host-_csrf' && c.value === ''), 'sign-in drops the CSRF cookie')
  for (const c of cookies) t.equal(c.secure, true, `${c.name}${c.value === '' ? ' (deleted)' : ''} is Secure`)
  // A request that reached Node over plain http on an https site (no proxy header) gets no cookie without it.
  const plain = await postLogin(app, { email: config.demoEmail, password: config.demoPassword })
  t.notOk(plain.cookies.some((c) => c.secure !== true), 'no cookie without Secure')
})

t.test('the example sets request and connection timeouts (issue 12, item 7)', async (t) => {
  const app = await buildApp(config)
  t.teardown(() => app.close())
  t.equal(app.server.requestTimeout, 30_000, 'a whole request must arrive within 30 s (Fastify\'s default 0 waits forever)')
  t.equal(app.server.timeout, 60_000, 'an idle socket is closed after 60 s')
  t.ok(app.server.headersTimeout <= 30_000, `headers within ${app.server.headersTimeout} ms`)
  const custom = await buildApp({ ...config, requestTimeoutMs: 5000, connectionTimeoutMs: 7000 })
  t.teardown(() => custom.close())
  t.same([custom.server.requestTimeout, custom.server.timeout, custom.server.headersTimeout], [5000, 7000, 5000])
})

t.test('sign-ins accepted just before SIGTERM are all answered, and any 503 says when to retry (issue 12, item 10)', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SESSION_SECRET: 's'.repeat(40) }
  delete env.REDIS_URL
  const { child, address } = await startExampleServer(env)
  t.teardown(() => { child.kill('SIGKILL') })
  const form = await fetch(`${address}/Security/login`)
  const cookie = form.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]
  const agent = new Agent({ keepAlive: true, maxSockets: 40 })
  t.teardown(() => agent.destroy())
  const signIn = (i: number) => new Promise<{ status: number, retryAfter: string | undefined } | string>((resolve) => {
    const body = new URLSearchParams({ _csrf: token, email: `visitor${i}@example.org`, password: 'wrong' }).toString()
    const req = httpRequest(`${address}/Security/login`, { method: 'POST', agent, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined }))
    })
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
    req.end(body)
  })
  const exited = once(child, 'exit')
  const answers = Array.from({ length: 40 }, (_, i) => signIn(i))
  await new Promise((resolve) => setTimeout(resolve, 10))
  child.kill('SIGTERM')
  const results = await Promise.all(answers)
  const [code] = await exited
  const failed = results.filter((r) => typeof r === 'string')
  t.same(failed, [], `all 40 answered (${results.map((r) => typeof r === 'string' ? r : r.status).join(' ')})`)
  const bare503 = results.filter((r) => typeof r !== 'string' && r.status === 503 && r.retryAfter === undefined)
  t.same(bare503, [], 'no 503 without Retry-After')
  t.equal(code, 0, 'and the server exits 0')
})

t.test('IDLE_TIMEOUT_MS reaches the section: a classroom browser left alone is signed out, the login page says why', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SESSION_SECRET: 's'.repeat(40), IDLE_TIMEOUT_MS: '1000' }
  delete env.REDIS_URL
  const { child, address } = await startExampleServer(env)
  t.teardown(() => { child.kill('SIGKILL') })
  const cookie = await signInOverHttp(address)
  const maths = `${address}/schools/resources/resources/maths/`
  t.equal((await fetch(maths, { headers: { cookie }, redirect: 'manual' })).status, 200, 'signed in')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const res = await fetch(maths, { headers: { cookie }, redirect: 'manual' })
  t.equal(res.status, 302, 'a second without a request: the login redirect')
  const notice = res.headers.getSetCookie().find((c) => c.startsWith('sr_notice='))
  t.match(notice, /^sr_notice=idle;/)
  const login = await fetch(`${address}/Security/login`, { headers: { cookie: 'sr_notice=idle' } })
  t.match(await login.text(), 'You were signed out after 1 second without activity.')
})

t.test('REMEMBER_ME_MS reaches the section: a remembered browser comes back without its session; off: no box', async (t) => {
  const app = await buildApp({ ...config, rememberMeMs: 24 * 60 * 60 * 1000 })
  t.teardown(() => app.close())
  const ok = await postLogin(app, { email: config.demoEmail, password: config.demoPassword, remember: '1' })
  const remember = ok.cookies.find((c) => c.name === 'sr_remember')!
  t.equal(remember.maxAge, 24 * 60 * 60, 'a day')
  const back = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: `sr_remember=${remember.value}` } })
  t.equal(back.statusCode, 200, 'signed in from the token alone')
  const off = await buildApp({ ...config, rememberMeMs: false })
  t.teardown(() => off.close())
  t.notMatch((await off.inject('/Security/login')).body, 'Keep me signed in')
})
