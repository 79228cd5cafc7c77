// Entry of `fastify-schools-resources/redis`: the stores that let several instances share sessions,
// and the sign-in limits' counts through one node-redis client.
export { RedisSessionStore } from './session-store.js'
export type { RedisSessionStoreOptions } from './session-store.js'
export { RedisAttemptStore } from './attempt-store.js'
export type { RedisBreakerOptions, RedisCommandClient, RedisStoreOptions } from './client.js'
