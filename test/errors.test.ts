import t from 'tap'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { errorCodes, REDIRECT_CONFLICT_WARNING } from '../lib/index.js'

const doc = readFileSync(resolve(__dirname, '..', 'docs', 'errors.md'), 'utf8')

t.test('docs/errors.md has one section per error code, and no other', async (t) => {
  const documented = [...doc.matchAll(/^## (FST_SR_\w+)\s*$/gm)].map((m) => m[1]).sort()
  t.same(documented, Object.keys(errorCodes).sort())
  t.match(doc, new RegExp(`^### ${REDIRECT_CONFLICT_WARNING}\\s*$`, 'm'), 'the warning has its section too')
})

t.test('each code is a @fastify/error constructor whose code is its name, with a status', async (t) => {
  for (const [name, FastifyError] of Object.entries(errorCodes)) {
    const error = new (FastifyError as new (...args: string[]) => Error & { code: string, statusCode: number })('a', 'b')
    t.ok(error instanceof Error, name)
    t.equal(error.code, name)
    t.equal(error.name, 'FastifyError')
    t.ok(error.statusCode >= 400 && error.statusCode < 600, `${name} has an HTTP status`)
    t.match(error.message, /\S/)
    // The documented status is the one the error carries.
    const section = doc.slice(doc.indexOf(`## ${name}`)).split(/^## /m)[1]
    t.match(section, new RegExp(`\\b${error.statusCode}\\b`), `${name}: docs/errors.md gives status ${error.statusCode}`)
  }
})

t.test('no bare Error or TypeError is made in lib/', async (t) => {
  const { readdirSync } = await import('node:fs')
  const files = (readdirSync(resolve(__dirname, '..', 'lib'), { recursive: true }) as string[]).filter((f) => /\.m?ts$/.test(f))
  const bare: string[] = []
  for (const file of files) {
    const source = readFileSync(resolve(__dirname, '..', 'lib', file), 'utf8')
    // Made anywhere, not only thrown: an error passed to done(), reject() or a callback leaves lib/ too.
    for (const m of source.matchAll(/new (Error|TypeError|RangeError|SyntaxError)\(/g)) bare.push(`${file}: ${m[0]}`)
  }
  t.same(bare, [])
})
