import t from 'tap'
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'

// Full tier (the built lib/warnings.js in child processes): what Node itself prints for our warnings.
// The warning objects, in this process, are tested in warnings.test.ts.

const built = resolve(__dirname, '../dist/lib/warnings.js')

function stderrOf (flags: string[], code: string): string {
  // --warnings first: under tap on Node 26, @tapjs/processinfo puts --no-warnings into every child's
  // NODE_OPTIONS; the command line wins, and a test's own flags after it still can turn them off.
  const res = spawnSync(process.execPath, ['--warnings', ...flags, '-e', code], { encoding: 'utf8' })
  return res.stderr.replace(/\(node:\d+\)/g, '(node:PID)')
}

t.test('Node prints it exactly as it prints process.emitWarning', async (t) => {
  const ours = stderrOf([], `require(${JSON.stringify(built)}).emitProcessWarning('hello there', 'UserWarning', 'TEST_CODE')`)
  const node = stderrOf([], "process.emitWarning('hello there', { type: 'UserWarning', code: 'TEST_CODE' })")
  t.equal(ours, node)
  t.match(ours, /^\(node:PID\) \[TEST_CODE\] UserWarning: hello there\n/)
})

t.test('under --trace-warnings the stack is kept and starts at the caller', async (t) => {
  const ours = stderrOf(['--trace-warnings'], `function caller () { require(${JSON.stringify(built)}).emitProcessWarning('hello there', 'UserWarning', 'TEST_CODE') }; caller()`)
  t.match(ours, /^\(node:PID\) \[TEST_CODE\] UserWarning: hello there\n {4}at caller /)
  t.notMatch(ours, /emitProcessWarning/)
})
