import t, { type Test } from 'tap'
import createError from '@fastify/error'
import { errorCodes, InMemoryCatalog, type Catalog } from '../../lib/index.js'
import { demoCatalog } from '../../examples/demo-catalog.js'
import { buildTestApp, signIn, type BuildOptions } from '../helpers/app.js'
import { capturedLog, ERROR } from '../helpers/log-capture.js'

// Issue 18, item 7: an error inside the section's routes reached the client raw (Fastify's JSON 500 with
// the error's message). Now: the section's own 500 page or JSON, a generic message, the error in the log.

const SECRET = 'SQLITE_BUSY (password=hunter2)'
const GENERIC = 'Something went wrong on our side. Please try again later.'
const demo = new InMemoryCatalog(demoCatalog)

/** A host catalog as the reproduction has it: 'boom' rejects with a secret, the rest as the demo. */
const hostCatalog: Catalog = {
  listCategories: () => demo.listCategories(),
  getCategory: (slug) => slug === 'boom' ? Promise.reject(new Error(SECRET)) : demo.getCategory(slug)
}

async function build (t: Test, catalog: Catalog = hostCatalog, extend?: BuildOptions['extend']) {
  const log = capturedLog()
  const { app } = await buildTestApp({ fastify: { logger: log.logger }, plugin: { catalog }, extend })
  t.teardown(() => app.close())
  return { app, lines: log.lines }
}

t.test('the reproduction: a catalog that throws gives the 500 page, never its message', async (t) => {
  const { app, lines } = await build(t)
  const cookie = await signIn(app)
  const page = await app.inject({ url: '/schools/resources/resources/boom/', headers: { cookie, accept: 'text/html' } })
  t.equal(page.statusCode, 500)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, /^<!doctype html>.*<h1>Something went wrong<\/h1>/s)
  t.match(page.body, GENERIC)
  t.match(page.body, 'Error code: FST_SR_INTERNAL_ERROR')
  t.notMatch(page.body, 'hunter2')
  t.notMatch(page.body, 'SQLITE')
  t.notMatch(page.body, 'site-header', 'not through the layout')
  t.equal(page.headers['cache-control'], 'no-store')
  t.match(page.headers['content-security-policy'], /default-src 'none'/, 'the section\'s security headers')
  t.equal(page.headers['x-content-type-options'], 'nosniff')

  const json = await app.inject({ url: '/schools/resources/resources/boom/', headers: { cookie, accept: 'application/json' } })
  t.equal(json.statusCode, 500)
  t.same(json.json(), { statusCode: 500, code: 'FST_SR_INTERNAL_ERROR', error: 'Internal Server Error', message: GENERIC })

  const head = await app.inject({ method: 'HEAD', url: '/schools/resources/resources/boom/', headers: { cookie } })
  t.equal(head.statusCode, 500)
  t.equal(head.body, '')

  const errors = lines.filter((l) => l.level === ERROR)
  t.equal(errors.length, 3, 'one error line per request, and no other')
  t.ok(errors.every((l) => l.err?.message === SECRET && typeof l.reqId === 'string' && l.code === 'FST_SR_INTERNAL_ERROR'), 'the full error, with the request id, only in the log')
  t.equal(new Set(errors.map((l) => l.reqId)).size, 3)
})

t.test('any 5xx of the section gets the page; its own codes are named, a host\'s code is not', async (t) => {
  const HOST_CODE = createError('HOST_DB_PASSWORD_WRONG', 'the password for db1 is hunter2', 502)
  let failure: unknown = new errorCodes.FST_SR_INVALID_VIEW('category', 'threw')
  const catalog: Catalog = {
    listCategories: () => demo.listCategories(),
    getCategory: async (slug) => { if (slug === 'boom') throw failure; return demo.getCategory(slug) }
  }
  const { app, lines } = await build(t, catalog)
  const cookie = await signIn(app)
  const ask = () => app.inject({ url: '/schools/resources/resources/boom/', headers: { cookie, accept: 'application/json' } })
  t.same((await ask()).json(), { statusCode: 500, code: 'FST_SR_INVALID_VIEW', error: 'Internal Server Error', message: GENERIC }, 'a section code with status 500 is named')
  for (const thrown of [new HOST_CODE(), Object.assign(new Error('hunter2'), { statusCode: 503 }), 'hunter2', null, { statusCode: 302, message: 'hunter2' }]) {
    failure = thrown
    const res = await ask()
    t.equal(res.statusCode, 500, String(thrown))
    t.same(res.json(), { statusCode: 500, code: 'FST_SR_INTERNAL_ERROR', error: 'Internal Server Error', message: GENERIC })
  }
  t.equal(lines.filter((l) => l.level === ERROR).length, 6)
})

t.test('4xx errors keep their status and their safe messages; store outages keep their 503', async (t) => {
  const failure = new errorCodes.FST_SR_STORE_UNAVAILABLE('GET failed')
  const catalog: Catalog = {
    listCategories: () => demo.listCategories(),
    getCategory: async (slug) => { if (slug === 'boom') throw failure; return demo.getCategory(slug) }
  }
  const { app } = await build(t, catalog)
  const cookie = await signIn(app)
  const long = await app.inject({ url: `/schools/resources/resources/${'a'.repeat(1100)}/`, headers: { cookie } })
  t.equal(long.statusCode, 414)
  t.equal(long.json().code, 'FST_SR_URI_TOO_LONG')
  t.match(long.json().message, /longer than 1024 characters/)
  const down = await app.inject({ url: '/schools/resources/resources/boom/', headers: { cookie } })
  t.equal(down.statusCode, 503)
  t.equal(down.headers['retry-after'], '5')
})

t.test('an error in a host hook on the section\'s routes, or in the sign-in, gets the same page', async (t) => {
  const { app, lines } = await build(t, demo, (app) => {
    app.addHook('preHandler', async (request) => {
      if (request.headers['x-break'] === 'yes') throw new Error('hook broke: hunter2')
    })
  })
  for (const url of ['/schools/resources/', '/Security/login', '/schools/resources/nothing-here']) {
    const res = await app.inject({ url, headers: { 'x-break': 'yes' } })
    t.equal(res.statusCode, 500, url)
    t.notMatch(res.body, 'hunter2')
    t.match(res.body, 'Something went wrong')
  }
  t.equal(lines.filter((l) => l.level === ERROR).length, 3)
})

t.test('a throwing authenticate at sign-in: the 500, no session, its text only in the log', async (t) => {
  const log = capturedLog()
  const { app: failing, store } = await buildTestApp({ fastify: { logger: log.logger }, plugin: { authenticate: async () => { throw new Error(SECRET) } } })
  t.teardown(() => failing.close())
  const form = await failing.inject('/Security/login')
  const cookie = form.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]
  const res = await failing.inject({ method: 'POST', url: '/Security/login', headers: { cookie }, payload: { _csrf: token, email: 'a@example.org', password: 'x' } })
  t.equal(res.statusCode, 500)
  t.notMatch(res.body, 'hunter2')
  t.equal(store.sessions.size, 0, 'nobody signed in')
  t.equal(log.lines.filter((l) => l.level === ERROR && l.err?.message === SECRET).length, 1)
})

t.test('with helmet: false the 500 page sets no security headers of its own', async (t) => {
  const { app } = await buildTestApp({ plugin: { catalog: hostCatalog, helmet: false } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const res = await app.inject({ url: '/schools/resources/resources/boom/', headers: { cookie } })
  t.equal(res.statusCode, 500)
  t.equal(res.headers['content-security-policy'], undefined)
  t.equal(res.headers['cache-control'], 'no-store')
})
