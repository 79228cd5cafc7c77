// ESM entry of `fastify-schools-resources/redis`: the CommonJS build re-exported, so that both module
// systems share one copy. test/exports.test.ts checks that it exposes exactly what `require` does.
import cjs from './index.js'
import type {
  RedisSessionStore as RedisSessionStoreInstance,
  RedisAttemptStore as RedisAttemptStoreInstance,
  RedisTokenStore as RedisTokenStoreInstance
} from './index.js'

export type * from './index.js'
// Classes are both a value and a type; the destructured consts below carry only the value.
export type RedisSessionStore = RedisSessionStoreInstance
export type RedisAttemptStore = RedisAttemptStoreInstance
export type RedisTokenStore = RedisTokenStoreInstance
export const { RedisSessionStore, RedisAttemptStore, RedisTokenStore } = cjs
