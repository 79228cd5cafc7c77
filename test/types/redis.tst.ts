// `fastify-schools-resources/redis`, as a host that `require`s it sees it (dist/lib/stores/redis/index.d.ts).
import type { SessionStore } from '@fastify/session'
import { expect, test } from 'tstyche'
import * as redis from 'fastify-schools-resources/redis'
import { RedisAttemptStore, RedisSessionStore, type RedisCommandClient, type RedisSessionStoreOptions, type RedisStoreOptions } from 'fastify-schools-resources/redis'
import type { AttemptStore, FastifySchoolsResourcesOptions } from 'fastify-schools-resources'

const client: RedisCommandClient = { sendCommand: async () => null }

test('exports the three stores and their option types, nothing else at run time', () => {
  expect<keyof typeof redis>().type.toBe<'RedisSessionStore' | 'RedisAttemptStore' | 'RedisTokenStore'>()
})

test('RedisSessionStore is a @fastify/session store', () => {
  // The entry's declarations do not import @fastify/session (a host with another session plugin may use
  // RedisAttemptStore alone), so this is where the store's contract with it is checked.
  expect(new RedisSessionStore(client)).type.toBeAssignableTo<SessionStore>()
  expect(RedisSessionStore).type.toBeConstructableWith(client, { prefix: 'sess:', timeoutMs: 100, ttlMs: 60_000, waitForReplicas: { replicas: 1 } })
  expect<RedisSessionStoreOptions>().type.toBeAssignableTo<RedisStoreOptions>()
  expect(RedisSessionStore).type.toBeConstructableWith(client, { waitForReplicas: { replicas: 1, timeoutMs: 1000, lostReplicasMs: 3000 }, log: { warn: (_fields: object, _message: string) => {} } })
  expect(RedisSessionStore).type.not.toBeConstructableWith(client, { log: console.log })
  expect(RedisSessionStore).type.not.toBeConstructableWith(client, { ttl: 60 })
  expect(RedisSessionStore).type.not.toBeConstructableWith()
})

test('RedisAttemptStore counts the sign-in limits', () => {
  expect(new RedisAttemptStore(client)).type.toBeAssignableTo<AttemptStore>()
  expect<FastifySchoolsResourcesOptions>().type.toBeAssignableFrom({
    catalog: { listCategories: async () => [], getCategory: async () => undefined },
    authenticate: async () => null,
    lockout: { store: new RedisAttemptStore(client, { prefix: 'attempts:' }) }
  })
})

test('the client is anything with node-redis\'s sendCommand', () => {
  expect<RedisCommandClient>().type.not.toBeAssignableFrom({ get: async () => null })
})
