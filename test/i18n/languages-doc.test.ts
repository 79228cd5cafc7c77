// docs/languages.md lists exactly the keys of en.ts. When en.ts changes, rewrite its table with
//   KEY_TABLE=write npx tap --disable-coverage test/i18n/languages-doc.test.ts
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import en from '../../lib/i18n/locales/en.js'
import { shippedCatalogues } from '../../lib/i18n/locales/index.js'
import { keyTable, LANGUAGES_DOC, TABLE_END, TABLE_START, withKeyTable } from '../helpers/message-keys.js'

if (process.env.KEY_TABLE === 'write') writeFileSync(LANGUAGES_DOC, withKeyTable(readFileSync(LANGUAGES_DOC, 'utf8'), keyTable()))

const doc = readFileSync(LANGUAGES_DOC, 'utf8')

t.test('the key table lists exactly the keys of en.ts, with their English messages', async (t) => {
  const table = doc.slice(doc.indexOf(TABLE_START), doc.indexOf(TABLE_END) + TABLE_END.length)
  const listed = [...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1])
  t.same([...listed].sort(), Object.keys(en).sort(), 'the keys (regenerate: KEY_TABLE=write npx tap --disable-coverage test/i18n/languages-doc.test.ts)')
  t.equal(table, keyTable(), 'the table as generated (same command)')
})

t.test('the table of shipped locales names each one', async (t) => {
  for (const tag of Object.keys(shippedCatalogues)) t.match(doc, new RegExp(`^\\| \`${tag}\` \\|`, 'm'), tag)
})

t.test('withKeyTable refuses a doc without the markers', async (t) => {
  t.throws(() => withKeyTable('# nothing here', 'x'), /has no/)
  t.equal(withKeyTable(`a ${TABLE_START} old ${TABLE_END} b`, 'new'), 'a new b')
})
