import t, { type Test } from 'tap'
import { DatabaseSync } from 'node:sqlite'
import { InMemoryCatalog, type Catalog, type CatalogData, type CategoriesPage, type CategoriesPageQuery, type Category, type CategoryWithResources, type Member, type Resource, type ResourcesPage, type ResourcesPageQuery } from '../../lib/index.js'
import { buildTestApp, signIn, TEACHER, TEACHER_MEMBER, type BuildOptions } from '../helpers/app.js'
import { wholeRecordOf } from '../../lib/section/catalog.js'

// Issue 23: a catalog backed by a database reads one page of the index and of a category (the optional
// paged reads of Catalog). The catalog here is a real one: SQL in SQLite (node:sqlite, built into Node),
// with LIMIT/OFFSET, COUNT and the filters in the query. InMemoryCatalog implements the same reads, and
// a catalog without them is read whole, as before: all three must give the same pages.

const INDEX = '/schools/resources/'
const PAGE = '/schools/resources/resources/'
const PAGE_SIZE = 10
const SUBJECTS = ['Mathematics', 'Science', 'English']

function data (): CatalogData {
  const categories: CategoryWithResources[] = []
  for (let c = 0; c < 24; c++) {
    const slug = c === 0 ? 'maths' : c === 5 ? 'staff-room' : `topic-${c}`
    // maths: 45 resources (5 pages); staff-room: staff only; topic-3: empty.
    const size = c === 0 ? 45 : c === 3 ? 0 : 3
    const resources: Resource[] = Array.from({ length: size }, (_, i) => ({
      id: `${slug}-${i}`,
      title: `Sheet ${i} of ${slug}`,
      summary: `Summary ${i}.`,
      ...(i % 7 === 6 ? { file: `${slug}/sheet-${i}.pdf` } : { url: `https://www.example.org/${slug}/${i}.pdf` }),
      subject: SUBJECTS[i % SUBJECTS.length],
      yearLevels: [`Year ${7 + (i % 4)}`, ...(i % 2 === 0 ? [`Year ${8 + (i % 4)}`] : [])],
      format: 'Worksheet'
    }))
    categories.push({ slug, title: `Category ${slug}`, description: `About ${slug}.`, ...(c === 5 ? { audience: ['staff'] } : {}), resources })
  }
  return { categories }
}

/** What a database row gives: a new object per call, and columns the section does not know. */
interface Reads { pages: Array<{ slug?: string } & (CategoriesPageQuery | ResourcesPageQuery)>, rowsRead: number, whole: number }

