import t from 'tap'
import { execFile, execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { startStandIn } from './legacy-stand-in.js'
import { SPEC_ADDRESSES, tempDir } from './run-cli.js'

// The command as a user gets it: the packed tarball (built first by `npm test`), unpacked with no
// node_modules beside it, run by the `bin` that package.json names.

const root = resolve(__dirname, '..', '..')
const run = promisify(execFile)

t.test('the packed package\'s bin runs the checker with nothing installed', async (t) => {
  const { dir, file } = tempDir(t)
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))[0]
  execFileSync('tar', ['-xzf', join(dir, packed.filename), '-C', dir])
  const pkg = JSON.parse(readFileSync(join(dir, 'package', 'package.json'), 'utf8'))
  const bin = join(dir, 'package', pkg.bin['fastify-schools-resources'])
  t.match(readFileSync(bin, 'utf8'), /^#!\/usr\/bin\/env node\n/, 'a shebang, so npx can run it')

  const same = await startStandIn()
  t.teardown(same.close)
  const other = await startStandIn({ plant: { status: 'maths' } })
  t.teardown(other.close)
  const addresses = file('a.txt', SPEC_ADDRESSES.join('\n'))
  const args = (candidate: string) => [bin, 'parity', '--legacy', same.origin, '--candidate', candidate, '--addresses', addresses, '--rate', '1000']
  const ok = await run(process.execPath, args(same.origin), { cwd: dir })
  t.match(ok.stdout, /No differences beyond the allow-list\.\n\nExit code 0\./)
  t.match(ok.stderr, /^parity: 1\/8 addresses compared, 0 differ\n/, 'plain progress lines when stderr is not a terminal')
  const differs = await run(process.execPath, args(other.origin), { cwd: dir }).then(() => 0, (err: { code: number, stdout: string }) => {
    t.match(err.stdout, /status code\s+1\n\s+\/schools\/resources\/resources\/maths\/\n\s+legacy:\s+302\n\s+candidate: 301/)
    return err.code
  })
  t.equal(differs, 1)
  const usage = await run(process.execPath, [bin, 'parity', '--legacy', 'nope'], { cwd: dir }).then(() => 0, (err: { code: number, stderr: string }) => {
    t.match(err.stderr, /^parity: --legacy and --candidate are both required/)
    return err.code
  })
  t.equal(usage, 2)
})
