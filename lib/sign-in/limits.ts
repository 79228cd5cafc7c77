import { MemoryAttemptStore, type AttemptCount, type AttemptStore } from '../stores/attempt-store.js'
import { NO_DEVICE_SECRET_WARNING, NO_STORE_RESERVATIONS_WARNING, warnHostMistakeOnce } from '../warnings.js'
import { clientKey } from './client-address.js'
import { DeviceCookies } from './device-cookie.js'
import { Turns, type TurnEntry } from './turns.js'

export interface LockoutOptions {
  /** Failed sign-ins for one username from one address (IPv6: its /64) within `windowMs` that lock that pair (default 10). */
  maxAttempts?: number
  /** Failed sign-ins for one username from every browser it never signed in from, within `windowMs`, that lock it for them (default 100). */
  maxPerUsername?: number
  /** How long failures are counted, in milliseconds, from the first (default 15 minutes). */
  windowMs?: number
  /** How long a lock lasts, in milliseconds (default 15 minutes, as the legacy site). */
  durationMs?: number
  /** Passwords of one username checked at once in this process; more wait their turn (default 10). */
  maxConcurrent?: number
  /** Where the counts live (default: in this process). `new RedisAttemptStore(client)` shares them. */
  store?: AttemptStore
  /**
   * The key that signs device cookies (32 characters or more), the same on every instance. Unset: a
   * random key per process, so a browser is known only to the process that signed it in, until it restarts.
   */
  deviceSecret?: string
  /** How long a browser is remembered after its last successful sign-in, in milliseconds (default 30 days). */
  deviceMaxAgeMs?: number
  /** New sessions one member may get by signing in, per minute; past it sign-in answers 429 (default 120). */
  maxNewSessionsPerMinute?: number
}

export interface LoginRateLimitOptions {
  /** Failed sign-ins one client address (IPv6: its /64) may make per `timeWindow` (default 50). */
  max?: number
  /** Milliseconds (default 15 minutes). */
  timeWindow?: number
  /** Where the counts live (default: `lockout.store`, or in this process). */
  store?: AttemptStore
}

export interface LockoutSettings {
  maxAttempts: number
  maxPerUsername: number
  windowMs: number
  durationMs: number
  maxConcurrent: number
  store: AttemptStore
  deviceSecret: string | undefined
  deviceMaxAgeMs: number
  maxNewSessionsPerMinute: number
}

export interface LoginRateLimitSettings {
  max: number
  timeWindow: number
  store: AttemptStore
}

/** Why a sign-in is refused before its password is checked, and until when. */
export interface Refusal {
  reason: 'address' | 'locked'
  until: Date
}

/** One sign-in's turn to have its password checked; it must end in exactly one of fail, succeed or end. */
export interface Turn {
  refused: undefined
  /** The device cookie's nonce when this browser is judged as one that signed in as the username before. */
  device: string | undefined
  /** The password was wrong: counts the failure; the lock it completed, if it completed one. */
  fail (): Promise<Refusal | undefined>
  /** The password was right: forgets this browser's failures; the device cookie's new value. */
  succeed (): Promise<string | undefined>
  /** Ends the turn without counting (authenticate threw). */
  end (): void
}

interface Counter {
  key: string
  store: AttemptStore
  max: number
  windowMs: number
  /** How long the count is held once it reaches `max` (a lock); undefined: until its window ends. */
  holdMs: number | undefined
  /** What reaching `max` means: a refusal, or (a device cookie's count) that the browser is no longer known. */
  reached: Refusal['reason'] | 'unknown-device'
}

/**
 * Says once, at start-up, when the counts are shared between instances (a store that is not this
 * process's memory) but device cookies are signed with a key of this process's own: a browser would then
 * be known to one instance only.
 */