/** A catalog in SQL: one query per page, the filters and the visibility in the WHERE clause. */
function sqlCatalog ({ categories }: CatalogData): Catalog & { reads: Reads } {
  const db = new DatabaseSync(':memory:')
  db.exec(`
    CREATE TABLE categories (position INTEGER PRIMARY KEY, slug TEXT UNIQUE NOT NULL, title TEXT NOT NULL,
      description TEXT NOT NULL, audience TEXT, created_at TEXT NOT NULL DEFAULT '2026-01-01');
    CREATE TABLE resources (category TEXT NOT NULL, position INTEGER NOT NULL, id TEXT NOT NULL, title TEXT NOT NULL,
      summary TEXT NOT NULL, url TEXT, file TEXT, subject TEXT NOT NULL, year_levels TEXT NOT NULL, format TEXT NOT NULL,
      PRIMARY KEY (category, position));`)
  const addCategory = db.prepare('INSERT INTO categories (position, slug, title, description, audience) VALUES (?, ?, ?, ?, ?)')
  const addResource = db.prepare('INSERT INTO resources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
  categories.forEach((c, i) => {
    addCategory.run(i, c.slug, c.title, c.description, c.audience === undefined ? null : JSON.stringify(c.audience))
    c.resources.forEach((r, j) => addResource.run(c.slug, j, r.id, r.title, r.summary, r.url ?? null, r.file ?? null, r.subject, JSON.stringify(r.yearLevels), r.format))
  })
  const reads: Reads = { pages: [], rowsRead: 0, whole: 0 }
  type Row = Record<string, string | number | null>
  const category = (row: Row) => ({ slug: row.slug, title: row.title, description: row.description, createdAt: row.created_at, ...(row.audience === null ? {} : { audience: JSON.parse(row.audience as string) }) }) as unknown as Category
  const resource = (row: Row) => {
    reads.rowsRead++
    return { id: row.id, title: row.title, summary: row.summary, url: row.url, file: row.file, subject: row.subject, yearLevels: JSON.parse(row.year_levels as string), format: row.format, category: row.category } as unknown as Resource
  }
  const VISIBLE = 'audience IS NULL OR EXISTS (SELECT 1 FROM json_each(categories.audience) WHERE value IN (SELECT value FROM json_each(:groups)))'
  const MATCHING = 'category = :slug AND (:subject IS NULL OR subject = :subject) AND (:year IS NULL OR EXISTS (SELECT 1 FROM json_each(year_levels) WHERE value = :year))'
  const one = db.prepare('SELECT * FROM categories WHERE slug = ?')
  return {
    reads,
    async listCategories () {
      reads.whole++
      return (db.prepare('SELECT * FROM categories ORDER BY position').all() as Row[]).map(category)
    },
    async getCategory (slug) {
      reads.whole++
      const row = one.get(slug) as Row | undefined
      if (row === undefined) return undefined
      return { ...category(row), resources: (db.prepare('SELECT * FROM resources WHERE category = ? ORDER BY position').all(slug) as Row[]).map(resource) }
    },
    async listCategoriesPage (query) {
      reads.pages.push(query)
      const where = query.visibleTo === undefined ? '1' : VISIBLE
      const params: Record<string, string> = query.visibleTo === undefined ? {} : { groups: JSON.stringify(query.visibleTo) }
      const rows = db.prepare(`SELECT * FROM categories WHERE ${where} ORDER BY position LIMIT :limit OFFSET :offset`).all({ ...params, limit: query.limit, offset: query.offset }) as Row[]
      const { total } = db.prepare(`SELECT count(*) AS total FROM categories WHERE ${where}`).get(params) as { total: number }
      return { categories: rows.map(category), total }
    },
    async getCategoryPage (slug, query) {
      reads.pages.push({ slug, ...query })
      const row = one.get(slug) as Row | undefined
      // What an ORM gives for no row.
      if (row === undefined) return null as unknown as undefined
      const params = { slug, subject: query.subject ?? null, year: query.year ?? null }
      const rows = db.prepare(`SELECT * FROM resources WHERE ${MATCHING} ORDER BY position LIMIT :limit OFFSET :offset`).all({ ...params, limit: query.limit, offset: query.offset }) as Row[]
      const { total } = db.prepare(`SELECT count(*) AS total FROM resources WHERE ${MATCHING}`).get(params) as { total: number }
      const { count } = db.prepare('SELECT count(*) AS count FROM resources WHERE category = ?').get(slug) as { count: number }
      const subjects = (db.prepare('SELECT DISTINCT subject FROM resources WHERE category = ?').all(slug) as Row[]).map((r) => r.subject as string)
      const years = (db.prepare('SELECT DISTINCT value FROM resources, json_each(year_levels) WHERE category = ?').all(slug) as Row[]).map((r) => r.value as string)
      return { category: category(row), resources: rows.map(resource), total, count, subjects, years }
    }
  }
}

/** The same catalog without its paged reads: the old shape, read whole. */
function wholeOnly (catalog: Catalog): Catalog {
  return { listCategories: () => catalog.listCategories(), getCategory: (slug) => catalog.getCategory(slug) }
}

const STAFF: Member = { ...TEACHER_MEMBER, groups: ['staff'] }

async function build (t: Test, catalog: Catalog, opts: { member?: Member, plugin?: BuildOptions['plugin'] } = {}) {
  const logs: Array<{ level: number, code?: string, field?: string, msg: string }> = []
  const member = opts.member ?? TEACHER_MEMBER
  const { app } = await buildTestApp({
    fastify: { logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } },
    plugin: {
      catalog,
      conflictLog: false,
      pageSize: PAGE_SIZE,
      authenticate: async ({ email, password }) => email === TEACHER.email && password === TEACHER.password ? member : null,
      ...opts.plugin
    }
  })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const get = (url: string, accept = 'text/html') => app.inject({ url, headers: { cookie, accept } })
  const warnings = () => logs.filter((l) => l.level === 40 && l.code === 'FST_SR_INVALID_CATALOG_RECORD')
  return { app, cookie, get, warnings, logs }
}

