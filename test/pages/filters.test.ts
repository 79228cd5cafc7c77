import t from 'tap'
import { applyFilter, askedFilter, matchingResources, resourceFilter } from '../../lib/pages/filters.js'
import { InMemoryCatalog } from '../../lib/index.js'
import { demoCatalog } from '../../examples/demo-catalog.js'

const catalog = new InMemoryCatalog(demoCatalog)

t.test('the choices are the category\'s own subjects and year levels, in school order', async (t) => {
  const humanities = (await catalog.getCategory('humanities'))!
  const filter = resourceFilter(humanities, {})
  t.same(filter.subjects, ['Civics and citizenship', 'Geography', 'History'])
  t.same(filter.years, ['Year 3', 'Year 4', 'Year 5', 'Year 6', 'Year 9', 'Year 10'], 'Year 10 after Year 9, not after Year 1')
  t.equal(filter.subject, undefined)
  t.equal(filter.year, undefined)
  const wellbeing = (await catalog.getCategory('wellbeing'))!
  t.same(resourceFilter(wellbeing, {}).years, ['Foundation', 'Year 1', 'Year 2', 'Year 5', 'Year 6'])
})

t.test('known values filter; unknown, empty, repeated or non-string values mean "all"', async (t) => {
  const maths = (await catalog.getCategory('maths'))!
  const both = resourceFilter(maths, { subject: 'Mathematics', year: 'Year 7' })
  t.same([both.subject, both.year], ['Mathematics', 'Year 7'])
  t.same(applyFilter(maths.resources, both).map((r) => r.id), ['maths-linear-equations'])
  for (const query of [
    { subject: 'Science', year: 'Year 11' },
    { subject: '', year: '' },
    { subject: ['Mathematics', 'Mathematics'], year: ['Year 7'] },
    { subject: { $ne: 1 } },
    null,
    undefined,
    'subject=Mathematics'
  ]) {
    const f = resourceFilter(maths, query)
    t.same([f.subject, f.year], [undefined, undefined], JSON.stringify(query) ?? 'undefined')
    // What a paged read asks the catalog for: any string but '' (the catalog's choices decide the rest).
    t.same(askedFilter(query), typeof query === 'object' && query?.subject === 'Science' ? { subject: 'Science', year: 'Year 11' } : {})
    t.equal(applyFilter(maths.resources, f).length, 4)
  }
  const yearOnly = resourceFilter(maths, { year: 'Year 4' })
  t.same(applyFilter(maths.resources, yearOnly).map((r) => r.id), ['maths-fractions-wall'])
})

t.test('matchingResources: worked out once per record and filter, the whole list unfiltered', async (t) => {
  const maths = (await catalog.getCategory('maths'))!
  t.equal(matchingResources(maths, { subject: undefined, year: undefined }), maths.resources)
  const sevens = matchingResources(maths, { subject: undefined, year: 'Year 7' })
  t.same(sevens, applyFilter(maths.resources, { subject: undefined, year: 'Year 7' }))
  t.equal(matchingResources(maths, { subject: undefined, year: 'Year 7' }), sevens, 'the same list again')
  t.ok(Object.isFrozen(sevens))
  t.same(matchingResources(maths, { subject: 'Mathematics', year: 'Year 7' }).map((r) => r.id), ['maths-linear-equations'])
})

t.test('matchingResources: the same list as applyFilter, worked out once per category record and filter', async (t) => {
  const humanities = (await catalog.getCategory('humanities'))!
  const { subjects, years } = resourceFilter(humanities, {})
  for (const query of [{}, { subject: subjects[0] }, { year: years[0] }, { subject: subjects[1], year: years[1] }]) {
    const filter = resourceFilter(humanities, query)
    const list = matchingResources(humanities, filter)
    t.same(list, applyFilter(humanities.resources, filter), JSON.stringify(query))
    t.equal(matchingResources(humanities, resourceFilter(humanities, query)), list, `${JSON.stringify(query)}: kept`)
  }
  // Another record (a catalog's new copy after a change) has lists of its own.
  const copy = { ...humanities, resources: humanities.resources.slice(0, 1) }
  t.equal(matchingResources(copy, resourceFilter(copy, {})).length, 1)
})
