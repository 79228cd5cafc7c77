import t from 'tap'
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { NOBODY, nobodyCannotRun } from '../helpers/as-nobody.js'

// Full tier (a child process): the file routes' answer to a file the server may not open, end to end.
// The in-process tier reaches the same lines with files that cannot be opened for other reasons
// (ENOTDIR, ELOOP: file-routes.test.ts).

// Root reads every file, so the EACCES test runs its app in a child process as nobody when the suite runs
// as root; where nobody cannot run Node or read the project, it is skipped, saying why.
const UNREADABLE_FIXTURE = resolve(__dirname, '../fixtures/unreadable-file.cjs')
const asRoot = process.getuid?.() === 0
const cannotRunAsNobody = asRoot ? nobodyCannotRun(process.execPath, UNREADABLE_FIXTURE) : undefined
if (cannotRunAsNobody !== undefined) process.stderr.write(`\n*** SKIPPED the EACCES test: ${cannotRunAsNobody} ***\n\n`)

t.test('a file the server may not read (EACCES): the 404 page and a warning, not a 500 that names the path', { skip: cannotRunAsNobody ?? false }, async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'schools-unreadable-')))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  chmodSync(dir, 0o755)
  writeFileSync(join(dir, 'locked.pdf'), '%PDF-1.4 locked')
  chmodSync(join(dir, 'locked.pdf'), 0o000)
  // stderr kept out of the report: tap's process-info hook, in the child too, cannot write under .tap/ as nobody.
  const out = execFileSync(process.execPath, [UNREADABLE_FIXTURE, dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asRoot ? NOBODY : {})
  })
  const { html, json, logs } = JSON.parse(out) as { html: { status: number, body: string }, json: { status: number, body: string }, logs: string[] }
  t.equal(html.status, 404)
  t.match(html.body, /<h1>Page not found<\/h1>/)
  t.equal(json.status, 404)
  t.notMatch(json.body, dir, 'the path stays in the log')
  t.equal(logs.length, 1)
  t.match(logs[0], 'the file of resource "locked" (category "maths") "locked.pdf" cannot be opened (EACCES)')
})

t.test('the EACCES test\'s probe: nobody can run this Node; not one under a directory nobody may not enter', { skip: asRoot ? false : 'only root can run a child as nobody' }, async (t) => {
  // A home directory as nvm leaves it (0700), with the Node the suite runs on inside it.
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'schools-home-')))
  t.teardown(() => rmSync(home, { recursive: true, force: true }))
  chmodSync(home, 0o700)
  symlinkSync(process.execPath, join(home, 'node'))
  t.equal(nobodyCannotRun(process.execPath, UNREADABLE_FIXTURE), cannotRunAsNobody, 'the same answer as the suite got')
  const why = nobodyCannotRun(join(home, 'node'), UNREADABLE_FIXTURE)
  t.match(why, `user nobody (uid 65534) cannot run ${join(home, 'node')} on ${UNREADABLE_FIXTURE} (EACCES)`)
  t.match(why, 'as nvm installs it')
  const unreadable = join(home, 'fixture.cjs')
  writeFileSync(unreadable, '')
  t.match(nobodyCannotRun(process.execPath, unreadable), /cannot run .* on .*fixture\.cjs \(.*EACCES/, 'nor a script nobody may not read')
})
