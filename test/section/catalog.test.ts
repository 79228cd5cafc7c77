import t from 'tap'
import { InMemoryCatalog, type CatalogData, type CategoryWithResources, type Resource } from '../../lib/index.js'
import { isSlug } from '../../lib/section/catalog.js'

const resource: Resource = {
  id: 'r1',
  title: 'Fraction wall',
  summary: 'Printable fraction wall.',
  url: 'https://www.example.org/fraction-wall.pdf',
  subject: 'Mathematics',
  yearLevels: ['Year 3'],
  format: 'Worksheet'
}
const category: CategoryWithResources = { slug: 'maths', title: 'Mathematics', description: 'Numbers.', resources: [resource] }

t.test('lists categories and finds one with its resources', async (t) => {
  const catalog = new InMemoryCatalog({ categories: [category, { ...category, slug: 'english', title: 'English', resources: [] }] })
  t.same(await catalog.listCategories(), [
    { slug: 'maths', title: 'Mathematics', description: 'Numbers.' },
    { slug: 'english', title: 'English', description: 'Numbers.' }
  ])
  t.same(await catalog.getCategory('maths'), category)
  t.equal(await catalog.getCategory('astrology'), undefined)
  t.equal(await catalog.getCategory('__proto__'), undefined)
})

t.test('records are copies and frozen: callers cannot change the catalog', async (t) => {
  const data: CatalogData = { categories: [{ ...category, resources: [{ ...resource, yearLevels: ['Year 3'] }] }] }
  const catalog = new InMemoryCatalog(data)
  ;(data.categories[0] as { title: string }).title = 'Changed'
  const found = (await catalog.getCategory('maths'))!
  t.equal(found.title, 'Mathematics')
  t.ok(Object.isFrozen(found) && Object.isFrozen(found.resources) && Object.isFrozen(found.resources[0]) && Object.isFrozen(found.resources[0].yearLevels))
  t.ok(Object.isFrozen(await catalog.listCategories()))
})

t.test('bad data fails at construction with the place and the reason', async (t) => {
  const bad: Array<[unknown, RegExp]> = [
    [null, /data must be \{ categories/],
    [{ categories: 'x' }, /data must be/],
    [{ categories: [null] }, /categories\[0\] must be an object/],
    [{ categories: [{ ...category, slug: 'Maths' }] }, /categories\[0\]\.slug must be lower-case/],
    [{ categories: [{ ...category, slug: 'a--b' }] }, /slug must be lower-case/],
    [{ categories: [{ ...category, slug: 7 }] }, /categories\[0\]\.slug must be a non-empty string/],
    [{ categories: [category, category] }, /categories\[1\]\.slug "maths" is used twice/],
    [{ categories: [{ ...category, title: '' }] }, /categories\[0\]\.title must be a non-empty string/],
    [{ categories: [{ ...category, resources: {} }] }, /categories\[0\]\.resources must be an array/],
    [{ categories: [{ ...category, resources: [resource, resource] }] }, /resources\[1\]\.id "r1" is used twice/],
    [{ categories: [{ ...category, resources: ['x'] }] }, /resources\[0\] must be an object/],
    [{ categories: [{ ...category, resources: [{ ...resource, yearLevels: [] }] }] }, /yearLevels must be a non-empty array/],
    [{ categories: [{ ...category, resources: [{ ...resource, yearLevels: [''] }] }] }, /yearLevels\[0\] must be a non-empty string/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: 'javascript:alert(1)' }] }] }, /url must be an http\(s\) URL or a path/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: '//evil.example/x' }] }] }, /url must be an http\(s\) URL/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: 'not a url' }] }] }, /url must be an http\(s\) URL/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: 'https://[' }] }] }, /url must be an http\(s\) URL/],
    // Issue 18: browsers read "\\" as "/" and drop tabs and newlines, so these lead to evil.example.
    [{ categories: [{ ...category, resources: [{ ...resource, url: '/\\evil.example/x' }] }] }, /url must be an http\(s\) URL or a path on this site, with no space, control character or "\\", got "\/\\\\evil.example\/x"/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: '/\t/evil.example/x' }] }] }, /url must be an http\(s\) URL or a path/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: '/\n/evil.example/x' }] }] }, /url must be an http\(s\) URL or a path/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: '/ /x' }] }] }, /url must be an http\(s\) URL or a path/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: 'https://www.example.org/\u0085x' }] }] }, /url must be an http\(s\) URL or a path/],
    [{ categories: [{ ...category, resources: [{ ...resource, url: 'java\tscript:alert(1)' }] }] }, /url must be an http\(s\) URL or a path/],
    [{ categories: [{ ...category, resources: [{ ...resource, format: undefined }] }] }, /format must be a non-empty string/],
    // A link to `/files/<category>/../<name>` would be resolved away by the browser.
    [{ categories: [{ ...category, resources: [{ ...resource, id: '..' }] }] }, /resources\[0\]\.id must not be "\.\."/],
    [{ categories: [{ ...category, resources: [{ ...resource, id: '.' }] }] }, /resources\[0\]\.id must not be "\."/]
  ]
  for (const [data, message] of bad) {
    t.throws(() => new InMemoryCatalog(data as CatalogData), { code: 'FST_SR_INVALID_CATALOG', message }, String(message))
  }
  for (const url of ['/files/local.pdf', '/files/a%20b.pdf?x=1#top', '/..//still-here.example', 'http://www.example.org/x']) {
    t.doesNotThrow(() => new InMemoryCatalog({ categories: [{ ...category, resources: [{ ...resource, url }] }] }), `${url}: fine`)
  }
})

