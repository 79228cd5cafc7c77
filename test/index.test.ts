import t from 'tap'
import * as pkg from '../lib/index.js'

t.test('the public API is exactly what the README documents', async (t) => {
  const values = Object.fromEntries(Object.keys(pkg).map((name) => [name, typeof (pkg as Record<string, unknown>)[name]]))
  t.same(values, {
    fastifySchoolsResources: 'function',
    default: 'function',
    redirectOnce: 'function',
    anonymousFastPath: 'function',
    resourcesSession: 'function',
    CachedSigner: 'function',
    REDIRECT_STATUS_CODES: 'object',
    InMemoryCatalog: 'function',
    isSlug: 'function',
    defaultViews: 'object',
    defaultStylesheet: 'string',
    html: 'function',
    unsafeRaw: 'function',
    SafeHtml: 'function',
    phpUrlencode: 'function',
    loginRedirectUrl: 'function',
    safeBackUrl: 'function',
    MAX_BACK_URL_LENGTH: 'number',
    MemoryAttemptStore: 'function',
    RedisSessionStore: 'function',
    RedisAttemptStore: 'function',
    redisRateLimitStore: 'function',
    FST_SR_STORE_UNAVAILABLE: 'function',
    isStoreUnavailable: 'function',
    sendStoreUnavailable: 'function',
    storeErrorHandler: 'function',
    STORE_RETRY_AFTER_SECONDS: 'number',
    CONTENT_SECURITY_POLICY: 'object',
    FST_SR_INVALID_OPTION: 'function',
    FST_SR_INVALID_REDIRECT_CODE: 'function',
    FST_SR_INVALID_REDIRECT_URL: 'function',
    FST_SR_INVALID_MEMBER: 'function',
    FST_SR_BAD_HOST: 'function',
    REDIRECT_CONFLICT_WARNING: 'string'
  })
  t.equal(pkg.default, pkg.fastifySchoolsResources)
  t.same([...pkg.REDIRECT_STATUS_CODES], [300, 301, 302, 303, 307, 308])
  t.equal(pkg.REDIRECT_CONFLICT_WARNING, 'FST_SR_REDIRECT_CONFLICT')
  const meta = (pkg.default as unknown as Record<symbol, { name: string, fastify: string, dependencies: string[] }>)[Symbol.for('plugin-meta')]
  t.same({ name: meta.name, fastify: meta.fastify, dependencies: meta.dependencies }, {
    name: 'fastify-schools-resources',
    fastify: '5.x',
    dependencies: ['@fastify/cookie', '@fastify/session']
  })
})
