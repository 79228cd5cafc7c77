import t from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import helmet from '@fastify/helmet'
import csrfProtection from '@fastify/csrf-protection'
import { Signer } from '@fastify/cookie'
import { MemoryStore } from '@fastify/session'
import schoolsResources, { CachedSigner, resourcesSession, type Catalog, type FastifySchoolsResourcesOptions, type ResourcesSessionOptions } from '../lib/index.js'
import { AsyncStore } from './helpers/async-store.js'
import { BASE_URL, CountingCatalog, SECRET, conflictWarnings, formToken, sessionCookie, signIn, signOut, teacherOnly } from './helpers/app.js'

const MATHS = '/schools/resources/resources/maths/'
const LOGIN_FOR_MATHS = `${BASE_URL}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`

interface Setup {
  session?: Partial<ResourcesSessionOptions>
  plugin?: Partial<FastifySchoolsResourcesOptions>
  /** Registers more plugins between resourcesSession and the section. */
  between?: (app: FastifyInstance) => Promise<void>
}

/**
 * A host app with resourcesSession in place of @fastify/session. A host hook registered after it counts
 * the category requests that took the normal path: the fast path answers before it runs.
 */
async function build (setup: Setup = {}) {
  const app = Fastify()
  const store = new AsyncStore()
  const catalog = new CountingCatalog()
  await app.register(fastifyCookie)
  await app.register(resourcesSession, { secret: SECRET, store, rolling: false, saveUninitialized: false, cookie: { secure: false }, ...setup.session })
  let normal = 0
  app.addHook('onRequest', async (request) => { if (request.url.startsWith('/schools/resources/resources/')) normal++ })
  await setup.between?.(app)
  await app.register(schoolsResources, { catalog, authenticate: teacherOnly, baseUrl: BASE_URL, ...setup.plugin })
  await app.ready()
  t.teardown(() => app.close())
  return { app, store, catalog, normalPath: () => normal }
}

/** A member's page after the first view, which makes the session's CSRF secret (the normal path saves it). */
async function memberCookie (app: FastifyInstance): Promise<string> {
  const cookie = await signIn(app)
  const first = await app.inject({ url: MATHS, headers: { cookie } })
  if (first.statusCode !== 200) throw new Error(`first page view: ${first.statusCode}`)
  return cookie
}

const withoutToken = (body: string) => body.replace(/name="_csrf" value="[^"]+"/g, 'name="_csrf" value=""')
const comparable = (res: LightMyRequestResponse) => {
  const { date: _date, 'set-cookie': _cookie, ...headers } = res.headers
  return { status: res.statusCode, headers, body: withoutToken(res.body) }
}

t.test('a member\'s page comes from the fast path and is the page the normal path gives', async (t) => {
  const { app, store, normalPath } = await build()
  const cookie = await signIn(app)
  // The first view after sign-in makes the CSRF secret, so it takes the normal path (which saves it).
  const normal = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(normalPath(), 1)
  const setsBefore = store.sets
  const fast = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(normalPath(), 1, 'the second view did not reach the host\'s later hooks: the fast path answered')
  t.equal(fast.statusCode, 200)
  t.match(fast.body, /Signed in as <strong>Ada Teacher<\/strong>[\s\S]*<h1>Mathematics<\/h1>/)
  t.same(comparable(fast), comparable(normal), 'status, every header and the body (but its fresh token) match')
  t.equal(fast.headers['set-cookie'], undefined, 'nothing to save: no cookie')
  t.equal(store.sets, setsBefore, 'and no store write')
  t.not(formToken(fast.body), formToken(normal.body), 'the fast path makes its own token')
  const again = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(formToken(again.body), formToken(fast.body), 'and reuses it on the session\'s next pages')
  const otherSession = await memberCookie(app)
  const other = await app.inject({ url: MATHS, headers: { cookie: otherSession } })
  t.not(formToken(other.body), formToken(fast.body), 'another session, another token')
  const crossed = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: otherSession }, payload: { _csrf: formToken(fast.body) } })
  t.equal(crossed.statusCode, 403, 'a session\'s token does not sign another session out')

  const filtered = await app.inject({ url: `${MATHS}?year=Year+7`, headers: { cookie } })
  t.equal(normalPath(), 2, 'the other session\'s first view and this one\'s took the normal path, no more')
  t.match(filtered.body, 'Showing 1 of 4 resources for Year 7.')
  const head = await app.inject({ method: 'HEAD', url: MATHS, headers: { cookie } })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(normalPath(), 2, 'the other session\'s first view and this one\'s took the normal path, no more')

  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie }, payload: { _csrf: formToken(fast.body) } })
  t.equal(out.statusCode, 303, 'the fast path\'s token signs out')
  const after = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(after.statusCode, 302, 'a destroyed session is not read again')
  t.equal(after.headers.location, LOGIN_FOR_MATHS)
})

