import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { keptTick } from '../examples/next-tick-shape.js'

// The example server keeps one of Node's tick objects alive (examples/next-tick-shape.ts, measured in
// docs/performance.md): what it keeps must be the object Node queued for process.nextTick, or it keeps
// nothing that matters, and it must be loaded before anything else the server loads.

t.test('what is kept is the tick object its callback ran under', async (t) => {
  await new Promise((resolve) => setImmediate(resolve))
  const tick = keptTick.resource as Record<string | symbol, unknown> | undefined
  t.type(tick, 'object')
  t.type(keptTick.asyncId, 'number')
  // Node's tick object: the callback and its arguments, and its ids under symbol keys.
  t.same(Object.keys(tick!).sort(), ['args', 'callback'])
  t.equal((tick!.callback as { name?: string }).name, 'keepTickObject')
  t.equal(tick!.args, undefined)
  const ids = Object.getOwnPropertySymbols(tick!).map((key) => tick![key])
  t.ok(ids.includes(keptTick.asyncId), 'one of its symbol keys holds the async id the callback ran under')
})

t.test('the example server loads it first', async (t) => {
  const source = readFileSync(join(__dirname, '..', 'examples', 'server.ts'), 'utf8')
  const imports = [...source.matchAll(/^import\s.*$/gm)].map((m) => m[0])
  t.equal(imports[0], "import './next-tick-shape.js'")
})
