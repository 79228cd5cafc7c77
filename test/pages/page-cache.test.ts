import t from 'tap'
import { english, pageLanguage } from '../helpers/page-language.js'
import fc from 'fast-check'
import { defaultViews, InMemoryCatalog, type CategoryWithResources, type Catalog, type Member, type PageContext } from '../../lib/index.js'
import { CategoryPageCache, PAGES_PER_CATEGORY, type CategoryPageData } from '../../lib/pages/page-cache.js'
import { applyFilter, resourceFilter } from '../../lib/pages/filters.js'
import { pageHref, pageOf, pageWindow, pagination } from '../../lib/pages/pagination.js'
import { demoCatalog } from '../../examples/demo-catalog.js'
import { buildTestApp, signIn, formToken, withCookies } from '../helpers/app.js'

const paths: PageContext['paths'] = { index: '/s/', login: '/l', logout: '/o', category: (slug) => `/s/resources/${slug}/`, file: (slug, r) => `/s/files/${slug}/${r.id}` }
const render = (data: Parameters<typeof defaultViews.category>[0], ctx: PageContext) => String(defaultViews.layout(defaultViews.category(data, ctx), ctx))

t.test('a cached page is byte for byte the page the views render, whoever asks, however it is filtered and paged', async (t) => {
  const catalog = new InMemoryCatalog(demoCatalog)
  const categories = await Promise.all((await catalog.listCategories()).map(async (c) => (await catalog.getCategory(c.slug))!))
  // One cache per PageRenderer, whose site name, paths and signIn setting are fixed.
  // One cache per PageRenderer, whose page size is fixed too.
  const caches = new Map<string, CategoryPageCache>()
  const cacheFor = (key: string) => caches.get(key) ?? caches.set(key, new CategoryPageCache(render)).get(key)!
  const member = fc.record({ id: fc.string({ minLength: 1 }), name: fc.oneof(fc.string(), fc.constantFrom('<b>O\'Brien & "Co"</b>', 'Zoë', '\u0001')) })
  fc.assert(fc.property(
    fc.constantFrom(...categories), member, fc.option(fc.base64String({ minLength: 1 }), { nil: undefined }),
    fc.option(fc.string(), { nil: undefined }), fc.option(fc.string(), { nil: undefined }), fc.boolean(),
    fc.integer({ min: 1, max: 4 }), fc.nat(12),
    (category: CategoryWithResources, who: Member, csrfToken, subjectPick, yearPick, signInOn, size, start) => {
      const choices = resourceFilter(category, {})
      // Half the time a real choice of the category, otherwise whatever was asked (ignored as "all").
      const subject = subjectPick !== undefined && choices.subjects.length > 0 ? choices.subjects[subjectPick.length % choices.subjects.length] : subjectPick
      const year = yearPick !== undefined && choices.years.length > 0 ? choices.years[yearPick.length % choices.years.length] : yearPick
      const filter = resourceFilter(category, { subject, year })
      const ctx = { ...english, siteName: 'Riverside <School>', signIn: signInOn, paths, stylesheet: '/s/a.css', member: who, csrfToken }
      const matching = applyFilter(category.resources, filter)
      const window = pageWindow({ start: String(start) }, matching.length, size)
      const data: CategoryPageData = { category, resources: pageOf(matching, window), filter, pagination: pagination(window, (s) => pageHref(paths.category(category.slug), { subject: filter.subject, year: filter.year }, s)) }
      return cacheFor(`${signInOn}/${size}`).page(data, window.start, ctx) === render(data, ctx)
    }
  ), { numRuns: 400 })
  t.pass('400 pages compared')
})

t.test('a catalog that returns a new record after a change gets the new page', async (t) => {
  let title = 'Mathematics'
  const inner = new InMemoryCatalog(demoCatalog)
  const changing: Catalog = {
    listCategories: () => inner.listCategories(),
    async getCategory (slug) {
      const category = await inner.getCategory(slug)
      return category === undefined ? undefined : { ...category, title }
    }
  }
  const { app } = await buildTestApp({ plugin: { catalog: changing } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const maths = '/schools/resources/resources/maths/'
  t.match((await app.inject({ url: maths, headers: { cookie } })).body, '<h1>Mathematics</h1>')
  title = 'Numeracy'
  const after = await app.inject({ url: maths, headers: { cookie } })
  t.match(after.body, '<h1>Numeracy</h1>')
  t.match(after.body, '<title>Numeracy | Schools resources</title>')
  t.notMatch(after.body, '<h1>Mathematics</h1>')
})

t.test('each page view gets its own CSRF token, and it works', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const maths = '/schools/resources/resources/maths/'
  const firstPage = await app.inject({ url: maths, headers: { cookie } })
  const first = formToken(firstPage.body)
  const browser = withCookies(cookie, firstPage)
  const second = formToken((await app.inject({ url: maths, headers: { cookie: browser } })).body)
  t.not(first, second, 'a fresh token per page, as without the cache')
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: browser }, payload: { _csrf: first } })
  t.equal(out.statusCode, 303, 'an earlier page\'s token signs out')
})

