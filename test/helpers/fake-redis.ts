import { RedisClient } from 'redis'
import { INCREMENT_SCRIPT, INDEX_SCRIPT, READ_SCRIPT, RESERVE_SCRIPT } from '../../lib/stores/redis/client.js'

interface Entry { value: string, expiresAt: number | undefined }

/**
 * An in-process stand-in for a Redis client's sendCommand(), for the commands and the scripts the
 * stores send. It runs the stores' TypeScript without a server (so lib/ stays covered when REDIS_URL is
 * unset); the scripts themselves are checked against the real Redis in test/redis/.
 * `failWith` makes every command reject; `hang` makes every command never answer.
 * It is a node-redis client (never connected) whose sendCommand() answers in-process, since the stores
 * take node-redis clients only.
 */
export class FakeRedis extends RedisClient<{}, {}, {}, 2, {}> {
  readonly data = new Map<string, Entry>()
  /** Sorted sets (the places of RESERVE_SCRIPT): member to score. */
  readonly sets = new Map<string, Map<string, number>>()
  /** Plain sets (a member's token keys, INDEX_SCRIPT), with the expiry of each set. */
  readonly members = new Map<string, { keys: Set<string>, expiresAt: number }>()
  readonly commands: string[][] = []
  failWith: unknown = undefined
  hang = false
  /** What WAIT answers: the replicas that confirmed the writes. */
  replicas = 0
  /** What INFO replication says: the primary's replication id and its replicas online. */
  replid = 'fake-primary'
  role = 'master'
  online = 1
  now = (): number => Date.now()

  #live (key: string): Entry | undefined {
    const entry = this.data.get(key)
    if (entry?.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      this.data.delete(key)
      return undefined
    }
    return entry
  }

  #set (key: string): { keys: Set<string>, expiresAt: number } | undefined {
    const set = this.members.get(key)
    if (set !== undefined && set.expiresAt <= this.now()) {
      this.members.delete(key)
      return undefined
    }
    return set
  }

  #pttl (key: string): number {
    const entry = this.#live(key)
    if (entry === undefined) return -2
    return entry.expiresAt === undefined ? -1 : entry.expiresAt - this.now()
  }

  override sendCommand<T = unknown> (args: readonly unknown[]): Promise<T> {
    return this.#answer(args as string[]) as Promise<T>
  }

  async #answer (args: string[]): Promise<unknown> {
    this.commands.push(args)
    if (this.hang) return new Promise(() => {})
    if (this.failWith !== undefined) throw this.failWith
    const [name, ...rest] = args
    switch (name) {
      case 'GET': return this.#live(rest[0])?.value ?? null
      case 'SET': {
        const [key, value, px, ms] = rest
        this.data.set(key, { value, expiresAt: px === 'PX' ? this.now() + Number(ms) : undefined })
        return 'OK'
      }
      case 'WAIT': return this.replicas
      case 'INFO': return ['# Replication', `role:${this.role}`, `connected_slaves:${this.online + 1}`,
        ...Array.from({ length: this.online }, (_, i) => `slave${i}:ip=127.0.0.1,port=${7000 + i},state=online,offset=1,lag=0`),
        // One more connected but still syncing: not online, not counted.
        `slave${this.online}:ip=127.0.0.1,port=7999,state=wait_bgsave,offset=0,lag=0`, `master_replid:${this.replid}`, ''].join('\r\n')
      case 'DEL': return this.data.delete(rest[0]) ? 1 : 0
      case 'GETDEL': {
        const value = this.#live(rest[0])?.value ?? null
        this.data.delete(rest[0])
        return value
      }
      case 'SMEMBERS': return [...this.#set(rest[0])?.keys ?? []]
      case 'SREM': {
        const set = this.#set(rest[0])
        let removed = 0
        for (const key of rest.slice(1)) if (set?.keys.delete(key) === true) removed++
        if (set?.keys.size === 0) this.members.delete(rest[0])
        return removed
      }
      case 'PEXPIRE': {
        const entry = this.#live(rest[0])
        if (entry === undefined) return 0
        entry.expiresAt = this.now() + Number(rest[1])
        return 1
      }
      case 'EVAL': {
        const [script, , key, window] = rest
        if (script === INCREMENT_SCRIPT) {
          const entry = this.#live(key)
          const count = Number(entry?.value ?? 0) + 1
          const fresh = entry === undefined || entry.expiresAt === undefined
          this.data.set(key, { value: String(count), expiresAt: fresh ? this.now() + Number(window) : entry.expiresAt })
          return [count, this.#pttl(key)]
        }
        if (script === READ_SCRIPT) {
          const entry = this.#live(key)
          return entry === undefined ? null : [Number(entry.value), this.#pttl(key)]
        }
        if (script === INDEX_SCRIPT) {
          const [, , index, member, ttl] = rest
          const set = this.#set(index) ?? { keys: new Set<string>(), expiresAt: 0 }
          set.keys.add(member)
          set.expiresAt = Math.max(set.expiresAt, this.now() + Number(ttl))
          this.members.set(index, set)
          return 1
        }
        if (script === RESERVE_SCRIPT) {
          const [, , count, placesKey, max, ttl, member] = rest
          const now = this.now()
          const places = this.sets.get(placesKey) ?? new Map<string, number>()
          for (const [name, expires] of places) if (expires <= now) places.delete(name)
          if (Number(this.#live(count)?.value ?? 0) + places.size >= Number(max)) return 0
          places.set(member, now + Number(ttl))
          this.sets.set(placesKey, places)
          return 1
        }
        throw new Error('ERR unknown script')
      }
      case 'ZPOPMIN': {
        const set = this.sets.get(rest[0])
        const first = [...set?.entries() ?? []].sort((a, b) => a[1] - b[1])[0]
        if (first === undefined) return []
        set!.delete(first[0])
        return [first[0], String(first[1])]
      }
      default: throw new Error(`ERR unknown command '${name}'`)
    }
  }
}
