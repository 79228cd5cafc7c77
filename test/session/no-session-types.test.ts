// A TypeScript host with no session plugin installed (its own authentication, signIn: false) compiles
// against the published declarations with skipLibCheck off: nothing the main entry declares needs
// @fastify/session (or @fastify/cookie) to resolve.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const root = resolve(__dirname, '../..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

const CONSUMER = `import Fastify, { type FastifyRequest } from 'fastify'
import schoolsResources, { InMemoryCatalog, safeBackUrl, type Member } from 'fastify-schools-resources'

async function getMember (request: FastifyRequest): Promise<Member | null> {
  const name = request.headers['x-member']
  return typeof name === 'string' ? { id: name, name, groups: ['staff'] } : null
}

const app = Fastify()
await app.register(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }), signIn: false, getMember, loginPath: '/login' })
app.get('/staff', { config: { membersOnly: { groups: ['staff'] } } }, async () => 'staff')
const back: string | undefined = safeBackUrl('/schools/resources/', 'https://www.example.org')
void back
// @ts-expect-error getMember must return a member, not a string
await app.register(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }), signIn: false, getMember: async () => 'nobody' })
`

t.test('a host without @fastify/session compiles with skipLibCheck: false', async (t) => {
  const dist = join(root, 'dist/lib/index.d.ts')
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run "npm run build" first (npm test does)`)
  const dir = mkdtempSync(join(tmpdir(), 'schools-resources-no-session-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const modules = join(dir, 'node_modules')
  // The package as npm installs it: a copy (a symlink would resolve its imports from this repository's
  // node_modules, where @fastify/session is), with only its own dependencies and fastify beside it.
  const self = join(modules, 'fastify-schools-resources')
  mkdirSync(self, { recursive: true })
  cpSync(join(root, 'dist/lib'), join(self, 'dist/lib'), { recursive: true, filter: (src) => !/\.js(\.map)?$|\.mjs(\.map)?$/.test(src) })
  writeFileSync(join(self, 'package.json'), JSON.stringify({ name: pkg.name, types: pkg.types, exports: pkg.exports }))
  for (const name of ['fastify', '@types/node', ...Object.keys(pkg.dependencies)]) {
    mkdirSync(join(modules, name, '..'), { recursive: true })
    symlinkSync(join(root, 'node_modules', name), join(modules, name), 'dir')
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'host.ts'), CONSUMER)
  const tsc = join(root, 'node_modules/typescript/bin/tsc')
  const run = (file: string) => spawnSync(process.execPath, [tsc, '--ignoreConfig', '--noEmit', '--strict', '--skipLibCheck', 'false', '--module', 'nodenext',
    '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', file], { cwd: dir, encoding: 'utf8', timeout: 60_000 })

  const res = run('host.ts')
  t.equal(res.status, 0, `${res.stdout}${res.stderr}`)
  t.notOk(existsSync(join(modules, '@fastify/session')), '@fastify/session cannot be resolved there')

  // The check can fail: a host that imports @fastify/session there does not compile.
  writeFileSync(join(dir, 'with-session.ts'), 'import fastifySession from \'@fastify/session\'\nvoid fastifySession\n')
  const without = run('with-session.ts')
  t.not(without.status, 0)
  t.match(without.stdout, /Cannot find module '@fastify\/session'/)
})