t.test('a host\'s views are rendered for every request, not cached', async (t) => {
  let calls = 0
  const { app } = await buildTestApp({
    plugin: {
      views: {
        category: (data, ctx) => {
          calls++
          return { title: data.category.title, body: `<p>${ctx.member?.id === 't-1' ? 'teacher view' : 'other view'}</p>` }
        }
      }
    }
  })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  for (let i = 0; i < 3; i++) t.match((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })).body, 'teacher view')
  t.equal(calls, 3)
})

t.test('a category keeps at most PAGES_PER_CATEGORY pages, dropping the least recently used first', async (t) => {
  const resources = Array.from({ length: 200 }, (_, i) => ({ id: `r${i}`, title: `R${i}`, summary: 's', url: 'https://example.org/', subject: 'Maths', yearLevels: ['Year 7'], format: 'Worksheet' }))
  const category = (await new InMemoryCatalog({ categories: [{ slug: 'big', title: 'Big', description: 'd', resources }] }).getCategory('big'))!
  let renders = 0
  const cache = new CategoryPageCache((data, ctx) => { renders++; return render(data, ctx) })
  const filter = resourceFilter(category, {})
  const ctx = { ...english, siteName: 'S', signIn: true, paths, member: { id: 1, name: 'Ada' }, csrfToken: 'tok' }
  const open = (start: number) => {
    const window = pageWindow({ start: String(start) }, category.resources.length, 1)
    return cache.page({ category, resources: pageOf(category.resources, window), filter, pagination: pagination(window, String) }, window.start, ctx)
  }
  for (let start = 0; start < PAGES_PER_CATEGORY; start++) open(start)
  t.equal(renders, PAGES_PER_CATEGORY, 'each page rendered once')
  open(0) // used again: now the most recent
  t.equal(renders, PAGES_PER_CATEGORY, 'a kept page is not rendered again')
  open(PAGES_PER_CATEGORY) // one page too many: page 1 (the least recently used) goes
  t.equal(renders, PAGES_PER_CATEGORY + 1)
  open(0)
  t.equal(renders, PAGES_PER_CATEGORY + 1, 'page 0 was used recently, so it was kept')
  open(1)
  t.equal(renders, PAGES_PER_CATEGORY + 2, 'page 1 had been dropped, so it is rendered again')
  t.match(open(5), 'R5', 'still the right page')
})

t.test('two locales of one category page never share a cached page, however the requests interleave', async (t) => {
  const category = (await new InMemoryCatalog(demoCatalog).getCategory('maths'))!
  const filter = resourceFilter(category, {})
  const data: CategoryPageData = { category, resources: category.resources, filter, pagination: undefined }
  const cache = new CategoryPageCache(render)
  const member = { id: 1, name: 'Ada' }
  for (const locale of ['fr', 'en', 'fr', 'cy', 'en']) {
    const ctx = { ...pageLanguage(locale), siteName: 'S', signIn: true, paths, member, csrfToken: 'tok' }
    t.equal(cache.page(data, 0, ctx), render(data, ctx), `${locale}: the page the views render in ${locale}`)
  }

  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const maths = '/schools/resources/resources/maths/'
  // French first, then English and French side by side, each asked for several times at once.
  const ask = (language: string | undefined) => app.inject({ url: maths, headers: language === undefined ? { cookie } : { cookie, 'accept-language': language } })
  const first = await ask('fr')
  t.match(first.body, '<html lang="fr" dir="ltr">')
  const answers = await Promise.all(['en', 'fr', undefined, 'fr-CA', 'en', 'fr'].map(async (language) => ({ language, res: await ask(language) })))
  for (const { language, res } of answers) {
    const french = language?.startsWith('fr') === true
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-language'], french ? 'fr' : 'en', String(language))
    t.match(res.body, french ? '<html lang="fr" dir="ltr">' : '<html lang="en" dir="ltr">')
    t.match(res.body, french ? '<p class="result-count">4 ressources.</p>' : '<p class="result-count">4 resources.</p>')
    t.match(res.body, french ? '<legend>Filtrer les ressources</legend>' : '<legend>Filter resources</legend>')
    t.notMatch(res.body, french ? 'Filter resources' : 'Filtrer les ressources', 'nothing of the other language')
  }
})
