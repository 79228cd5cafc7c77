import { errorCodes } from '../errors.js'
import { clientKey } from './client-address.js'

const { FST_SR_SIGN_IN_BUSY } = errorCodes

export interface PasswordChecksOptions {
  /**
   * Passwords checked at once in this process (default: half of libuv's thread pool, `UV_THREADPOOL_SIZE`,
   * 4 unless set, so 2). A CPU-bound `authenticate` (scrypt, bcrypt, argon2 on the thread pool) gains
   * nothing past the cores it can use and takes the threads file reads need; one that waits on another
   * service (an identity provider over HTTP, LDAP) can take 32 or more.
   */
  concurrent?: number
  /** Sign-ins that may wait for their turn, in the line's order (default 400); past that, FST_SR_SIGN_IN_BUSY. `0`: none wait. */
  waiting?: number
  /** Of those running and waiting, at most this many from one client address (default three quarters of both together). */
  perAddress?: number
}

export interface PasswordCheckSettings {
  concurrent: number
  waiting: number
  perAddress: number
}

/**
 * The line's places unless `waiting` says otherwise: a school's morning burst from one address (30
 * teachers at 8:30, a shared login on a class set of laptops) waits its turn rather than getting 503s,
 * and a waiter is a request being answered, so the places bound the memory. With 2 checks at once of
 * 50 ms each (scrypt at N=2^14, r=8), a full line is about 10 s of checks; a dearer check wants fewer.
 */
export const WAITING_DEFAULT = 400

/** What the busy answer's Retry-After says, as every other 503 of the section. */
export const BUSY_RETRY_AFTER_SECONDS = 5

// One busy error, shared: a spray is refused thousands of times a second, and a new error each time
// would capture a stack that nobody reads (refusals.ts says the same).
let busyError: Error | undefined

/** FST_SR_SIGN_IN_BUSY with its Retry-After, for a sign-in that finds no room. */
export function signInBusy (): Error {
  busyError ??= Object.assign(new FST_SR_SIGN_IN_BUSY(), { retryAfter: BUSY_RETRY_AFTER_SECONDS })
  return busyError
}

/** The defaults, from the thread pool's size (Node reads UV_THREADPOOL_SIZE once, at its first use). */
export function passwordCheckDefaults (env: NodeJS.ProcessEnv = process.env): PasswordCheckSettings {
  const pool = Number(env.UV_THREADPOOL_SIZE)
  const threads = Number.isSafeInteger(pool) && pool >= 1 ? Math.min(pool, 1024) : 4
  // Half the pool: the other half stays for fs (file downloads, @fastify/static) and dns.lookup.
  const concurrent = Math.max(1, Math.floor(threads / 2))
  return { concurrent, waiting: WAITING_DEFAULT, perAddress: perAddressDefault(concurrent, WAITING_DEFAULT) }
}

/** Three quarters of the places: one address (a school at 8:30) can use most of them, not all. */
export function perAddressDefault (concurrent: number, waiting: number): number {
  return Math.max(1, Math.ceil((concurrent + waiting) * 3 / 4))
}

interface Waiter {
  key: string
  start: () => void
  refuse: (error: Error) => void
}

/**
 * The password checks of one process, bounded: at most `concurrent` `authenticate` calls at once, at
 * most `waiting` more in line, first come first served, and at most `perAddress` of both from one
 * address. Past that, a sign-in is refused at once with FST_SR_SIGN_IN_BUSY (503, `retryAfter`). A
 * browser that signed in as its username before (its device cookie checked) counts as a client of its
 * own and waits in a line of its own, served first: a flood from its address (a school's one public
 * address) does not hold it back. Every call is either run or refused; when the app closes, the waiting
 * are refused (close()).
 */
export class PasswordChecks {
  readonly #settings: PasswordCheckSettings
  /** Running and waiting sign-ins per client (an address, or `device:` a known browser); none kept at 0. */
  readonly #perClient = new Map<string, number>()
  readonly #line: Waiter[] = []
  readonly #knownBrowsers: Waiter[] = []
  #running = 0
  #closed = false

  constructor (settings: PasswordCheckSettings) {
    this.#settings = settings
  }

  /**
   * Runs `fn` when its turn comes, or rejects with FST_SR_SIGN_IN_BUSY when there is no room. The
   * client is the address, or `device` (a browser that signed in as this username before).
   */
  run<T> (address: string | undefined, fn: () => Promise<T>, device?: string): Promise<T> {
    const key = device === undefined ? clientKey(address) : `device:${device}`
    const held = this.#perClient.get(key) ?? 0
    if (held >= this.#settings.perAddress) return Promise.reject(signInBusy())
    if (this.#running < this.#settings.concurrent) {
      this.#perClient.set(key, held + 1)
      return this.#start(key, fn)
    }
    const waiting = this.#line.length + this.#knownBrowsers.length
    if (this.#closed || waiting >= this.#settings.waiting) return Promise.reject(signInBusy())
    this.#perClient.set(key, held + 1)
    return new Promise<T>((resolve, reject) => {
      const line = device === undefined ? this.#line : this.#knownBrowsers
      line.push({ key, start: () => { this.#start(key, fn).then(resolve, reject) }, refuse: reject })
    })
  }

  /**
   * The app is closing (a restart, a deploy): every sign-in still waiting is refused now with
   * FST_SR_SIGN_IN_BUSY, and from now on none waits; the checks running finish.
   */
  close (): void {
    this.#closed = true
    for (const waiter of [...this.#knownBrowsers.splice(0), ...this.#line.splice(0)]) {
      this.#release(waiter.key)
      waiter.refuse(signInBusy())
    }
  }

  async #start<T> (key: string, fn: () => Promise<T>): Promise<T> {
    this.#running++
    try {
      return await fn()
    } finally {
      this.#running--
      this.#release(key)
      // Known browsers first, then the line, each in its order.
      const next = this.#knownBrowsers.shift() ?? this.#line.shift()
      next?.start()
    }
  }

  #release (key: string): void {
    const held = this.#perClient.get(key)! - 1
    if (held === 0) this.#perClient.delete(key)
    else this.#perClient.set(key, held)
  }
}
