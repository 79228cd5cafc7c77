// Every shipped locale, over every key of en.ts (keys added later are covered as they come).
import t from 'tap'
import { IntlMessageFormat } from 'intl-messageformat'
import { shippedCatalogues } from '../../lib/i18n/locales/index.js'
import en from '../../lib/i18n/locales/en.js'
import { argumentsOf } from '../../lib/i18n/translations.js'

type Ast = ReturnType<IntlMessageFormat['getAst']>

/** Each cardinal plural of a message (`{n, plural, ...}`, at any depth): its variable and its categories. */
function pluralsOf (ast: Ast, into: Array<{ name: string, categories: string[] }> = []): Array<{ name: string, categories: string[] }> {
  for (const element of ast) {
    if (element.type === 6 && element.pluralType === 'cardinal') into.push({ name: element.value, categories: Object.keys(element.options).filter((option) => !option.startsWith('=')) })
    if (element.type === 8) pluralsOf(element.children, into)
    if ('options' in element) for (const option of Object.values(element.options)) pluralsOf((option as { value: Ast }).value, into)
  }
  return into
}

const keys = Object.keys(en).sort()

t.test('the shipped locales: en and at least fr, es, de, cy', async (t) => {
  t.same(Object.keys(shippedCatalogues).sort(), ['cy', 'de', 'en', 'es', 'fr'])
})

for (const [tag, catalogue] of Object.entries(shippedCatalogues)) {
  t.test(`${tag}: every key of en.ts, no other, each parsing with English's placeholders, tags and plural categories`, async (t) => {
    t.same(Object.keys(catalogue).sort(), keys, 'the keys of en.ts')
    const categories = new Intl.PluralRules(tag).resolvedOptions().pluralCategories
    t.ok(categories.includes('other'))
    for (const key of keys) {
      const message = (catalogue as Record<string, string | undefined>)[key]
      if (typeof message !== 'string' || message.trim() === '') {
        t.fail(`${tag} ${key}: a message`)
        continue
      }
      let ast: Ast
      try {
        ast = new IntlMessageFormat(message, tag).getAst()
      } catch (error) {
        t.fail(`${tag} ${key} parses as ICU MessageFormat: ${(error as Error).message}`)
        continue
      }
      const english = new IntlMessageFormat(en[key as keyof typeof en], 'en').getAst()
      t.same([...argumentsOf(ast)].sort(), [...argumentsOf(english)].sort(), `${tag} ${key}: English's placeholders and tags`)
      for (const plural of pluralsOf(ast)) {
        t.same(plural.categories.filter((c) => categories.includes(c as Intl.LDMLPluralRule)).sort(), [...categories].sort(), `${tag} ${key}: {${plural.name}, plural} has every category of ${tag} (${categories.join(', ')})`)
        t.same(plural.categories.filter((c) => !categories.includes(c as Intl.LDMLPluralRule)), [], `${tag} ${key}: no category ${tag} does not have`)
      }
    }
  })
}

t.test('the plural check sees a missing category (Welsh has six)', async (t) => {
  const [plural] = pluralsOf(new IntlMessageFormat('{n, plural, =0 {dim} one {# ffeil} other {# ffeil}}', 'cy').getAst())
  const welsh = new Intl.PluralRules('cy').resolvedOptions().pluralCategories
  t.same([...welsh].sort(), ['few', 'many', 'one', 'other', 'two', 'zero'])
  t.same(plural.categories.sort(), ['one', 'other'], 'an exact =0 is not a category')
  t.notSame(plural.categories.sort(), [...welsh].sort())
})
