import t from 'tap'
import { InMemoryCatalog, type CatalogData, type CategoryWithResources } from '../../lib/index.js'
import { pageHref, pageWindow, pagination } from '../../lib/pages/pagination.js'
import { buildTestApp, signIn } from '../helpers/app.js'

/** `count` resources, alternating two subjects, so a filter halves the list. */
function resources (count: number): CategoryWithResources['resources'] {
  return Array.from({ length: count }, (_, i) => ({
    id: `r-${i}`,
    title: `Resource number ${i}`,
    summary: `Summary of resource ${i}, long enough to look like a real one on a school's page.`,
    url: `https://www.example.org/files/r-${i}.pdf`,
    subject: i % 2 === 0 ? 'Mathematics' : 'Science',
    yearLevels: ['Year 7'],
    format: 'Worksheet'
  }))
}

function bigCatalog (categories: number, perCategory: number): CatalogData {
  return {
    categories: Array.from({ length: categories }, (_, c) => ({
      slug: `category-${c}`,
      title: `Category ${c}`,
      description: `Everything about topic ${c}.`,
      resources: resources(perCategory)
    }))
  }
}

const BIG = '/schools/resources/resources/category-0/'

/** Resource numbers listed on a page, in order. */
function listed (body: string): number[] {
  return [...body.matchAll(/Resource number (\d+)</g)].map((m) => Number(m[1]))
}

t.test('pageWindow: every start a link can carry shows a page, and one address names each page', async (t) => {
  const at = (start: unknown, total = 120, size = 50) => pageWindow(start === undefined ? {} : { start }, total, size)
  t.same(at(undefined), { start: 0, size: 50, total: 120, prev: undefined, next: 50 })
  t.same(at('50'), { start: 50, size: 50, total: 120, prev: 0, next: 100 })
  t.same(at('100'), { start: 100, size: 50, total: 120, prev: 50, next: undefined })
  t.equal(at('73').start, 50, 'a start between pages is the page it falls in')
  t.equal(at('999999').start, 100, 'off the end: the last page')
  for (const bad of ['-50', 'abc', '', '1e3', '50.5', ' 50', ['50', '100'], '1234567890123456']) {
    t.equal(at(bad).start, 0, `${JSON.stringify(bad)}: the first page`)
  }
  t.same(at('50', 0), { start: 0, size: 50, total: 0, prev: undefined, next: undefined }, 'an empty list has one (empty) page')
  t.equal(pageWindow(null, 10, 5).start, 0)
  t.equal(pagination(at('0', 50), String), undefined, 'a list that fits one page is not paged')
  t.same(pagination(at('100'), (s) => `/x?start=${s}`), { from: 101, to: 120, total: 120, page: 3, pages: 3, prev: '/x?start=50' })
  t.equal(pageHref('/c/', { subject: 'Maths & Co', year: undefined }, 0), '/c/?subject=Maths+%26+Co', 'page 1 has no start')
  t.equal(pageHref('/c/', {}, 0), '/c/')
  t.equal(pageHref('/c/', { subject: 'Science', year: 'Year 7' }, 50), '/c/?subject=Science&year=Year+7&start=50')
})

