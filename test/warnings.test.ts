import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { inspect } from 'node:util'
import * as warnings from '../lib/warnings.js'
import { emitProcessWarning, forgetHostMistake, MAX_REMEMBERED_MISTAKES, warnHostMistakeOnce } from '../lib/warnings.js'

t.test('the warning event carries the same name, code and message as process.emitWarning gives', async (t) => {
  const seen: Array<Error & { code?: string }> = []
  const listener = (w: Error & { code?: string }) => { if (w.code === 'TEST_CODE') seen.push(w) }
  process.on('warning', listener)
  t.teardown(() => { process.off('warning', listener) })
  emitProcessWarning('hello there', 'UserWarning', 'TEST_CODE')
  process.emitWarning('hello there', { type: 'UserWarning', code: 'TEST_CODE' })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(seen.length, 2)
  for (const w of seen) {
    t.ok(w instanceof Error)
    t.equal(w.name, 'UserWarning')
    t.equal(w.code, 'TEST_CODE')
    t.equal(w.message, 'hello there')
    t.equal(String(w), 'UserWarning: hello there')
    t.match(inspect(w), /^(\[?)UserWarning: hello there/, 'inspected as an error')
  }
  t.equal(seen[0].stack, 'UserWarning: hello there', 'ours: the stack is its first line, no frames')
  t.not(seen[0], seen[1])
})

t.test('every call raises a warning object of its own', async (t) => {
  const seen: Error[] = []
  const listener = (w: Error & { code?: string }) => { if (w.code === 'TEST_EACH') seen.push(w) }
  process.on('warning', listener)
  t.teardown(() => { process.off('warning', listener) })
  emitProcessWarning('one', 'UserWarning', 'TEST_EACH')
  emitProcessWarning('two', 'OtherWarning', 'TEST_EACH')
  emitProcessWarning('three', 'UserWarning', 'TEST_EACH')
  await new Promise((resolve) => setImmediate(resolve))
  t.same(seen.map((w) => `${w.name}: ${w.message}`), ['UserWarning: one', 'OtherWarning: two', 'UserWarning: three'])
  t.equal(new Set(seen).size, 3)
  t.ok(seen.every((w) => w instanceof Error))
})

t.test('with --trace-warnings set in this process, the stack is captured here too', async (t) => {
  const p = process as { traceProcessWarnings?: boolean }
  const saved = p.traceProcessWarnings
  p.traceProcessWarnings = true
  const seen: Error[] = []
  const listener = (w: Error & { code?: string }) => { if (w.code === 'TEST_TRACE') seen.push(w) }
  process.on('warning', listener)
  t.teardown(() => { process.off('warning', listener); p.traceProcessWarnings = saved })
  function caller (): void { emitProcessWarning('traced', 'UserWarning', 'TEST_TRACE') }
  caller()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(seen.length, 1)
  t.match(seen[0].stack, /^UserWarning: traced\n {4}at caller /)
})

t.test('warnHostMistakeOnce: one line per key, bounded, per logger', async (t) => {
  const lines: Array<{ fields: object, message: string }> = []
  const log = { warn (fields: object, message: string) { lines.push({ fields, message }) } }
  const other = { warn (fields: object, message: string) { lines.push({ fields, message }) } }
  t.equal(warnHostMistakeOnce(log, 'a', { code: 'X' }, 'first'), true)
  t.equal(warnHostMistakeOnce(log, 'a', { code: 'X' }, 'again'), false)
  t.equal(warnHostMistakeOnce(other, 'a', { code: 'X' }, 'other app'), true)
  t.same(lines.map((l) => l.message), ['first', 'other app'])
  // Past the bound the oldest key is forgotten (and may be reported again); the newest are kept.
  for (let i = 0; i < MAX_REMEMBERED_MISTAKES; i++) warnHostMistakeOnce(log, `k${i}`, { code: 'X' }, `k${i}`)
  t.equal(warnHostMistakeOnce(log, `k${MAX_REMEMBERED_MISTAKES - 1}`, { code: 'X' }, 'newest'), false)
  t.equal(warnHostMistakeOnce(log, 'a', { code: 'X' }, 'a again'), true)
  // Forgotten (a file served again): said again when it comes back.
  forgetHostMistake(log, 'a')
  t.equal(warnHostMistakeOnce(log, 'a', { code: 'X' }, 'a back'), true)
  forgetHostMistake({ warn () {} }, 'never seen')
})

t.test('docs/architecture.md names every UserWarning lib/ raises, and how many', async (t) => {
  const lib = resolve(__dirname, '../lib')
  const raised = new Set<string>()
  for (const file of readdirSync(lib, { recursive: true }) as string[]) {
    if (!file.endsWith('.ts')) continue
    for (const [, name] of readFileSync(resolve(lib, file), 'utf8').matchAll(/emitProcessWarning\([^;]*?'UserWarning', ([A-Z_]+)\)/g)) {
      raised.add((warnings as unknown as Record<string, string>)[name])
    }
  }
  t.ok(raised.size > 1, `found the warnings raised: ${[...raised].join(', ')}`)
  const entry = /warnings\.ts\s+the (\w+) UserWarnings \(([^)]*)\)/.exec(readFileSync(resolve(__dirname, '../docs/architecture.md'), 'utf8'))
  t.ok(entry, 'the folder list describes warnings.ts')
  // The list may go on over the next line of the drawing (its │ and indent are not names).
  t.same(entry![2].split(/[,\s│]+/).sort(), [...raised].sort())
  t.equal(entry![1], ['none', 'one', 'two', 'three', 'four'][raised.size])
})
