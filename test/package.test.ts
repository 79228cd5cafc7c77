import t from 'tap'
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'

// The built package as users load it (package self-reference, through the "exports" map).
const root = resolve(__dirname, '..')

function run (args: string[]): { status: number | null, stdout: string, stderr: string } {
  const res = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 30_000 })
  return { status: res.status, stdout: res.stdout, stderr: res.stderr }
}

// Registers the plugin as a host would and reports the anonymous redirect it answers with.
const scenario = (load: string) => `${load}
const Fastify = FastifyModule.default ?? FastifyModule
const app = Fastify()
await app.register(cookie.default ?? cookie)
await app.register(session.default ?? session, { secret: 'x'.repeat(32), cookie: { secure: false } })
await app.register(plugin, { catalog: new InMemoryCatalog({ categories: [] }), signIn: false, baseUrl: 'https://www.example.org' })
const res = await app.inject('/schools/resources/resources/maths/')
process.stdout.write(JSON.stringify({ status: res.statusCode, location: res.headers.location, redirectOnce: typeof redirectOnce }))
`

const expected = { status: 302, location: 'https://www.example.org/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F', redirectOnce: 'function' }

t.test('require() gets the plugin, its named exports and the default', async (t) => {
  const res = run(['-e', `(async () => {
    const pkg = require('fastify-schools-resources')
    if (pkg.default !== pkg.fastifySchoolsResources) throw new Error('default and named export differ')
    if (pkg.default[Symbol.for('plugin-meta')].name !== 'fastify-schools-resources') throw new Error('plugin meta missing')
    const FastifyModule = require('fastify'), cookie = require('@fastify/cookie'), session = require('@fastify/session')
    const { InMemoryCatalog, redirectOnce } = pkg
    const plugin = pkg
    ${scenario('')}
  })().catch((e) => { console.error(e); process.exit(1) })`])
  t.equal(res.status, 0, res.stderr)
  t.same(JSON.parse(res.stdout), expected, 'app.register(require(...)) works')
})

t.test('ESM import gets the plugin as the default export and the same copy as require()', async (t) => {
  const res = run(['--input-type=module', '-e', scenario(`
    import plugin, { InMemoryCatalog, redirectOnce, fastifySchoolsResources } from 'fastify-schools-resources'
    import { createRequire } from 'node:module'
    import FastifyModule from 'fastify'
    import cookie from '@fastify/cookie'
    import session from '@fastify/session'
    if (createRequire(import.meta.url)('fastify-schools-resources').default !== plugin) throw new Error('two copies')
    if (plugin !== fastifySchoolsResources) throw new Error('default and named export differ')
  `)])
  t.equal(res.status, 0, res.stderr)
  t.same(JSON.parse(res.stdout), expected)
})

t.test('TypeScript consumers (ESM and CommonJS) type-check against the built declarations', async (t) => {
  // The fixtures carry @ts-expect-error lines, so a type that got too loose fails this too.
  const tsc = resolve(root, 'node_modules/typescript/bin/tsc')
  const common = ['--ignoreConfig', '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node']
  for (const file of ['test/fixtures/consumer.mts', 'test/fixtures/consumer.cts']) {
    const res = run([tsc, ...common, file])
    t.equal(res.status, 0, `${file}: ${res.stdout}${res.stderr}`)
  }
})