t.test('anonymous requests are answered as by anonymousFastPath', async (t) => {
  const { app, store, normalPath } = await build()
  let res: LightMyRequestResponse | undefined
  const warnings = await conflictWarnings(async () => { res = await app.inject(MATHS) })
  t.equal(res!.statusCode, 302)
  t.equal(res!.headers.location, LOGIN_FOR_MATHS)
  t.equal(warnings.length, 1)
  t.equal(normalPath(), 0)
  t.equal(store.sessions.size, 0)
})

t.test('a fast-path answer runs no later hook before the reply; onSend and onResponse still run', async (t) => {
  const seen: string[] = []
  const { app } = await build({
    between: async (app) => {
      app.addHook('preParsing', async () => { seen.push('preParsing') })
      app.addHook('preValidation', async () => { seen.push('preValidation') })
      app.addHook('preHandler', async () => { seen.push('preHandler') })
      app.addHook('onSend', async (request) => { seen.push(`onSend session=${String(request.session)}`) })
      app.addHook('onResponse', async () => { seen.push('onResponse') })
    }
  })
  const cookie = await memberCookie(app)
  seen.length = 0
  const anonymous = await app.inject(MATHS)
  t.equal(anonymous.statusCode, 302)
  t.same(seen, ['onSend session=null', 'onResponse'], 'anonymous')
  seen.length = 0
  const member = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(member.statusCode, 200)
  t.same(seen, ['onSend session=null', 'onResponse'], 'member')
})

t.test('whatever the fast path cannot be sure of takes the normal path, with the normal answer', async (t) => {
  const { app, store, normalPath } = await build()
  const cookie = await memberCookie(app)
  const id = cookie.slice('sessionId='.length).split('.')[0]
  const cases: Array<[string, () => Promise<LightMyRequestResponse>, (res: LightMyRequestResponse) => void]> = [
    ['a forged cookie', () => app.inject({ url: MATHS, headers: { cookie: `sessionId=${id}.forged` } }), (res) => t.equal(res.headers.location, LOGIN_FOR_MATHS)],
    ['an unknown category', () => app.inject({ url: '/schools/resources/resources/astronomy/', headers: { cookie } }), (res) => t.equal(res.headers.location, '/schools/resources/')],
    ['not a slug', () => app.inject({ url: '/schools/resources/resources/Maths/x/', headers: { cookie } }), (res) => t.equal(res.headers.location, '/schools/resources/')],
    ['JSON', () => app.inject({ url: MATHS, headers: { cookie, accept: 'application/json' } }), (res) => t.equal(res.json().category.slug, 'maths')],
    ['a session without a member', async () => {
      const form = await app.inject('/Security/login')
      return app.inject({ url: MATHS, headers: { cookie: sessionCookie(form)! } })
    }, (res) => t.equal(res.headers.location, LOGIN_FOR_MATHS)]
  ]
  for (const [what, send, check] of cases) {
    const before = normalPath()
    const res = await send()
    t.equal(normalPath(), before + 1, `${what}: the normal path`)
    check(res)
  }

  // An expired session, still in the store: the session plugin regenerates it, so the visitor is anonymous.
  const stored = JSON.parse(store.sessions.get(id)!)
  stored.cookie.expires = new Date(Date.now() - 1000).toISOString()
  store.sessions.set(id, JSON.stringify(stored))
  const before = normalPath()
  const expired = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(normalPath(), before + 1)
  t.equal(expired.headers.location, LOGIN_FOR_MATHS)
})

