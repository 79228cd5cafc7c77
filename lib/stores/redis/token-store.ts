import { checkTokenSet, type TokenRecord, type TokenStore } from '../token-store.js'
import { INDEX_SCRIPT, prefixOption, RedisCommands, type RedisCommandClient, type RedisStoreOptions } from './client.js'

/**
 * Tokens in Redis (remembered devices, reset links), so that a token made on one instance is known to all
 * of them. Each token is one key that expires on its own; each member has one set of their tokens' keys
 * (the index deleteAll reads), which lives as long as their longest-lived token, so nothing piles up.
 * Every command names the one key it touches, so a Cluster routes each by its own key. Pass a connected
 * node-redis client; the host owns it (connects, listens to its errors, closes it).
 */
export class RedisTokenStore implements TokenStore {
  readonly #redis: RedisCommands
  readonly #prefix: string

  constructor (client: RedisCommandClient, options: RedisStoreOptions = {}) {
    this.#redis = new RedisCommands(client, 'RedisTokenStore', options)
    this.#prefix = prefixOption(options, 'schools-resources:tokens:')
  }

  // Tokens and indexes apart, so that no caller's key can name a member's index.
  #token (key: string): string { return `${this.#prefix}token:${key}` }
  #index (memberId: string): string { return `${this.#prefix}member:${memberId}` }

  async get (key: string): Promise<TokenRecord | undefined> {
    const token = this.#token(key)
    return parseRecord(await this.#redis.send(token, ['GET', token]))
  }

  async set (key: string, value: TokenRecord, ttlMs: number): Promise<void> {
    checkTokenSet(key, value, ttlMs)
    const token = this.#token(key)
    await this.#redis.send(token, ['SET', token, JSON.stringify({ memberId: value.memberId, data: value.data }), 'PX', String(ttlMs)])
    // Indexed after the write: a deleteAll between the two misses this token, as it would one set just after it.
    const index = this.#index(value.memberId)
    await this.#redis.send(index, ['EVAL', INDEX_SCRIPT, '1', index, key, String(ttlMs)])
  }

  async take (key: string): Promise<TokenRecord | undefined> {
    // GETDEL: one command, so two instances taking one token at once cannot both get it. Its key stays in
    // the member's index until the index expires; deleting a key already gone is harmless.
    const token = this.#token(key)
    return parseRecord(await this.#redis.send(token, ['GETDEL', token]))
  }

  async deleteAll (memberId: string): Promise<void> {
    const index = this.#index(memberId)
    // Tried whatever the breaker says, as a sign-out is: forgetting devices is what a leaver needs.
    const keys = await this.#redis.send(index, ['SMEMBERS', index], true) as string[]
    await Promise.all(keys.map((key) => this.#redis.send(this.#token(key), ['DEL', this.#token(key)], true)))
    // SREM of those keys, not DEL of the index: a token set meanwhile stays indexed.
    if (keys.length > 0) await this.#redis.send(index, ['SREM', index, ...keys], true)
  }
}

/** A stored record, or undefined for a missing key or a value this store did not write. */
function parseRecord (reply: unknown): TokenRecord | undefined {
  if (typeof reply !== 'string') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(reply)
  } catch {
    return undefined
  }
  const { memberId, data } = (parsed ?? {}) as Partial<TokenRecord>
  return typeof memberId === 'string' && typeof data === 'string' ? { memberId, data } : undefined
}
