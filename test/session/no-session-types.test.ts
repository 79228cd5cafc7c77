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

// A type test (tstyche, as test/types/ are) run where only the package, its dependencies and fastify are
// installed. tstyche refuses \`any\` in an expectation, so a declaration that lost an import to a missing
// peer (and turned into \`any\` under skipLibCheck) fails here as well as under skipLibCheck: false.
const CONSUMER = `import Fastify, { type FastifyRequest } from 'fastify'
import { expect, test } from 'tstyche'
import schoolsResources, { InMemoryCatalog, MemoryAttemptStore, safeBackUrl, type FastifySchoolsResourcesOptions, type Member } from 'fastify-schools-resources'
import { RedisAttemptStore, type RedisCommandClient } from 'fastify-schools-resources/redis'

async function getMember (request: FastifyRequest): Promise<Member | null> {
  const name = request.headers['x-member']
  return typeof name === 'string' ? { id: name, name, groups: ['staff'] } : null
}
const catalog = new InMemoryCatalog({ categories: [] })
const app = Fastify()

test('a host with its own authentication registers the section', () => {
  expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, signIn: false, getMember, loginPath: '/login' })
  expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, signIn: false, getMember: async () => 'nobody' })
  expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, getMember })
  expect(app.get).type.toBeCallableWith('/staff', { config: { membersOnly: { groups: ['staff'] } } }, async () => 'staff')
  expect(safeBackUrl('/schools/resources/', 'https://www.example.org')).type.toBe<string | undefined>()
})

test('the types it sees are whole, not any', () => {
  expect(schoolsResources).type.toBeAssignableTo<(...args: never[]) => unknown>()
  expect<FastifySchoolsResourcesOptions['catalog']>().type.toHaveProperty('getCategory')
  expect<FastifyRequest['schoolsMember']>().type.toBe<Member | undefined>()
})

test('the section adds no session to its requests', () => {
  expect<FastifyRequest>().type.not.toHaveProperty('session')
})

test('the sign-in limits can count in Redis without @fastify/session', () => {
  const client: RedisCommandClient = { sendCommand: async () => null }
  expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, signIn: false, getMember, lockout: { store: new RedisAttemptStore(client) } })
  expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, signIn: false, getMember, lockout: { store: new MemoryAttemptStore() } })
})

test('the oidc option and reply.signInMember need nothing of openid-client', () => {
  const oidc = { providers: [{ id: 'google', label: 'Google', issuer: 'https://accounts.google.com', clientId: 'c' }], resolveMember: async (claims: { email?: string }) => claims.email === undefined ? null : { id: claims.email, name: claims.email } }
  expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, passwordSignIn: false, oidc })
  expect<FastifySchoolsResourcesOptions>().type.toBeAssignableFrom({ catalog, passwordSignIn: false as const, oidc })
  expect(import('openid-client')).type.toRaiseError("Cannot find module 'openid-client'")
})

test('@fastify/session is not there to be found', () => {
  expect(import('@fastify/session')).type.toRaiseError("Cannot find module '@fastify/session'")
})
`

t.test('a host without @fastify/session compiles with skipLibCheck: false', async (t) => {
  const dist = join(root, 'dist/lib/index.d.ts')
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run "npm run build" first (npm run test:all does)`)
  const dir = mkdtempSync(join(tmpdir(), 'schools-resources-no-session-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const modules = join(dir, 'node_modules')
  // The package as npm installs it: a copy (a symlink would resolve its imports from this repository's
  // node_modules, where @fastify/session is), with only its own dependencies and fastify beside it.
  const self = join(modules, 'fastify-schools-resources')
  mkdirSync(self, { recursive: true })
  cpSync(join(root, 'dist/lib'), join(self, 'dist/lib'), { recursive: true, filter: (src) => !/\.js(\.map)?$|\.mjs(\.map)?$/.test(src) })
  writeFileSync(join(self, 'package.json'), JSON.stringify({ name: pkg.name, types: pkg.types, exports: pkg.exports }))
  // tstyche and typescript run the test; its imports resolve from this directory, where neither session plugin is.
  for (const name of ['fastify', '@types/node', 'tstyche', 'typescript', ...Object.keys(pkg.dependencies)]) {
    mkdirSync(join(modules, name, '..'), { recursive: true })
    symlinkSync(join(root, 'node_modules', name), join(modules, name), 'dir')
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, skipLibCheck: false, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], noEmit: true }
  }))
  writeFileSync(join(dir, 'tstyche.json'), JSON.stringify({ testFileMatch: ['*.tst.ts'] }))
  writeFileSync(join(dir, 'host.tst.ts'), CONSUMER)
  // The check can fail: a planted wrong option (signIn left on without authenticate) is reported.
  writeFileSync(join(dir, 'planted.tst.ts'), [
    'import Fastify from \'fastify\'',
    'import { expect } from \'tstyche\'',
    'import schoolsResources, { InMemoryCatalog } from \'fastify-schools-resources\'',
    'expect(Fastify().register).type.toBeCallableWith(schoolsResources, { catalog: new InMemoryCatalog({ categories: [] }) })',
    ''
  ].join('\n'))
  const res = spawnSync(process.execPath, [join(modules, 'tstyche/dist/bin.js')], { cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } })
  const out = `${res.stdout}${res.stderr}`
  t.notOk(existsSync(join(modules, '@fastify/session')), '@fastify/session cannot be resolved there')
  t.match(out, /pass \.\/host\.tst\.ts/, out)
  t.match(out, /fail \.\/planted\.tst\.ts/, 'the planted wrong option fails')
  t.match(out, /Test files:\s+1 failed, 1 passed, 2 total/)
  t.equal(res.status, 1)
})
