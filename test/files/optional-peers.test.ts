import t from 'tap'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

// @fastify/static and content-disposition are optional peers, loaded only when the files option is set
// (docs/package.md). A host app whose node_modules holds the built package with its dependencies and
// required peers, and neither of those two: without files it runs; with files, app.ready() says what
// to install.

const root = resolve(__dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const host = realpathSync(mkdtempSync(join(tmpdir(), 'schools-no-static-')))
t.teardown(() => rmSync(host, { recursive: true, force: true }))

const installed = join(host, 'node_modules', 'fastify-schools-resources')
mkdirSync(installed, { recursive: true })
cpSync(join(root, 'dist', 'lib'), join(installed, 'dist', 'lib'), { recursive: true })
cpSync(join(root, 'package.json'), join(installed, 'package.json'))
const required = Object.keys(pkg.peerDependencies).filter((name) => pkg.peerDependenciesMeta[name]?.optional !== true)
// The session plugins are optional peers too (any session plugin, or none): this host uses @fastify/session.
for (const name of new Set([...Object.keys(pkg.dependencies), ...required, '@fastify/cookie', '@fastify/session'])) {
  mkdirSync(dirname(join(host, 'node_modules', name)), { recursive: true })
  symlinkSync(join(root, 'node_modules', name), join(host, 'node_modules', name))
}

function runHost (files: boolean, oidc = false): { status: number | null, stdout: string, stderr: string } {
  const script = join(host, `app-${files}-${oidc}.mjs`)
  writeFileSync(script, `
import Fastify from 'fastify'
import cookie from '@fastify/cookie'
import session from '@fastify/session'
import plugin, { InMemoryCatalog } from 'fastify-schools-resources'
const app = Fastify()
await app.register(cookie${oidc ? ", { secret: 'y'.repeat(32) }" : ''})
await app.register(session, { secret: 'x'.repeat(32), cookie: { secure: false } })
try {
  await app.register(plugin, { catalog: new InMemoryCatalog({ categories: [] }), ${oidc
    ? "baseUrl: 'https://www.example.org', passwordSignIn: false, oidc: { providers: [{ id: 'g', label: 'G', issuer: 'https://accounts.google.com', clientId: 'c' }], resolveMember: async () => null }"
    : 'signIn: false'}${files ? `, files: { root: ${JSON.stringify(host)} }` : ''} })
  await app.ready()
} catch (err) {
  process.stdout.write(JSON.stringify({ code: err.code, message: err.message }))
  process.exit(0)
}
const res = await app.inject('/schools/resources/')
process.stdout.write(JSON.stringify({ status: res.statusCode }))
`)
  const res = spawnSync(process.execPath, [script], { cwd: host, encoding: 'utf8', timeout: 30_000 })
  return { status: res.status, stdout: res.stdout, stderr: res.stderr }
}

t.test('the host app cannot reach the two packages', async (t) => {
  for (const name of ['@fastify/static', 'content-disposition', 'openid-client']) {
    const res = spawnSync(process.execPath, ['-e', `require.resolve(${JSON.stringify(name)})`], { cwd: installed, encoding: 'utf8' })
    t.not(res.status, 0, `${name} is not installed`)
  }
})

t.test('a site without files runs without @fastify/static and content-disposition', async (t) => {
  const res = runHost(false)
  t.equal(res.status, 0, res.stderr)
  t.same(JSON.parse(res.stdout), { status: 200 })
})

t.test('a site with files fails app.ready() with FST_SR_MISSING_PACKAGE, naming what to install', async (t) => {
  const res = runHost(true)
  t.equal(res.status, 0, res.stderr)
  const error = JSON.parse(res.stdout)
  t.equal(error.code, 'FST_SR_MISSING_PACKAGE')
  t.match(error.message, /needs the package (@fastify\/static|content-disposition), which is not installed: npm i @fastify\/static content-disposition/)
})

t.test('a site with oidc fails app.ready() naming openid-client; one without runs without it (above)', async (t) => {
  const res = runHost(false, true)
  t.equal(res.status, 0, res.stderr)
  const error = JSON.parse(res.stdout)
  t.equal(error.code, 'FST_SR_MISSING_PACKAGE')
  t.equal(error.message, 'fastify-schools-resources: the oidc option needs the package openid-client, which is not installed: npm i openid-client')
})
