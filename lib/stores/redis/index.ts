// Entry of `fastify-schools-resources/redis`: the stores that let several instances share sessions,
// the sign-in limits' counts and the members' tokens through one node-redis client.
export { RedisSessionStore } from './session-store.js'
export type { RedisSessionStoreOptions } from './session-store.js'
export { RedisAttemptStore } from './attempt-store.js'
export { RedisTokenStore } from './token-store.js'
export type { RedisBreakerOptions, RedisCommandClient, RedisStoreOptions } from './client.js'