/** A page without what differs per session: the member's CSRF token. */
const normalised = (body: string) => body.replace(/name="_csrf" value="[^"]*"/g, '')

const URLS = [
  INDEX, `${INDEX}?start=10`, `${INDEX}?start=20`, `${INDEX}?start=9999`, `${INDEX}?start=-3`, `${INDEX}?start=15`,
  `${PAGE}maths/`, `${PAGE}maths/?start=10`, `${PAGE}maths/?start=40`, `${PAGE}maths/?start=41`, `${PAGE}maths/?start=999`,
  `${PAGE}maths/?subject=Science`, `${PAGE}maths/?subject=Science&start=10`, `${PAGE}maths/?subject=Science&start=500`,
  `${PAGE}maths/?year=Year%208&start=10`, `${PAGE}maths/?subject=English&year=Year%209`, `${PAGE}maths/?subject=Art&start=20`,
  `${PAGE}maths/?subject=Science&year=Year%201&start=30`, `${PAGE}maths/?subject=Art&year=Year%208&start=10`, `${PAGE}maths/?subject=&year=`, `${PAGE}maths/?subject=Science&subject=English`,
  `${PAGE}topic-3/`, `${PAGE}topic-3/?start=10`, `${PAGE}topic-1/?year=Year%207`, `${PAGE}topic-1`
]

t.test('a catalog in SQL, InMemoryCatalog and a catalog read whole give the same pages and JSON', async (t) => {
  const sql = sqlCatalog(data())
  const apps = [await build(t, sql), await build(t, new InMemoryCatalog(data())), await build(t, wholeOnly(new InMemoryCatalog(data())))]
  for (const url of URLS) {
    for (const accept of ['text/html', 'application/json']) {
      // JSON asks for a page with start (without it, the whole list: below).
      const asked = accept === 'text/html' || url.includes('start=') ? url : `${url}${url.includes('?') ? '&' : '?'}start=0`
      const answers = await Promise.all(apps.map((a) => a.get(asked, accept)))
      t.same(answers.map((a) => a.statusCode), [200, 200, 200], `${url} ${accept}`)
      const [fromSql, fromMemory, fromWhole] = answers.map((a) => normalised(a.body))
      t.equal(fromSql, fromWhole, `${url} ${accept}: SQL as whole`)
      t.equal(fromMemory, fromWhole, `${url} ${accept}: InMemoryCatalog as whole`)
    }
  }
  // JSON that asks for no page gets the whole list: from getCategory / listCategories, as before paging.
  for (const url of [INDEX, `${PAGE}maths/`, `${PAGE}maths/?subject=Science`]) {
    const answers = await Promise.all(apps.map((a) => a.get(url, 'application/json')))
    t.equal(answers[0].body, answers[2].body, `${url}: the whole list`)
    t.equal(answers[1].body, answers[2].body)
    t.notOk('page' in answers[0].json())
  }
  t.equal(apps.map((a) => a.warnings().length).join(), '0,0,0', 'nothing to warn about')
})

