import t from 'tap'
import { defaultStylesheet } from '../../lib/pages/stylesheet.js'
import { buildTestApp } from '../helpers/app.js'

const CSS = '/schools/resources/assets/resources.css'

function linkedStylesheet (body: string): string | undefined {
  return /<link rel="stylesheet" href="([^"]+)">/.exec(body)?.[1]
}

t.test('the layout links the served stylesheet by its content hash; it is cached for a year', async (t) => {
  const { app, store } = await buildTestApp()
  t.teardown(() => app.close())
  const page = await app.inject('/schools/resources/')
  const href = linkedStylesheet(page.body)!
  t.match(href, /^\/schools\/resources\/assets\/resources\.css\?v=[A-Za-z0-9_-]{16}$/)
  const res = await app.inject(href)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/css; charset=utf-8')
  t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
  t.equal(res.body, defaultStylesheet)
  t.equal(res.headers['set-cookie'], undefined, 'no session for a stylesheet')
  const etag = res.headers.etag as string
  t.equal(etag, `"${href.split('=')[1]}"`, 'the ETag is the content hash')
  t.notMatch(defaultStylesheet, /url\(|@import|expression\(/, 'nothing loaded from elsewhere')
  t.match(defaultStylesheet, ':focus-visible', 'focus is always visible')

  const unversioned = await app.inject(CSS)
  t.equal(unversioned.statusCode, 200)
  t.equal(unversioned.headers['cache-control'], 'public, max-age=0, must-revalidate', 'an old or bare link revalidates')
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`]) {
    const cached = await app.inject({ url: href, headers: { 'if-none-match': ifNoneMatch } })
    t.equal(cached.statusCode, 304, ifNoneMatch)
    t.equal(cached.body, '')
    t.equal(cached.headers.etag, etag)
  }
  const stale = await app.inject({ url: CSS, headers: { 'if-none-match': '"old"' } })
  t.equal(stale.statusCode, 200)
  t.equal(store.sessions.size, 0)
})

t.test('stylesheet: false serves and links none; a URL links the host\'s instead', async (t) => {
  const off = await buildTestApp({ plugin: { stylesheet: false } })
  t.teardown(() => off.app.close())
  t.equal(linkedStylesheet((await off.app.inject('/schools/resources/')).body), undefined)
  t.equal((await off.app.inject(CSS)).statusCode, 404)

  for (const url of ['/css/our-school.css', 'https://cdn.example.org/school.css?v=3']) {
    const own = await buildTestApp({ plugin: { stylesheet: url } })
    t.teardown(() => own.app.close())
    t.equal(linkedStylesheet((await own.app.inject('/schools/resources/')).body), url.replace('&', '&amp;'))
    t.equal((await own.app.inject(CSS)).statusCode, 404, 'ours is not served')
  }

  const on = await buildTestApp({ plugin: { stylesheet: true, prefix: '/members/library' } })
  t.teardown(() => on.app.close())
  t.match(linkedStylesheet((await on.app.inject('/members/library/')).body), /^\/members\/library\/assets\/resources\.css\?v=/)
})

t.test('a wrong stylesheet option fails start-up', async (t) => {
  for (const stylesheet of ['', 'css/x.css', '//cdn.example.org/x.css', 'javascript:alert(1)', '/a b.css', 'https://[::1', 1, null]) {
    await t.rejects(buildTestApp({ plugin: { stylesheet: stylesheet as never } }), { code: 'FST_SR_INVALID_OPTION', message: /invalid option "stylesheet"/ }, String(stylesheet))
  }
})

t.test('a host stylesheet on another site is allowed by the CSP; the host\'s helmet options still win', async (t) => {
  const policyOf = async (plugin: Parameters<typeof buildTestApp>[0]) => {
    const { app } = await buildTestApp(plugin)
    t.teardown(() => app.close())
    return (await app.inject('/schools/resources/')).headers['content-security-policy'] as string | undefined
  }
  t.match(await policyOf({}), /(^|;)style-src 'self';/, 'ours only: self')
  t.match(await policyOf({ plugin: { stylesheet: '/css/ours.css' } }), /(^|;)style-src 'self';/, 'a path on this site: self')
  t.match(await policyOf({ plugin: { stylesheet: 'https://cdn.example.org/school.css?v=3' } }), /(^|;)style-src 'self' https:\/\/cdn\.example\.org;/)
  t.match(await policyOf({ plugin: { stylesheet: 'https://cdn.example.org/s.css', helmet: { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"] } } } } }), /^default-src 'self'/, 'explicit helmet options replace ours')
  t.equal(await policyOf({ plugin: { stylesheet: 'https://cdn.example.org/s.css', helmet: false } }), undefined)
})

t.test('the stylesheet names no physical side: a right-to-left page is laid out mirrored', async (t) => {
  // left/right in a property name or as a value (float: left, text-align: right) would not flip with dir="rtl".
  t.notMatch(defaultStylesheet, /(^|[\s;{-])(left|right)\b/m, 'no left or right anywhere')
  for (const logical of ['inset-inline-start: 0.5rem', 'margin-inline-end: 0.25rem', 'padding-inline-start: 0.6rem', 'border-inline-start: 4px solid', 'border-inline-start: 5px solid']) {
    t.match(defaultStylesheet, logical)
  }
})
