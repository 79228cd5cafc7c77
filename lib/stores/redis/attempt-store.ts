import type { AttemptCount, AttemptStore } from '../attempt-store.js'
import { randomBytes } from 'node:crypto'
import { INCREMENT_SCRIPT, READ_SCRIPT, RESERVE_SCRIPT, prefixOption, RedisCommands, type RedisCommandClient, type RedisStoreOptions } from './client.js'

/**
 * Failed-login counters in Redis, so that a lockout earned on one instance holds on all of them.
 * Each count is one key that expires on its own (INCR + PEXPIRE in a script, atomic), so nothing piles
 * up. Pass a connected node-redis client; the host owns it (connects, listens to its errors, closes it).
 */
export class RedisAttemptStore implements AttemptStore {
  readonly #redis: RedisCommands
  readonly #prefix: string

  constructor (client: RedisCommandClient, options: RedisStoreOptions = {}) {
    this.#redis = new RedisCommands(client, 'RedisAttemptStore', options)
    this.#prefix = prefixOption(options, 'schools-resources:attempts:')
  }

  /** Every command touches the one key it names (so a Cluster routes it by that key). */
  #send (args: string[]): Promise<unknown> {
    return this.#redis.send(args[0] === 'EVAL' ? args[3] : args[1], args)
  }

  async increment (key: string, windowMs: number): Promise<AttemptCount> {
    const [count, ttl] = await this.#send(['EVAL', INCREMENT_SCRIPT, '1', this.#prefix + key, String(windowMs)]) as [number, number]
    return { count: Number(count), expiresAt: Date.now() + Number(ttl) }
  }

  async hold (key: string, ttlMs: number): Promise<void> {
    // PEXPIRE leaves a missing key missing, as the memory store does.
    await this.#send(['PEXPIRE', this.#prefix + key, String(ttlMs)])
  }

  async get (key: string): Promise<AttemptCount | undefined> {
    const reply = await this.#send(['EVAL', READ_SCRIPT, '1', this.#prefix + key]) as [number, number] | null
    if (reply === null) return undefined
    return { count: Number(reply[0]), expiresAt: Date.now() + Math.max(0, Number(reply[1])) }
  }

  async reset (key: string): Promise<void> {
    await this.#send(['DEL', this.#prefix + key])
  }

  async reserve (key: string, max: number, ttlMs: number): Promise<boolean> {
    const count = this.#prefix + key
    const reply = await this.#redis.send(count, ['EVAL', RESERVE_SCRIPT, '2', count, placesKey(count), String(max), String(ttlMs), randomBytes(9).toString('base64url')])
    return Number(reply) === 1
  }

  async release (key: string): Promise<void> {
    const places = placesKey(this.#prefix + key)
    // The place that expires first: if it was a dead process's, this one's expires on its own, a little later.
    await this.#redis.send(places, ['ZPOPMIN', places])
  }
}

/**
 * The key of the places reserved under the count `key`, in its Cluster hash slot (a script may touch only
 * keys of one slot): a key with a hash tag keeps it; one without is wrapped in one, so the whole key decides
 * the slot of both, as it decides the count's. A key with a stray "}" and no tag cannot be wrapped; its
 * places stay beside it, which a single Redis or Sentinel takes (a Cluster answers CROSSSLOT).
 */
export function placesKey (key: string): string {
  const open = key.indexOf('{')
  const tagged = open !== -1 && key.indexOf('}', open + 1) > open + 1
  return tagged || key.includes('}') ? `${key}:in-flight` : `{${key}}:in-flight`
}