t.test('the SQL catalog is asked for one page, never the whole category, on the pages', async (t) => {
  const sql = sqlCatalog(data())
  const { get } = await build(t, sql)
  sql.reads.pages.length = 0
  sql.reads.rowsRead = 0
  const page = await get(`${PAGE}maths/?subject=Science&start=10`)
  t.equal(page.statusCode, 200)
  t.same(sql.reads.pages, [{ slug: 'maths', offset: 10, limit: PAGE_SIZE, subject: 'Science' }])
  t.equal(sql.reads.rowsRead, 5, 'the second page of 15 Science resources: 5 rows')
  t.match(page.body, 'Showing 11–15 of the 15 for Science (45 resources in all).')
  t.match(page.body, '<a href="/schools/resources/resources/maths/?subject=Science" rel="prev">')
  t.equal(sql.reads.whole, 0, 'no whole read')

  // A subject that is none of the category's choices means "all"; a start off the end the last page.
  sql.reads.pages.length = 0
  const stale = await get(`${PAGE}maths/?subject=Art&start=999`)
  t.equal(stale.statusCode, 200)
  t.same(sql.reads.pages.map((read) => ({ offset: read.offset, subject: (read as ResourcesPageQuery).subject })), [{ offset: 990, subject: 'Art' }, { offset: 990, subject: undefined }, { offset: 40, subject: undefined }])
  t.match(stale.body, 'Showing 41–45 of 45 resources.')

  const index = await get(`${INDEX}?start=20`)
  t.match(index.body, 'Category topic-23')
  t.notMatch(index.body, 'Category topic-19')
  const json = (await get(`${INDEX}?start=20`, 'application/json')).json()
  t.same(json.page, { start: 20, size: PAGE_SIZE, total: 24, prev: 10, next: null })
  t.equal(sql.reads.whole, 0, 'still none')

  // A category that is not there (the ORM's null) sends the member to the index.
  for (const url of [`${PAGE}nothing-here/`, `${PAGE}Not_A_Slug/`]) {
    const missing = await get(url)
    t.equal(missing.statusCode, 302)
    t.equal(missing.headers.location, INDEX)
  }
  // The download route reads the whole category (the resource and the audience).
  const file = await get('/schools/resources/files/maths/maths-6/sheet-6.pdf')
  t.equal(file.statusCode, 404, 'the demo files directory has no such file')
  t.equal(sql.reads.whole, 1)
})

t.test('restricted categories: locked (mark), or left out of the pages and the totals (hide)', async (t) => {
  for (const catalog of [() => sqlCatalog(data()), () => new InMemoryCatalog(data())]) {
    const marked = await build(t, catalog())
    const locked = await marked.get(INDEX)
    t.match(locked.body, /class="locked"><h2><a href="\/schools\/resources\/resources\/staff-room\/"/)
    t.equal((await marked.get(`${PAGE}staff-room/`)).statusCode, 403)

    const hidden = await build(t, catalog(), { plugin: { restrictedCategories: 'hide' } })
    const first = await hidden.get(INDEX)
    t.notMatch(first.body, 'staff-room')
    t.match(first.body, 'Category topic-10', 'the page fills up with the next category')
    t.same((await hidden.get(`${INDEX}?start=0`, 'application/json')).json().page.total, 23)
    t.equal((await hidden.get(`${PAGE}staff-room/`)).statusCode, 302, 'answered as a category that does not exist')

    const staff = await build(t, catalog(), { member: STAFF, plugin: { restrictedCategories: 'hide' } })
    t.match((await staff.get(INDEX)).body, 'staff-room')
    t.same((await staff.get(`${INDEX}?start=0`, 'application/json')).json().page.total, 24)
    t.equal((await staff.get(`${PAGE}staff-room/`)).statusCode, 200)
  }
  // A visitor who is not signed in sees the open categories only.
  const visitor = await build(t, sqlCatalog(data()), { plugin: { restrictedCategories: 'hide' } })
  const anonymous = await visitor.app.inject({ url: `${INDEX}?start=0`, headers: { accept: 'application/json' } })
  t.equal(anonymous.json().page.total, 23)
})

