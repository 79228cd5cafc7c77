import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { allowedBy, DEFAULT_ALLOW_LIST, parseAllowList } from '../src/allow-list.js'

// The shipped allow-list allows exactly the deliberate differences of docs/legacy-differences.md, and
// docs/parity.md quotes it whole.

const rules = parseAllowList(DEFAULT_ALLOW_LIST, 'default allow-list')

t.test('the reset link\'s page: 303 for the link, 400 without a usable one; nothing else', async (t) => {
  const allowed = (target: string, legacy: string, candidate: string, as: 'visitor' | 'member' = 'visitor') =>
    allowedBy(rules, target, as, { kind: 'status', legacy, candidate })?.from
  t.equal(allowed('/Security/changepassword?m=abc&t=def', '302', '303'), 'default allow-list:6')
  t.equal(allowed('/Security/changepassword', '200', '400'), 'default allow-list:7')
  t.equal(allowed('/account/changepassword', '200', '400'), 'default allow-list:7', 'in any login folder')
  t.equal(allowed('/Security/changepassword', '302', '303'), undefined, 'a 303 only for the link')
  t.equal(allowed('/Security/changepassword', '200', '500'), undefined)
  t.equal(allowed('/Security/lostpassword', '200', '400'), undefined, 'the lost-password page answers as the legacy one')
  t.equal(allowed('/schools/resources/', '302', '303'), undefined)
  t.equal(allowed('/Security/changepassword', '200', '400', 'member'), undefined, 'as an anonymous visitor only')
})

t.test('docs/parity.md quotes the shipped list', async (t) => {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'parity.md'), 'utf8')
  for (const line of DEFAULT_ALLOW_LIST.split('\n').slice(1).filter((l) => l !== '')) t.ok(doc.includes(`    ${line}\n`), line)
})