t.test('stored sessions the fast path cannot read are left to the session plugin', async (t) => {
  const { app, store, normalPath } = await build()
  const cookie = await memberCookie(app)
  const id = cookie.slice('sessionId='.length).split('.')[0]
  const original = store.sessions.get(id)!
  const variants: Array<[string, (s: Record<string, any>) => void, boolean?]> = [
    ['no cookie record at all (read by both)', (s) => { delete s.cookie }, true],
    ['a cookie that is not an object', (s) => { s.cookie = 'soon' }],
    ['an expiry that is not a date', (s) => { s.cookie.expires = { at: 1 } }],
    ['an unreadable expiry', (s) => { s.cookie.expires = 'not a date' }],
    ['a member without a name', (s) => { s.member = { id: 'x' } }],
    ['an empty CSRF secret', (s) => { s._csrf = '' }]
  ]
  for (const [what, change, fast] of variants) {
    const session = JSON.parse(original)
    change(session)
    store.sessions.set(id, JSON.stringify(session))
    const before = normalPath()
    const res = await app.inject({ url: MATHS, headers: { cookie } })
    t.equal(normalPath(), fast === true ? before : before + 1, `${what}: the ${fast === true ? 'fast' : 'normal'} path`)
    t.ok(res.statusCode < 500, `${what}: ${res.statusCode}`)
  }
  // No expiry at all (a browser-session cookie) is fine for both.
  const session = JSON.parse(original)
  session.cookie.expires = null
  store.sessions.set(id, JSON.stringify(session))
  const before = normalPath()
  t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200)
  t.equal(normalPath(), before, 'read by the fast path')
})

t.test('a failing store, catalog or CSP function: the usual error answer, met once', async (t) => {
  const failing = new AsyncStore()
  const { app, normalPath } = await build({ session: { store: failing } })
  const cookie = await memberCookie(app)
  let reads = 0
  failing.get = (_id, callback) => { reads++; setImmediate(() => callback(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))) }
  const down = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(down.statusCode, 503, 'the store-error answer')
  t.equal(down.headers['retry-after'], '5')
  t.equal(reads, 1, 'the store was asked once, not again by the session plugin')
  failing.get = () => { reads++; throw new Error('store bug') }
  const thrown = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(thrown.statusCode, 500, 'what the session plugin answers a throwing store with')
  t.equal(thrown.json().message, 'store bug')
  t.equal(reads, 2)
  // ENOENT is "no such session" to the session plugin: the normal path reads again and starts a new one.
  failing.get = (_id, callback) => { reads++; setImmediate(() => callback(Object.assign(new Error('gone'), { code: 'ENOENT' }))) }
  const gone = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(gone.headers.location, LOGIN_FOR_MATHS)
  t.equal(reads, 4)
  t.equal(normalPath(), 2, 'only the first view and the ENOENT one reached the host\'s later hook')

  let broken = false
  const inner = new CountingCatalog()
  const catalog: Catalog = {
    listCategories: () => inner.listCategories(),
    getCategory: async (slug) => { inner.lookups++; if (broken) throw new Error('catalog down'); return inner.inner.getCategory(slug) }
  }
  const second = await build({ plugin: { catalog } })
  const memberOfSecond = await memberCookie(second.app)
  broken = true
  const [n, lookups] = [second.normalPath(), inner.lookups]
  const res = await second.app.inject({ url: MATHS, headers: { cookie: memberOfSecond } })
  t.equal(res.statusCode, 500)
  t.equal(res.json().message, 'catalog down', 'Fastify\'s own answer to a failing catalog, as on the normal path')
  t.equal(inner.lookups, lookups + 1, 'the catalog was asked once')
  t.equal(second.normalPath(), n)

  // A CSP nonce function that throws: no page goes out without its policy, on either path.
  let nonceFails = false
  const third = await build({ plugin: { helmet: { contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], scriptSrc: [() => { if (nonceFails) throw new Error('no nonce'); return "'nonce-abc'" }] } } } } })
  const memberOfThird = await memberCookie(third.app)
  const fine = await third.app.inject({ url: MATHS, headers: { cookie: memberOfThird } })
  t.equal(fine.statusCode, 200)
  t.match(fine.headers['content-security-policy'], "script-src 'nonce-abc'")
  nonceFails = true
  const m = third.normalPath()
  const noPolicy = await third.app.inject({ url: MATHS, headers: { cookie: memberOfThird } })
  t.equal(noPolicy.statusCode, 500)
  t.equal(noPolicy.json().message, 'no nonce')
  t.notMatch(noPolicy.body, 'Mathematics', 'no page')
  t.equal(third.normalPath(), m)
})