t.test('InMemoryCatalog\'s paged reads', async (t) => {
  const catalog = new InMemoryCatalog(data())
  const page = await catalog.listCategoriesPage({ offset: 20, limit: 10 })
  t.same(page.categories.map((c) => c.slug), ['topic-20', 'topic-21', 'topic-22', 'topic-23'])
  t.equal(page.total, 24)
  t.equal((await catalog.listCategoriesPage({ offset: 0, limit: 30, visibleTo: [] })).total, 23)
  t.equal((await catalog.listCategoriesPage({ offset: 0, limit: 30, visibleTo: ['staff', 'staff'] })).total, 24)
  // Many sets of groups, one after another: each gets its own list.
  for (let i = 0; i < 40; i++) t.equal((await catalog.listCategoriesPage({ offset: 0, limit: 1, visibleTo: [`group-${i % 35}`, ...(i === 39 ? ['staff'] : [])] })).total, i === 39 ? 24 : 23)
  t.equal((await catalog.listCategoriesPage({ offset: 0, limit: 1, visibleTo: ['group-3'] })).total, 23)
  const open = new InMemoryCatalog({ categories: data().categories.filter((c) => c.audience === undefined) })
  t.equal((await open.listCategoriesPage({ offset: 0, limit: 1, visibleTo: [] })).total, 23, 'no audience anywhere: everyone sees the whole list')

  const maths = await catalog.getCategoryPage('maths', { offset: 10, limit: 10, subject: 'Science', year: 'Year 8' })
  t.same(maths?.resources.map((r) => r.id), [])
  t.equal(maths?.total, 8)
  t.equal(maths?.count, 45)
  t.same(maths?.subjects, ['English', 'Mathematics', 'Science'])
  t.same(maths?.category, { slug: 'maths', title: 'Category maths', description: 'About maths.' })
  t.equal((await catalog.getCategoryPage('maths', { offset: 0, limit: 10, subject: 'Science', year: 'Year 8' }))?.resources.length, 8)
  t.equal((await catalog.getCategoryPage('maths', { offset: 0, limit: 10, year: 'Year 1' }))?.total, 0, 'no such year level: nothing matches')
  t.equal(await catalog.getCategoryPage('none', { offset: 0, limit: 10 }), undefined)
  const again = await catalog.getCategoryPage('maths', { offset: 0, limit: 10, subject: 'Science' })
  t.equal(again?.resources[0], (await catalog.getCategoryPage('maths', { offset: 0, limit: 10, subject: 'Science' }))?.resources[0], 'the same frozen records')
})

t.test('InMemoryCatalog\'s pages: the documented fields only, and a copy of one is not taken for it', async (t) => {
  const catalog = new InMemoryCatalog(data())
  const page = (await catalog.getCategoryPage('maths', { offset: 0, limit: 10 }))!
  t.same(Object.keys(page), ['category', 'resources', 'total', 'count', 'subjects', 'years'])
  t.same(Object.keys(JSON.parse(JSON.stringify(page))), ['category', 'resources', 'total', 'count', 'subjects', 'years'], 'what a JSON client gets')
  t.equal(wholeRecordOf(page), await catalog.getCategory('maths'), 'the page knows the whole record it was cut from')
  t.equal(wholeRecordOf({ ...page }), undefined, 'a host\'s copy does not: the section checks it as the host\'s own')
  const index = await catalog.listCategoriesPage({ offset: 0, limit: 5 })
  t.same(Object.keys(index), ['categories', 'total'])
  t.equal(Object.getOwnPropertySymbols(page).length + Object.getOwnPropertySymbols(index).length, 0, 'nothing under a symbol for other code to copy')

  // A host catalog that trims InMemoryCatalog's pages: what it gives is what members see, on every request.
  const inner = new InMemoryCatalog(data())
  const trimmed: Catalog = {
    listCategories: () => inner.listCategories(),
    getCategory: (slug) => inner.getCategory(slug),
    listCategoriesPage: async (query) => { const p = await inner.listCategoriesPage(query); return { ...p, categories: p.categories.filter((c) => c.slug !== 'maths'), total: p.total - 1 } },
    getCategoryPage: async (slug, query) => { const p = await inner.getCategoryPage(slug, query); return p && { ...p, resources: p.resources.slice(1), total: p.total - 1 } }
  }
  const first = (await inner.getCategoryPage('maths', { offset: 0, limit: 10 }))!.resources[0].title
  const { get } = await build(t, trimmed)
  for (let i = 0; i < 2; i++) {
    const body = (await get(`${PAGE}maths/`)).body
    t.notMatch(body, first, `request ${i + 1}: the resource the host left out is not shown`)
    t.match(body, (await inner.getCategoryPage('maths', { offset: 0, limit: 10 }))!.resources[1].title)
  }
})

