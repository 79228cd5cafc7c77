import t, { type Test } from 'tap'
import { errorCodes, html, type Views } from '../../lib/index.js'
import { buildTestApp } from '../helpers/app.js'
import { capturedLog, ERROR, WARN } from '../helpers/log-capture.js'

// Issue 18: a host view that throws, or gives something that is not a page (or, for the layout, markup),
// gets the section's 500 page and one warn naming the view and the fix; an async view is still fine.

const PARENT = { id: 'p-1', name: 'Pat Parent', groups: ['parents'] }
const GENERIC = 'Something went wrong on our side. Please try again later.'

async function build (t: Test, views: Partial<Views>) {
  const log = capturedLog()
  const { app } = await buildTestApp({
    fastify: { logger: log.logger },
    // A member the host knows, outside the staff audience, so that every page (403 included) is reachable.
    plugin: { views, getMember: () => PARENT },
    extend: (app) => {
      app.get('/staff-notices', { config: { membersOnly: { groups: ['staff'], title: 'Staff notices' } } }, async () => 'staff only')
    }
  })
  t.teardown(() => app.close())
  const warns = (view: string) => log.lines.filter((l) => l.level === WARN && l.code === 'FST_SR_INVALID_VIEW' && l.view === view)
  return { app, lines: log.lines, warns }
}

const pages: Array<[keyof Views, string]> = [
  ['index', '/schools/resources/'],
  ['category', '/schools/resources/resources/maths/'],
  ['login', '/Security/login'],
  ['notFound', '/schools/resources/no-such-page'],
  ['forbidden', '/schools/resources/resources/staff-room/'],
  ['forbidden', '/staff-notices']
]

t.test('a view that throws: the 500 page, one warn naming it, an error line per request', async (t) => {
  for (const [name, url] of pages) {
    const { app, lines, warns } = await build(t, { [name]: () => { throw new Error('template broke: hunter2') } })
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ url, headers: { accept: 'text/html' } })
      t.equal(res.statusCode, 500, `${name} ${url}`)
      t.match(res.body, '<h1>Something went wrong</h1>')
      t.match(res.body, 'FST_SR_INVALID_VIEW')
      t.notMatch(res.body, 'hunter2')
      t.equal(res.headers['cache-control'], 'no-store')
    }
    t.equal(warns(`views.${name}`).length, 1, `views.${name}: warned once`)
    t.match(warns(`views.${name}`)[0].msg, new RegExp(`views\\.${name} threw, so the section answers its 500 page.*leave views\\.${name} out`))
    const errors = lines.filter((l) => l.level === ERROR)
    t.equal(errors.length, 3)
    t.match(errors[0].err?.message, /views\.\w+ threw/)
    t.match(errors[0].err?.stack ?? errors[0].err?.message, /template broke: hunter2/, 'the cause in the log')
  }
})

t.test('a view whose answer is not a page, or a layout whose answer is not markup: the 500 page, the view named', async (t) => {
  const wrong: Array<[Partial<Views>, string, string, RegExp]> = [
    [{ index: () => 42 as never }, '/schools/resources/', 'views.index', /gave a number instead of a page/],
    [{ category: async () => null as never }, '/schools/resources/resources/maths/', 'views.category', /gave null instead of a page/],
    [{ login: () => ({ title: 'Sign in', body: 5 }) as never }, '/Security/login', 'views.login', /gave an object instead of a page/],
    [{ notFound: () => ({ body: html`<p>x</p>` }) as never }, '/schools/resources/none', 'views.notFound', /gave an object instead of a page/],
    [{ layout: () => ({ html: '<p>' }) as never }, '/schools/resources/', 'views.layout', /gave an object instead of markup/],
    [{ layout: async () => undefined as never }, '/schools/resources/resources/maths/', 'views.layout', /gave undefined instead of markup/]
  ]
  for (const [views, url, view, problem] of wrong) {
    const { app, warns } = await build(t, views)
    const res = await app.inject({ url, headers: { accept: 'text/html' } })
    t.equal(res.statusCode, 500, view)
    t.match(res.body, 'Something went wrong', 'the section\'s own page, without the broken layout')
    t.equal(warns(view).length, 1)
    t.match(warns(view)[0].msg, problem)
    const json = await app.inject({ url, headers: { accept: 'application/json' } })
    // The JSON answers of these routes use no view: only the HTML ones fail.
    if (json.statusCode === 500) t.same(json.json(), { statusCode: 500, code: 'FST_SR_INVALID_VIEW', error: 'Internal Server Error', message: GENERIC })
    t.equal(warns(view).length, 1, 'still one warn')
  }
})

t.test('async views and SafeHtml or string answers are served as before', async (t) => {
  const { app, lines } = await build(t, {
    layout: async (page) => `<!doctype html><title>${page.title}</title>${String(page.body)}`,
    category: async ({ category }) => ({ title: category.title, body: html`<h1>${category.title}</h1>` })
  })
  const res = await app.inject('/schools/resources/resources/maths/')
  t.equal(res.statusCode, 200)
  t.match(res.body, '<h1>Mathematics</h1>')
  t.equal(lines.length, 0, 'nothing logged')
})

t.test('a view that fails because a store is down keeps the 503', async (t) => {
  const { app } = await build(t, { index: async () => { throw new errorCodes.FST_SR_STORE_UNAVAILABLE('GET timed out') } })
  const res = await app.inject('/schools/resources/')
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '5')
})