t.test('a cookie signed with an older secret is left to the session plugin', async (t) => {
  const store = new AsyncStore()
  const before = await build({ session: { store } })
  const cookie = await memberCookie(before.app)
  const rotated = await build({ session: { store, secret: ['a-newer-secret-that-is-also-32-chars-long', SECRET] } })
  const n = rotated.normalPath()
  const res = await rotated.app.inject({ url: MATHS, headers: { cookie } })
  t.equal(rotated.normalPath(), n + 1, 'the normal path')
  t.equal(res.statusCode, 200)
  // @fastify/session's own answer to an unsaved session whose cookie differs from a fresh signature.
  t.match(res.headers['set-cookie'], /^sessionId=;/, 'the session plugin\'s cookie handling, not skipped')
})

t.test('a memory store keeps live Session objects: their expiry is read the same way', async (t) => {
  const sessions = new Map<string, any>()
  const { app, normalPath } = await build({ session: { store: new MemoryStore(sessions), cookie: { secure: false, maxAge: 3_600_000 } } })
  const cookie = await memberCookie(app)
  const n = normalPath()
  t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200)
  t.equal(normalPath(), n, 'the fast path read the live Session')
  const [session] = sessions.values()
  t.ok(session.cookie.expires instanceof Date, 'the cookie\'s expiry is a getter on a live Cookie')
  session.cookie.expires = new Date(Date.now() - 1000)
  const expired = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(normalPath(), n + 1, 'expired: the normal path')
  t.equal(expired.headers.location, LOGIN_FOR_MATHS)
})

t.test('members take the normal path with rolling sessions, a cookie prefix or a cookie path', async (t) => {
  for (const session of [{ rolling: true }, { rolling: undefined }, { cookiePrefix: 's:' }] as Array<Partial<ResourcesSessionOptions>>) {
    const { app, normalPath } = await build({ session })
    const cookie = await memberCookie(app)
    const before = normalPath()
    const res = await app.inject({ url: MATHS, headers: { cookie } })
    t.equal(res.statusCode, 200, JSON.stringify(session))
    t.equal(normalPath(), before + 1, `${JSON.stringify(session)}: the normal path`)
  }
  // With the cookie on /schools the login form has no session, so the member's session is put in the store.
  const { app, store, normalPath } = await build({ session: { cookie: { secure: false, path: '/schools' } } })
  store.sessions.set('stored-session-id-0123456789abcdef', JSON.stringify({
    cookie: { path: '/schools', expires: new Date(Date.now() + 60_000).toISOString(), originalMaxAge: 60_000 },
    member: { id: 't-1', name: 'Ada Teacher' },
    _csrf: 'a-stored-csrf-secret'
  }))
  const cookie = `sessionId=${new Signer(SECRET).sign('stored-session-id-0123456789abcdef')}`
  const res = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(res.statusCode, 200)
  t.equal(normalPath(), 1, 'cookie path /schools: the normal path')
})

