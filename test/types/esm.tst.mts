// The ES module entries (dist/lib/esm.d.mts, dist/lib/stores/redis/esm.d.mts): the same names and types as
// the CommonJS ones, classes usable both as values and as types.
import { expect, test } from 'tstyche'
import schoolsResources, * as esm from 'fastify-schools-resources'
import * as esmRedis from 'fastify-schools-resources/redis'
import { InMemoryCatalog, MemoryAttemptStore, SafeHtml, type FastifySchoolsResourcesOptions } from 'fastify-schools-resources'
import { RedisAttemptStore, RedisSessionStore } from 'fastify-schools-resources/redis'

type Cjs = typeof import('fastify-schools-resources', { with: { 'resolution-mode': 'require' } })
type CjsRedis = typeof import('fastify-schools-resources/redis', { with: { 'resolution-mode': 'require' } })

test('the default export is the plugin', () => {
  expect(schoolsResources).type.toBe(esm.fastifySchoolsResources)
  expect(schoolsResources).type.toBe<Cjs['fastifySchoolsResources']>()
})

test('the same run-time names as require() gives', () => {
  expect<keyof typeof esm>().type.toBe<keyof Cjs>()
  expect<keyof typeof esmRedis>().type.toBe<keyof CjsRedis>()
})

test('classes are types too', () => {
  expect(new InMemoryCatalog({ categories: [] })).type.toBe<InMemoryCatalog>()
  expect(new MemoryAttemptStore()).type.toBe<MemoryAttemptStore>()
  expect(esm.html`x`).type.toBe<SafeHtml>()
  expect<RedisAttemptStore>().type.toBe<InstanceType<CjsRedis['RedisAttemptStore']>>()
  expect<RedisSessionStore>().type.toBe<InstanceType<CjsRedis['RedisSessionStore']>>()
})

test('the options are the same union', () => {
  expect<FastifySchoolsResourcesOptions>().type.toBe<import('fastify-schools-resources', { with: { 'resolution-mode': 'require' } }).FastifySchoolsResourcesOptions>()
  expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog: new InMemoryCatalog({ categories: [] }) })
})