/** A host catalog whose paged answers are what the test says, for the boundary's checks. */
function scripted (answer: (query: ResourcesPageQuery & { slug: string }) => unknown, list: (query: CategoriesPageQuery) => unknown = () => ({ categories: [], total: 0 })): Catalog {
  const inner = new InMemoryCatalog(data())
  return {
    listCategories: () => inner.listCategories(),
    getCategory: (slug) => inner.getCategory(slug),
    listCategoriesPage: async (query) => list(query) as CategoriesPage,
    getCategoryPage: async (slug, query) => answer({ slug, ...query }) as ResourcesPage
  }
}

const row = (id: string, fields: Record<string, unknown> = {}) => ({ id, title: `Sheet ${id}`, summary: 'A sheet.', url: `https://www.example.org/${id}`, subject: 'Science', yearLevels: ['Year 7'], format: 'Worksheet', ...fields })
const good = (fields: Record<string, unknown> = {}) => ({ category: { slug: 'maths', title: 'Maths', description: 'Numbers.' }, resources: [row('a'), row('b')], total: 2, count: 2, subjects: ['Science'], years: ['Year 7'], ...fields })

t.test('a paged answer that cannot be right fails closed: the 500, one warn line naming the field', async (t) => {
  // One category per case (its slug names it), all in one app.
  const cases: Array<[string, (slug: string) => unknown, string, string]> = [
    ['a-string', (slug) => slug, '', 'must resolve to { category, resources, total, count, subjects, years }'],
    ['total-too-small', () => ({ total: 1, count: 2 }), '.total', 'is 1, fewer than the offset asked for (0) and the 2 resources given'],
    ['over-the-limit', () => ({ resources: Array.from({ length: 11 }, (_, i) => row(`r${i}`)), total: 11, count: 11 }), '.resources', 'holds 11 resources, over the limit of 10 asked for'],
    ['total-not-a-number', () => ({ total: '2' }), '.total', 'must be a whole number of 0 or more, got a string'],
    ['total-negative', () => ({ total: -1 }), '.total', 'must be a whole number of 0 or more, got -1'],
    ['count-below-total', () => ({ count: 1 }), '.count', 'is 1, fewer than total (2)'],
    ['resources-null', () => ({ resources: null }), '.resources', 'must be an array, got null'],
    ['no-category', () => ({ category: undefined }), '.category', 'must be an object'],
    ['another-slug', () => ({ category: { slug: 'science', title: 'S', description: 'S.' } }), '.category.slug', 'must be the slug asked for, got "science"'],
    ['subjects-a-string', () => ({ subjects: 'Science' }), '.subjects', 'must be an array of strings, got a string'],
    ['a-year-that-is-no-string', () => ({ years: ['Year 7', 8] }), '.years[1]', 'must be a non-empty string']
  ]
  const answers = new Map(cases.map(([slug, answer]) => [slug, answer]))
  const { get, warnings } = await build(t, scripted(({ slug }) => {
    const answer = answers.get(slug)!(slug)
    return typeof answer === 'string' ? answer : good({ category: { slug, title: 'Maths', description: 'Numbers.' }, ...answer as object })
  }))
  for (const [slug, , suffix, why] of cases) {
    const field = `getCategoryPage("${slug}")${suffix}`
    for (const accept of ['text/html', 'application/json']) {
      for (let i = 0; i < 2; i++) {
        const res = await get(`${PAGE}${slug}/?start=0`, accept)
        t.equal(res.statusCode, 500, `${slug}: ${accept}`)
        t.match(res.body, 'FST_SR_INVALID_CATALOG_RECORD')
        t.notMatch(res.body, /Sheet|Numbers/, 'nothing of the answer')
      }
    }
    const lines = warnings().filter((w) => w.field === field)
    t.equal(lines.length, 1, `${slug}: one line`)
    t.match(lines[0]?.msg, `the catalog's ${field} ${why}`, slug)
    t.match(lines[0]?.msg, 'members who open the category get the 500 page until it is fixed')
  }
  t.equal(warnings().length, cases.length, 'and no other')
})