export function warnWithoutDeviceSecret (log: Parameters<typeof warnHostMistakeOnce>[0], lockout: LockoutSettings): void {
  if (lockout.deviceSecret !== undefined || lockout.store instanceof MemoryAttemptStore) return
  warnHostMistakeOnce(log, NO_DEVICE_SECRET_WARNING, { code: NO_DEVICE_SECRET_WARNING },
    'lockout.store is shared, but lockout.deviceSecret is not set: each instance signs device cookies with a random key of its own, so a browser that signed in is known only to the instance that signed it in. Set lockout.deviceSecret (32 characters or more) to the same value on every instance.')
}

/**
 * How long a check in flight keeps its place in the store: about what a full password line holds
 * (password-checks.ts), plus 5 s. A place a process took and never released (it died) frees itself then.
 */
export const RESERVATION_TTL_MS = 10_000 + 5000
/** While every place is taken elsewhere, how often a waiting sign-in looks again (a check here wakes it sooner). */
const RESERVATION_RETRY_MS = 50

/** Whether `store` reserves the checks in flight itself (AttemptStore's optional reserve and release). */
function reserves (store: AttemptStore): boolean {
  return typeof store.reserve === 'function' && typeof store.release === 'function'
}

/**
 * Says once, at start-up, when a store of the sign-in limits has no reserve() and release(): the checks in
 * flight are then kept by each process, so instances that share the store may together check more than a
 * limit allows before the failures are counted.
 */
export function warnWithoutReservations (log: Parameters<typeof warnHostMistakeOnce>[0], stores: readonly AttemptStore[]): void {
  if (stores.every(reserves)) return
  warnHostMistakeOnce(log, NO_STORE_RESERVATIONS_WARNING, { code: NO_STORE_RESERVATIONS_WARNING },
    'a store of the sign-in limits (lockout.store or loginRateLimit.store) has no reserve() and release(), so each process keeps its own checks in flight: several instances sharing it may together check more passwords than a limit allows. Give the store reserve() and release() (MemoryAttemptStore and RedisAttemptStore have them).')
}

/** Usernames are matched without case or surrounding spaces. */
function normalUsername (username: string): string {
  return username.trim().toLowerCase()
}

/**
 * The store keys of the counts that decide a sign-in (docs/security.md#seeing-and-clearing-a-lock):
 * pass a username and the client's IP address as Fastify's `request.ip` gives it. `reset` a key to
 * clear its lock; with the Redis store the key in Redis has the store's prefix in front.
 */
export function signInLimitKeys (username: string, ip: string | undefined): { username: string, usernameAndAddress: string, address: string } {
  const user = normalUsername(username)
  const client = clientKey(ip)
  return { username: `user:${user}`, usernameAndAddress: `user-address:${client}|${user}`, address: `address:${client}` }
}

/**
 * The sign-in limits (docs/security.md#sign-in-limits). Counts failures only, in the store, per address,
 * per username and address, per username, and per device cookie; a browser that signed in as a username
 * before is judged by its own failures only. At most `maxConcurrent` passwords of a username are checked
 * at once in this process, and a check starts only while the failures counted plus the checks in flight
 * stay under every limit, so parallel sign-ins cannot outrun a count: they wait, then look again.
 */
export class SignInLimits {
  readonly #lockout: LockoutSettings | undefined
  readonly #perAddress: LoginRateLimitSettings | undefined
  readonly #devices: DeviceCookies | undefined
  readonly #turns: Turns
  // Every count's store reserves the checks in flight (across instances); else this process's Turns do.
  readonly #reserved: boolean

  constructor (lockout: LockoutSettings | undefined, perAddress: LoginRateLimitSettings | undefined) {
    this.#lockout = lockout
    this.#perAddress = perAddress
    this.#devices = lockout === undefined ? undefined : new DeviceCookies(lockout.deviceSecret, lockout.deviceMaxAgeMs)
    this.#turns = new Turns(lockout?.maxConcurrent ?? 1)
    this.#reserved = [lockout?.store, perAddress?.store].every((store) => store === undefined || reserves(store))
  }

