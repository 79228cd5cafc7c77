import t from 'tap'
import Fastify, { type FastifyInstance, type InjectOptions, type LightMyRequestResponse } from 'fastify'
import fastifyCookie, { type FastifyCookieOptions } from '@fastify/cookie'
import fastifySession from '@fastify/session'
import { Cookie, CookieJar } from 'tough-cookie'
import schoolsResources, { InMemoryCatalog } from '../../lib/index.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'
import { formToken, SECRET, TEACHER, teacherOnly } from '../helpers/app.js'

// The section's CSRF cookie as a browser keeps it: tough-cookie's RFC 6265bis jar, strict about cookie
// prefixes (a `__Host-` cookie that is not Secure, has a Domain or another path is refused) and about
// Secure (stored and sent on https only). On an https site the cookie is `__Host-_csrf`, and sign-in's
// deletion of it must carry the same attributes, or the browser keeps the old secret.

const MATHS = '/schools/resources/resources/maths/'

interface Site {
  what: string
  origin: string
  baseUrl: string | undefined
  cookie: FastifyCookieOptions
  name: string
}

const SITES: Site[] = [
  { what: 'https', origin: 'https://www.example.org', baseUrl: 'https://www.example.org', cookie: {}, name: '__Host-_csrf' },
  // A host whose cookies span its subdomains by default, and signs them: the CSRF cookie stays host-only.
  { what: 'https, host cookie defaults with a Domain and a secret', origin: 'https://www.example.org', baseUrl: 'https://www.example.org', cookie: { secret: SECRET, parseOptions: { domain: 'example.org' } }, name: '__Host-_csrf' },
  { what: 'http', origin: 'http://school.test', baseUrl: undefined, cookie: {}, name: '_csrf' }
]

async function build (site: Site): Promise<FastifyInstance> {
  const https = site.origin.startsWith('https:')
  // Behind a TLS proxy on https (the requests say X-Forwarded-Proto: https), as production runs it.
  const app = Fastify({ trustProxy: '127.0.0.1' })
  await app.register(fastifyCookie, site.cookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: https ? true : 'auto', sameSite: 'lax' } })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), authenticate: teacherOnly, files: demoFiles, ...(site.baseUrl === undefined ? {} : { baseUrl: site.baseUrl }) })
  return app
}

/** A browser on `origin`: sends what its jar holds for the address, and stores what the answer sets (or throws). */
function browser (app: FastifyInstance, origin: string) {
  const jar = new CookieJar(undefined, { prefixSecurity: 'strict', allowSecureOnLocal: false })
  const https = origin.startsWith('https:')
  return {
    jar,
    async request (opts: InjectOptions & { url: string }): Promise<LightMyRequestResponse> {
      const href = new URL(opts.url, origin).href
      const cookie = await jar.getCookieString(href)
      const res = await app.inject({
        ...opts,
        headers: { host: new URL(origin).host, ...(https ? { 'x-forwarded-proto': 'https' } : {}), ...(cookie === '' ? {} : { cookie }), ...opts.headers }
      })
      for (const line of setCookies(res)) await jar.setCookie(line, href)
      return res
    },
    async cookie (name: string): Promise<Cookie | undefined> {
      return (await jar.getCookies(origin)).find((c) => c.key === name)
    }
  }
}

function setCookies (res: LightMyRequestResponse): string[] {
  const header = res.headers['set-cookie']
  return header === undefined ? [] : Array.isArray(header) ? header : [header]
}

/** The attributes a Set-Cookie line gives its cookie (value and lifetime aside). */
function attributes (line: string) {
  const c = Cookie.parse(line)!
  return { name: c.key, path: c.path, domain: c.domain, secure: c.secure, httpOnly: c.httpOnly, sameSite: c.sameSite }
}

for (const site of SITES) {
  t.test(`${site.what}: the CSRF cookie is ${site.name}, and sign-in, the pages' forms and sign-out work in a browser's jar`, async (t) => {
    const app = await build(site)
    t.teardown(() => app.close())
    const https = site.origin.startsWith('https:')
    const b = browser(app, site.origin)

    const form = await b.request({ url: `/Security/login?BackURL=${encodeURIComponent(MATHS)}` })
    t.equal(form.statusCode, 200)
    const set = setCookies(form).find((line) => line.startsWith(`${site.name}=`))
    if (set === undefined) return t.fail(`the form sets no ${site.name}`)
    t.same(attributes(set), { name: site.name, path: '/', domain: null, secure: https, httpOnly: true, sameSite: 'strict' }, 'host-only, path /, Secure on https')
    const before = await b.cookie(site.name)
    t.ok(before?.hostOnly, 'the jar keeps it, for this host only')

    const signedIn = await b.request({
      method: 'POST',
      url: '/Security/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: formToken(form.body), email: TEACHER.email, password: TEACHER.password, BackURL: MATHS }).toString()
    })
    t.equal(signedIn.statusCode, 303, 'signed in')
    const dropped = setCookies(signedIn).find((line) => line.startsWith(`${site.name}=;`))
    if (dropped === undefined) return t.fail('sign-in does not drop the CSRF cookie')
    t.same(attributes(dropped), attributes(set), 'with the attributes it was set with (Secure included on https)')
    t.equal(await b.cookie(site.name), undefined, 'and the browser did drop it')
    t.ok(await b.cookie('sessionId'), 'the session cookie is kept')

    const page = await b.request({ url: MATHS })
    t.equal(page.statusCode, 200)
    t.match(page.body, 'Signed in as <strong>Ada Teacher</strong>')
    const renewed = await b.cookie(site.name)
    t.ok(renewed, 'the first member page sets a new secret')
    t.not(renewed?.value, before?.value, 'not the one from before sign-in')

    const signedOut = await b.request({
      method: 'POST',
      url: '/Security/logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: formToken(page.body) }).toString()
    })
    t.equal(signedOut.statusCode, 303, 'the logout form works')
    const after = await b.request({ url: MATHS })
    t.equal(after.statusCode, 302, 'signed out')
    t.match(after.headers.location, '/Security/login?BackURL=')
  })
}

t.test('on https the jar refuses what an attacker on a sibling subdomain or on http could plant', async (t) => {
  const site = SITES[0]
  const app = await build(site)
  t.teardown(() => app.close())
  const b = browser(app, site.origin)
  // A __Host- cookie with a Domain, or without Secure, never enters the jar; a plain `_csrf` planted for the
  // whole domain does, but the section does not read it.
  await t.rejects(b.jar.setCookie('__Host-_csrf=planted; Path=/; Secure; Domain=example.org', 'https://evil.example.org/'))
  await t.rejects(b.jar.setCookie('__Host-_csrf=planted; Path=/', 'http://www.example.org/'))
  await b.jar.setCookie('_csrf=planted; Path=/; Domain=example.org', 'https://evil.example.org/')
  const form = await b.request({ url: '/Security/login' })
  t.ok(await b.cookie('__Host-_csrf'), 'the section sets its own')
  const res = await b.request({
    method: 'POST',
    url: '/Security/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: formToken(form.body), email: TEACHER.email, password: TEACHER.password }).toString()
  })
  t.equal(res.statusCode, 303, 'and the form works beside the planted cookie')
})