t.test('a catalog whose paged read throws: the section\'s 500, the error logged, nothing of it sent', async (t) => {
  const { get, logs } = await build(t, scripted(() => { throw new Error('SQLITE_BUSY (password=hunter2)') }, () => { throw new Error('connection refused') }))
  for (const url of [`${PAGE}maths/`, INDEX]) {
    const res = await get(url)
    t.equal(res.statusCode, 500, url)
    t.notMatch(res.body, /hunter2|SQLITE|refused/)
  }
  t.ok(logs.some((l) => l.level === 50 && /SQLITE_BUSY/.test(JSON.stringify(l))), 'the error is in the log')
})

t.test('a page of the index that cannot be right fails closed; bad entries are left out', async (t) => {
  const category = (slug: string, fields: Record<string, unknown> = {}) => ({ slug, title: `Category ${slug}`, description: 'About it.', ...fields })
  const cases: Array<[unknown, string, string]> = [
    [null, 'listCategoriesPage()', 'must resolve to { categories, total }, got null'],
    [{ categories: {}, total: 0 }, 'listCategoriesPage().categories', 'must be an array, got an object'],
    [{ categories: [category('a')], total: 0 }, 'listCategoriesPage().total', 'is 0, fewer than the offset asked for (0) and the 1 categories given'],
    [{ categories: [category('a')] }, 'listCategoriesPage().total', 'must be a whole number of 0 or more, got undefined'],
    [{ categories: Array.from({ length: 11 }, (_, i) => category(`c${i}`)), total: 11 }, 'listCategoriesPage().categories', 'holds 11 categories, over the limit of 10']
  ]
  for (const [answer, field, why] of cases) {
    const { get, warnings } = await build(t, scripted(() => undefined, () => answer))
    t.equal((await get(INDEX)).statusCode, 500, field)
    t.equal((await get(INDEX, 'application/json')).statusCode, 200, 'JSON asking for no page reads the whole list')
    t.equal(warnings().length, 1)
    t.equal(warnings()[0]?.field, field)
    t.match(warnings()[0]?.msg, `the catalog's ${field} ${why}`)
    t.match(warnings()[0]?.msg, '; the section index answers with the 500 page until it does')
  }

  // Entries: a bad one and one outside visibleTo are left out; a short page is shown, with a line.
  let asked: CategoriesPageQuery | undefined
  const { get, warnings } = await build(t, scripted(() => undefined, (query) => {
    asked = query
    return { categories: [category('a'), category('b', { title: '' }), category('secret', { audience: ['staff'] }), category('c')], total: 30 }
  }), { plugin: { restrictedCategories: 'hide' } })
  for (let i = 0; i < 2; i++) {
    const res = await get(INDEX)
    t.equal(res.statusCode, 200)
    t.match(res.body, /Category a[\s\S]*Category c/)
    t.notMatch(res.body, /Category b|secret/)
  }
  t.same(asked, { offset: 0, limit: PAGE_SIZE, visibleTo: [] })
  t.same(warnings().map((w) => w.field).sort(), ['listCategoriesPage().categories[1].title', 'listCategoriesPage().categories[2].audience', 'listCategoriesPage().total'])
  t.match(warnings().find((w) => w.field === 'listCategoriesPage().total')?.msg, 'gave 4 categories at offset 0 where its total (30) says 10')
  t.match(warnings().find((w) => w.field === 'listCategoriesPage().categories[2].audience')?.msg, 'outside the groups of query.visibleTo')
  t.match(warnings().find((w) => w.field === 'listCategoriesPage().categories[1].title')?.msg, 'a category of the catalog\'s listCategoriesPage() is left out of the section index')
})