t.test('a long category is paged: 50 a page, links to the neighbours, filters kept across pages', async (t) => {
  const { app } = await buildTestApp({ plugin: { catalog: new InMemoryCatalog(bigCatalog(1, 120)) } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const open = (query = '') => app.inject({ url: `${BIG}${query}`, headers: { cookie } })

  const first = await open()
  t.equal(first.statusCode, 200)
  t.same(listed(first.body), Array.from({ length: 50 }, (_, i) => i))
  t.match(first.body, 'Showing 1\u201350 of 120 resources.')
  t.match(first.body, '<nav class="pager" aria-label="Pages of resources"><p>Page 1 of 3</p>')
  t.match(first.body, `<a href="${BIG}?start=50" rel="next">Next page</a>`)
  t.notMatch(first.body, 'rel="prev"')
  t.match(first.body, '<title>Category 0 | Schools resources</title>')

  const last = await open('?start=100')
  t.same(listed(last.body), Array.from({ length: 20 }, (_, i) => 100 + i))
  t.match(last.body, `<a href="${BIG}?start=50" rel="prev">Previous page</a>`)
  t.notMatch(last.body, 'rel="next"')
  t.match(last.body, '<title>Category 0 (page 3 of 3) | Schools resources</title>')
  t.same(listed((await open('?start=banana')).body), listed(first.body), 'a start that is not a number: page 1')
  t.same(listed((await open('?start=5000')).body), listed(last.body), 'off the end: the last page')

  // 60 Science resources (the odd numbers): the filter is kept in the links, and starts again at page 1.
  const science = await open('?subject=Science')
  t.same(listed(science.body), Array.from({ length: 50 }, (_, i) => 2 * i + 1))
  t.match(science.body, 'Showing 1\u201350 of the 60 for Science (120 resources in all).')
  t.match(science.body, `<a href="${BIG}?subject=Science&amp;start=50" rel="next">Next page</a>`)
  const scienceTwo = await open('?subject=Science&start=50')
  t.same(listed(scienceTwo.body), Array.from({ length: 10 }, (_, i) => 101 + 2 * i))
  t.match(scienceTwo.body, '<title>Category 0 (Science, page 2 of 2) | Schools resources</title>')
  t.match(scienceTwo.body, `<a href="${BIG}?subject=Science" rel="prev">Previous page</a>`)
  t.notMatch(scienceTwo.body, '<form class="filters" method="get" action="[^"]*start', 'the filter form starts a new list at page 1')
})

t.test('a category that fits on one page looks as it did before paging', async (t) => {
  const { app } = await buildTestApp({ plugin: { catalog: new InMemoryCatalog(bigCatalog(1, 50)) } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const res = await app.inject({ url: BIG, headers: { cookie } })
  t.equal(listed(res.body).length, 50)
  t.match(res.body, '<p class="result-count">50 resources.</p>')
  t.notMatch(res.body, 'class="pager"')
})

t.test('the index is paged too, and so is its JSON when a client asks for a page', async (t) => {
  const { app } = await buildTestApp({ plugin: { catalog: new InMemoryCatalog(bigCatalog(120, 1)), pageSize: 40 } })
  t.teardown(() => app.close())
  const index = '/schools/resources/'
  const second = await app.inject({ url: `${index}?start=40` })
  t.equal(second.statusCode, 200)
  const slugs = [...second.body.matchAll(/resources\/(category-\d+)\/"/g)].map((m) => m[1])
  t.same(slugs, Array.from({ length: 40 }, (_, i) => `category-${40 + i}`))
  t.match(second.body, 'Showing categories 41\u201380 of 120.')
  t.match(second.body, `<a href="${index}" rel="prev">Previous page</a>`)
  t.match(second.body, `<a href="${index}?start=80" rel="next">Next page</a>`)

  const json = { accept: 'application/json' }
  const whole = (await app.inject({ url: index, headers: json })).json()
  t.equal(whole.categories.length, 120, 'without ?start= a JSON client gets the whole list, as before paging')
  t.notOk('page' in whole)
  const paged = (await app.inject({ url: `${index}?start=80`, headers: json })).json()
  t.same(paged.categories.map((c: { slug: string }) => c.slug), Array.from({ length: 40 }, (_, i) => `category-${80 + i}`))
  t.same(paged.page, { start: 80, size: 40, total: 120, prev: 40, next: null })
})

t.test('a category\'s JSON is paged when asked, with the filter applied first', async (t) => {
  const { app } = await buildTestApp({ plugin: { catalog: new InMemoryCatalog(bigCatalog(1, 120)) } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const headers = { cookie, accept: 'application/json' }
  const whole = (await app.inject({ url: BIG, headers })).json()
  t.equal(whole.resources.length, 120)
  t.notOk('page' in whole)
  const paged = (await app.inject({ url: `${BIG}?subject=Mathematics&start=0`, headers })).json()
  t.equal(paged.resources.length, 50)
  t.ok(paged.resources.every((r: { subject: string }) => r.subject === 'Mathematics'))
  t.same(paged.page, { start: 0, size: 50, total: 60, prev: null, next: 50 })
})

t.test('pageSize is checked at registration', async (t) => {
  for (const pageSize of [0, -1, 1.5, 1001, '50', Number.NaN, Infinity]) {
    await t.rejects(buildTestApp({ plugin: { pageSize: pageSize as number } }), { code: 'FST_SR_INVALID_OPTION', message: /"pageSize": must be a whole number from 1 to 1000/ }, `pageSize ${String(pageSize)}`)
  }
})

t.test('a district catalog: 5,000 categories and 100,000 resources give pages under 100 KB', async (t) => {
  // 1,000 categories of 100 resources, and 4,000 more without any: the index lists all 5,000.
  const data = bigCatalog(1000, 100)
  for (let c = 1000; c < 5000; c++) data.categories.push({ slug: `category-${c}`, title: `Category ${c}`, description: 'd', resources: [] })
  data.categories[0] = { ...data.categories[0], resources: resources(2000) }
  const { app } = await buildTestApp({ plugin: { catalog: new InMemoryCatalog(data) } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  for (const url of ['/schools/resources/', '/schools/resources/?start=4950', BIG, `${BIG}?start=1950`, `${BIG}?subject=Science&start=500`]) {
    const res = await app.inject({ url, headers: { cookie } })
    t.equal(res.statusCode, 200, url)
    t.ok(res.rawPayload.length <= 100 * 1024, `${url}: ${res.rawPayload.length} bytes`)
  }
})
