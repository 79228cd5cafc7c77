import t from 'tap'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import * as pkg from '../lib/index.js'

const root = resolve(__dirname, '..')
const requireFromRoot = createRequire(resolve(root, 'package.json'))

// The values a host needs; each is documented in the README's API section (test/readme.test.ts).
const PUBLIC_VALUES = {
  fastifySchoolsResources: 'function',
  default: 'function',
  redirectOnce: 'function',
  anonymousShortCircuit: 'function',
  InMemoryCatalog: 'function',
  defaultViews: 'object',
  html: 'function',
  unsafeRaw: 'function',
  SafeHtml: 'function',
  CONTENT_SECURITY_POLICY: 'object',
  safeBackUrl: 'function',
  signInLimitKeys: 'function',
  MemoryAttemptStore: 'function',
  MemoryTokenStore: 'function',
  storeErrorHandler: 'function',
  errorCodes: 'object',
  REDIRECT_CONFLICT_WARNING: 'string',
  eventChannels: 'object',
  subscribeEvent: 'function'
}
const REDIS_VALUES = {
  RedisSessionStore: 'function',
  RedisAttemptStore: 'function',
  RedisTokenStore: 'function'
}

function sorted (record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)))
}

function shape (module: object): Record<string, string> {
  return Object.fromEntries(Object.keys(module).sort((a, b) => a.localeCompare(b)).map((name) => [name, typeof (module as Record<string, unknown>)[name]]))
}

t.test('the main entry exports exactly the public API', async (t) => {
  t.same(shape(pkg), sorted(PUBLIC_VALUES))
  t.equal(pkg.default, pkg.fastifySchoolsResources)
  t.equal(pkg.REDIRECT_CONFLICT_WARNING, 'FST_SR_REDIRECT_CONFLICT')
  const meta = (pkg.default as unknown as Record<symbol, { name: string, fastify: string, dependencies: string[] }>)[Symbol.for('plugin-meta')]
  t.same({ name: meta.name, fastify: meta.fastify, dependencies: meta.dependencies }, {
    name: 'fastify-schools-resources',
    fastify: '5.x',
    // None declared: a session plugin is needed only when the section keeps a session (checked at registration).
    dependencies: undefined
  })
})

t.test('the ESM entries expose exactly what require does, as the same objects', async (t) => {
  for (const [subpath, expected] of [['fastify-schools-resources', PUBLIC_VALUES], ['fastify-schools-resources/redis', REDIS_VALUES]] as const) {
    const cjs = requireFromRoot(subpath) as Record<string, unknown>
    const esm = await import(subpath) as Record<string, unknown>
    t.same(shape(cjs), sorted(expected), `${subpath}: require`)
    // `import` of a CommonJS module adds `module.exports` itself as `default`; the ESM entry's default is the plugin.
    const esmNames = Object.keys(esm).filter((name) => name !== 'default' || 'default' in cjs).sort()
    t.same(esmNames, Object.keys(cjs).sort(), `${subpath}: import has the same names`)
    for (const name of esmNames) t.equal(esm[name], cjs[name], `${subpath}: ${name} is the same object`)
  }
})

t.test('the redis subpath is the only way to the Redis stores', async (t) => {
  t.notOk('RedisSessionStore' in pkg)
  const redis = requireFromRoot('fastify-schools-resources/redis') as Record<string, unknown>
  t.same(shape(redis), sorted(REDIS_VALUES))
})