t.test('with the host\'s helmet or CSRF plugin, without helmet, or with signIn off, pages stay right', async (t) => {
  const withHelmet = await build({ between: async (app) => { await app.register(helmet) } })
  const cookie = await memberCookie(withHelmet.app)
  const before = withHelmet.normalPath()
  const res = await withHelmet.app.inject({ url: MATHS, headers: { cookie } })
  t.equal(withHelmet.normalPath(), before + 1, 'the host\'s helmet: the normal path, whose hooks it has')
  t.match(res.headers['content-security-policy'], "default-src 'self'")

  // helmet: false: no security headers on either path, and the fast path serves the pages.
  const noHeaders = await build({ plugin: { helmet: false } })
  const plainCookie = await memberCookie(noHeaders.app)
  const k = noHeaders.normalPath()
  const plain = await noHeaders.app.inject({ url: MATHS, headers: { cookie: plainCookie } })
  t.equal(noHeaders.normalPath(), k, 'helmet: false: the fast path')
  t.equal(plain.statusCode, 200)
  t.equal(plain.headers['content-security-policy'], undefined)

  // The host's CSRF plugin makes the tokens: the fast path cannot, so the normal path serves the pages.
  const withCsrf = await build({ between: async (app) => { await app.register(csrfProtection, { sessionPlugin: '@fastify/session' }) } })
  const csrfCookie = await memberCookie(withCsrf.app)
  const m = withCsrf.normalPath()
  t.equal((await withCsrf.app.inject({ url: MATHS, headers: { cookie: csrfCookie } })).statusCode, 200)
  t.equal(withCsrf.normalPath(), m + 1, 'the host\'s CSRF plugin: the normal path')

  // The host signs members in: the section's pages carry no token, so the fast path needs no secret.
  const hostSignIn = await build({
    plugin: { signIn: false, authenticate: undefined },
    between: async (app) => {
      app.post('/host-login', async (request, reply) => {
        request.session.set('member', { id: 'h-1', name: 'Host Member' })
        return reply.code(204).send()
      })
    }
  })
  const login = await hostSignIn.app.inject({ method: 'POST', url: '/host-login' })
  const hostCookie = sessionCookie(login)!
  const n = hostSignIn.normalPath()
  const page = await hostSignIn.app.inject({ url: MATHS, headers: { cookie: hostCookie } })
  t.equal(hostSignIn.normalPath(), n, 'the fast path')
  t.equal(page.statusCode, 200)
  t.match(page.body, 'Signed in as <strong>Host Member</strong>')
  t.notMatch(page.body, '_csrf')
})

t.test('the secret: as @fastify/session takes it, checked the same way', async (t) => {
  for (const secret of [[SECRET, 'an-older-secret-that-is-still-32-chars-long'], new CachedSigner(SECRET), new Signer(SECRET)]) {
    const { app, normalPath } = await build({ session: { secret } })
    const cookie = await memberCookie(app)
    const before = normalPath()
    t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200)
    t.equal(normalPath(), before, 'the fast path verifies with the same signer')
  }
  for (const secret of ['too-short', [], { sign: () => '' }, null]) {
    const app = Fastify()
    await app.register(fastifyCookie)
    app.register(resourcesSession, { secret } as unknown as ResourcesSessionOptions)
    await t.rejects(async () => { await app.ready() }, { code: 'FST_SR_INVALID_OPTION', message: /"secret"/ }, JSON.stringify(secret))
  }
  const noCookie = Fastify()
  noCookie.register(resourcesSession, { secret: SECRET })
  await t.rejects(async () => { await noCookie.ready() }, /@fastify\/cookie/)
})

t.test('without a store it uses one memory store for both the session plugin and the fast path', async (t) => {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(resourcesSession, { secret: SECRET, rolling: false, cookie: { secure: false } })
  let normal = 0
  app.addHook('onRequest', async () => { normal++ })
  await app.register(schoolsResources, { catalog: new CountingCatalog(), authenticate: teacherOnly, baseUrl: BASE_URL })
  t.teardown(() => app.close())
  const cookie = await memberCookie(app)
  const n = normal
  t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 200)
  t.equal(normal, n, 'the fast path found the session the session plugin saved')
  await signOut(app, cookie)
  t.equal((await app.inject({ url: MATHS, headers: { cookie } })).statusCode, 302)
})