t.test('isSlug', async (t) => {
  for (const ok of ['maths', 'year-7', 'a1', 'x'.repeat(100)]) t.ok(isSlug(ok), ok)
  for (const no of ['', 'Maths', '-a', 'a-', 'a--b', 'a_b', 'a.b', 'a/b', 'x'.repeat(101), 'é']) t.notOk(isSlug(no), no)
})

t.test('a resource is a url or a file: file paths are relative, named segments inside the files directory', async (t) => {
  const { url: _url, ...fields } = resource
  const withFile = (file: unknown) => ({ categories: [{ ...category, resources: [{ ...fields, file }] }] }) as CatalogData
  const catalog = new InMemoryCatalog(withFile('maths/Fraction wall (Year 3).pdf'))
  const found = (await catalog.getCategory('maths'))!.resources[0]
  t.same(found, { ...fields, file: 'maths/Fraction wall (Year 3).pdf' })
  t.notOk('url' in found, 'no url key on a file resource')
  t.ok(Object.isFrozen(found))
  for (const ok of ['sheet.pdf', 'a/b/c/d.png', '.hidden/notes.pdf', 'a..b/c...pdf', 'Année 7/été.pdf', 'C:x.pdf']) {
    t.doesNotThrow(() => new InMemoryCatalog(withFile(ok)), ok)
  }
  const bad: Array<[unknown, RegExp]> = [
    ['', /resources\[0\]\.file must be a non-empty string/],
    [7, /resources\[0\]\.file must be a non-empty string/],
    ['/etc/passwd', /file must be relative to the files directory, not an absolute path, got "\/etc\/passwd"/],
    ['C:/x.pdf', /file must be relative to the files directory/],
    ['C:\\x.pdf', /file must use "\/" between folders, not "\\"/],
    ['maths\\sheet.pdf', /file must use "\/" between folders/],
    ['\\\\server\\share\\x.pdf', /file must use "\/" between folders/],
    ['../secret.txt', /file must not contain a "\.\." segment, got "\.\.\/secret\.txt"/],
    ['maths/../../secret.txt', /file must not contain a "\.\." segment/],
    ['maths/..', /file must not contain a "\.\." segment/],
    ['maths/sheet.pdf\u0000.png', /file must not contain a NUL character/],
    ['maths//sheet.pdf', /file must be folder and file names joined by single "\/", with no "\." segment and no trailing "\/"/],
    ['./sheet.pdf', /no "\." segment/],
    ['maths/', /no trailing "\/"/]
  ]
  for (const [file, message] of bad) {
    t.throws(() => new InMemoryCatalog(withFile(file)), { code: 'FST_SR_INVALID_CATALOG', message }, JSON.stringify(file))
  }
  t.throws(() => new InMemoryCatalog({ categories: [{ ...category, resources: [{ ...resource, file: 'maths/sheet.pdf' }] }] } as unknown as CatalogData),
    { code: 'FST_SR_INVALID_CATALOG', message: 'fastify-schools-resources: InMemoryCatalog: categories[0].resources[0] must have a url or a file, not both' })
  t.throws(() => new InMemoryCatalog({ categories: [{ ...category, resources: [fields] }] } as unknown as CatalogData),
    { code: 'FST_SR_INVALID_CATALOG', message: 'fastify-schools-resources: InMemoryCatalog: categories[0].resources[0] must have a url (an address) or a file (a path in the files directory)' })
})