  /** Seconds a device cookie lives (there are device cookies only with the lockout on). */
  get deviceMaxAge (): number {
    return Math.ceil(this.#lockout!.deviceMaxAgeMs / 1000)
  }

  #unknownBrowser (user: string, ip: string | undefined): Counter[] {
    const keys = signInLimitKeys(user, ip)
    const counters: Counter[] = []
    const limit = this.#perAddress
    if (limit !== undefined) counters.push({ key: keys.address, store: limit.store, max: limit.max, windowMs: limit.timeWindow, holdMs: undefined, reached: 'address' })
    const lockout = this.#lockout
    if (lockout !== undefined) {
      const { store, windowMs, durationMs } = lockout
      counters.push(
        { key: keys.usernameAndAddress, store, max: lockout.maxAttempts, windowMs, holdMs: durationMs, reached: 'locked' },
        { key: keys.username, store, max: lockout.maxPerUsername, windowMs, holdMs: durationMs, reached: 'locked' }
      )
    }
    return counters
  }

  #knownBrowser (nonce: string): Counter[] {
    const { store, maxAttempts, windowMs } = this.#lockout!
    return [{ key: `device:${nonce}`, store, max: maxAttempts, windowMs, holdMs: undefined, reached: 'unknown-device' }]
  }

  #address (ip: string | undefined): Counter | undefined {
    const limit = this.#perAddress
    if (limit === undefined) return undefined
    return { key: signInLimitKeys('', ip).address, store: limit.store, max: limit.max, windowMs: limit.timeWindow, holdMs: undefined, reached: 'address' }
  }

  /** The per-address limit's refusal for `ip` when it is reached (an OpenID callback has no username to lock). */
  async addressRefusal (ip: string | undefined): Promise<Refusal | undefined> {
    const counter = this.#address(ip)
    if (counter === undefined) return undefined
    const count = await counter.store.get(counter.key)
    return count !== undefined && count.count >= counter.max ? { reason: 'address', until: new Date(count.expiresAt) } : undefined
  }

  /** Counts a refused OpenID callback from `ip` under the per-address limit. */
  async countAddressFailure (ip: string | undefined): Promise<void> {
    const counter = this.#address(ip)
    if (counter !== undefined) await countFailure(counter)
  }

  /** Takes a turn for a sign-in as `username` from `ip`, with the browser's device cookie (if any). */
  async begin (username: string, ip: string | undefined, deviceCookie: unknown): Promise<Turn | { refused: Refusal }> {
    const user = normalUsername(username)
    const nonce = this.#devices?.known(deviceCookie, user)
    // The username's line, or for a browser that signed in as it before a line of its own: a flood of
    // sign-ins to the username (which fills its line, then answers 503) does not hold that browser back.
    const line = this.#lockout === undefined ? undefined : nonce === undefined ? user : `${user}\ndevice:${nonce}`
    if (line !== undefined) await this.#turns.take(line)
    try {
      let known = nonce
      let counters = known === undefined ? this.#unknownBrowser(user, ip) : this.#knownBrowser(known)
      for (;;) {
        const keys = counters.map((c) => c.key)
        const entries = this.#turns.hold(keys)
        let outcome: Refusal | 'unknown-device' | undefined
        try {
          outcome = await this.#look(counters, entries)
        } catch (err) {
          this.#turns.drop(keys, entries)
          throw err
        }
        if (outcome === undefined) return this.#turn(user, counters, entries, deviceCookie, line, known)
        this.#turns.drop(keys, entries)
        if (outcome !== 'unknown-device') {
          if (line !== undefined) this.#turns.give(line)
          return { refused: outcome }
        }
        // Too many failures from this browser: from now on it is a stranger, judged by its address.
        known = undefined
        counters = this.#unknownBrowser(user, ip)
      }
    } catch (err) {
      if (line !== undefined) this.#turns.give(line)
      throw err
    }
  }

  /** Reads the counts until a check fits under every limit (then starts it), or one of them refuses. */
  async #look (counters: Counter[], entries: TurnEntry[]): Promise<Refusal | 'unknown-device' | undefined> {
    if (this.#reserved) return this.#reserve(counters, entries)
    for (;;) {
      const seen = Turns.exits(entries)
      const counts = await Promise.all(counters.map((c) => c.store.get(c.key)))
      // A check ended while we read: its failure may be missing from what we read.
      if (Turns.exits(entries) !== seen) continue
      const full = reachedLimit(counters, counts)
      if (full !== undefined) return full
      const room = counters.map((c, i) => c.max - (counts[i]?.count ?? 0))
      if (Turns.fits(entries, room)) {
        Turns.start(entries)
        return undefined
      }
      // As many checks in flight as failures left under some limit: wait for one of them to end.
      await Turns.next(entries.filter((entry, i) => entry.checking >= room[i]))
    }
  }

  /**
   * #look with the places in the store: a check starts once every count has reserved it a place (the
   * count plus the places under its limit, atomically, on every instance at once). A count at its limit
   * refuses; all places taken, it gives back those it got and waits for a check to end, here or elsewhere.
   */
  async #reserve (counters: Counter[], entries: TurnEntry[]): Promise<Refusal | 'unknown-device' | undefined> {
    for (;;) {
      const counts = await Promise.all(counters.map((c) => c.store.get(c.key)))
      const full = reachedLimit(counters, counts)
      if (full !== undefined) return full
      const taken: Counter[] = []
      for (const counter of counters) {
        if (!await counter.store.reserve!(counter.key, counter.max, RESERVATION_TTL_MS)) break
        taken.push(counter)
      }
      if (taken.length === counters.length) {
        Turns.start(entries)
        return undefined
      }
      await Promise.all(taken.map((c) => c.store.release!(c.key)))
      await Promise.race([Turns.next(entries), new Promise((resolve) => setTimeout(resolve, RESERVATION_RETRY_MS))])
    }
  }

  #turn (user: string, counters: Counter[], entries: TurnEntry[], deviceCookie: unknown, line: string | undefined, device: string | undefined): Turn {
    let open = true
    const close = () => {
      if (!open) return
      open = false
      Turns.finish(entries)
      this.#turns.drop(counters.map((c) => c.key), entries)
      // After the failure is counted (fail() awaits it first): the place is given back. Should the store
      // not answer, the place expires on its own.
      if (this.#reserved) for (const c of counters) c.store.release!(c.key).catch(() => {})
      if (line !== undefined) this.#turns.give(line)
    }
    return {
      refused: undefined,
      device,
      fail: async () => {
        try {
          const refusals = await Promise.all(counters.map((c) => countFailure(c)))
          return refusals.find((r) => r?.reason === 'locked')
        } finally {
          close()
        }
      },
      succeed: async () => {
        try {
          // This browser's own failures are forgiven; the username's count from everywhere is not.
          const own = counters.find((c) => c.key.startsWith('device:') || c.key.startsWith('user-address:'))
          if (own !== undefined) await own.store.reset(own.key)
          return this.#devices?.remember(deviceCookie, user)
        } finally {
          close()
        }
      },
      end: close
    }
  }
}

/** What the first count at its limit means (a refusal, or an unknown browser), or undefined when none is. */
function reachedLimit (counters: Counter[], counts: Array<AttemptCount | undefined>): Refusal | 'unknown-device' | undefined {
  const full = counters.findIndex((c, i) => (counts[i]?.count ?? 0) >= c.max)
  if (full === -1) return undefined
  const reached = counters[full].reached
  return reached === 'unknown-device' ? reached : { reason: reached, until: new Date(counts[full]!.expiresAt) }
}

async function countFailure (counter: Counter): Promise<Refusal | undefined> {
  const { count, expiresAt } = await counter.store.increment(counter.key, counter.windowMs)
  if (count < counter.max || counter.reached === 'unknown-device') return undefined
  if (counter.holdMs === undefined) return { reason: counter.reached, until: new Date(expiresAt) }
  await counter.store.hold(counter.key, counter.holdMs)
  return { reason: counter.reached, until: new Date(Date.now() + counter.holdMs) }
}