t.test('bad resources, and resources that do not match the filters, are left out of a page with a line each', async (t) => {
  const { get, warnings } = await build(t, scripted(({ offset }) => good({
    resources: [row('a'), row('js', { url: 'javascript:alert(1)' }), row('art', { subject: 'Art' }), row('old', { yearLevels: ['Year 1'] }), row('b')],
    total: offset + 5 + (offset === 0 ? 20 : 0),
    count: 40,
    subjects: ['Science', 'Art', 'Science'],
    years: ['Year 10', 'Year 7', 'Year 1']
  })))
  const res = await get(`${PAGE}maths/?subject=Science&year=Year%207`)
  t.equal(res.statusCode, 200)
  t.match(res.body, /Sheet a[\s\S]*Sheet b/)
  t.notMatch(res.body, /javascript|Sheet art|Sheet old/)
  t.match(res.body, /<option>Year 1<\/option><option selected>Year 7<\/option><option>Year 10<\/option>/, 'choices in school order, once each')
  t.match(res.body, '(40 resources in all)', 'the count comes from the catalog')
  const json = (await get(`${PAGE}maths/?subject=Science&year=Year%207&start=0`, 'application/json')).json()
  t.same(json.resources.map((r: { id: string }) => r.id), ['a', 'b'])
  t.same(json.filter, { subject: 'Science', year: 'Year 7', subjects: ['Art', 'Science'], years: ['Year 1', 'Year 7', 'Year 10'] })
  t.same(json.page, { start: 0, size: PAGE_SIZE, total: 25, prev: null, next: 10 })
  const fields = warnings().map((w) => w.field)
  t.ok(fields.includes('getCategoryPage("maths").resources[1].url'), 'the unsafe link')
  t.equal(fields.filter((f) => f === 'getCategoryPage("maths").resources').length, 1, 'one line for the resources outside the filters')
  t.match(warnings().find((w) => w.field === 'getCategoryPage("maths").resources')?.msg, 'gave "art", which does not match the filters asked for')
  t.match(warnings().find((w) => w.field === 'getCategoryPage("maths").total')?.msg, 'gave 5 resources at offset 0 where its total (25) says 10')
  t.equal(warnings().length, 3)
})

t.test('a page that is not cached: a catalog\'s change shows on the next request; a host\'s views get the page', async (t) => {
  let title = 'Sheet one'
  const { get } = await build(t, scripted(() => good({ resources: [row('a', { title })], total: 1, count: 1 })))
  t.match((await get(`${PAGE}maths/`)).body, 'Sheet one')
  title = 'Sheet two'
  t.match((await get(`${PAGE}maths/`)).body, 'Sheet two')
  const seen: unknown[] = []
  const custom = await build(t, scripted(() => good()), {
    plugin: { views: { category: (data, ctx) => { seen.push({ count: data.count, resources: data.resources?.length, all: data.category.resources.length }); return { title: 'x', body: ctx.member?.name ?? '' } } } }
  })
  t.equal((await custom.get(`${PAGE}maths/`)).statusCode, 200)
  t.same(seen, [{ count: 2, resources: 2, all: 2 }])
})
