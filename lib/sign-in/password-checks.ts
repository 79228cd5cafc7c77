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
  /**
   * Sign-ins that may wait for their turn (default 256 × `concurrent`); the line also takes on no more
   * than the checks get through in about 10 s at their pace so far. Past that, FST_SR_SIGN_IN_BUSY.
   */
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
 * Waiting places per check at once, at most: a school's morning burst from one address (30 teachers at
 * 8:30, a shared login on a class set of laptops) waits its turn rather than getting 503s. The line is
 * also the spray's brake: a sprayed sign-in that waits holds its connection, while one refused at once
 * comes straight back, and a line shorter than the attacker's connections refused them in bursts that
 * held up the event loop, downloads included ("The password line and the spray" in docs/performance.md,
 * in the repository). What bounds a wait is MAX_WAIT_MS; this bounds the memory (a waiter is a request
 * being answered: about 23 KiB resident, bench/waiting-memory.mjs).
 */
export const WAITING_PER_CHECK = 256

/**
 * The wait for a turn that the line takes on, at the mean pace of the checks so far: with the example's
 * 50 ms hashes and 2 checks at once, 400 places; with a 2 s identity provider and 32 checks at once, 160.
 * Past it, FST_SR_SIGN_IN_BUSY at once, with a Retry-After to match. An estimate, made as a sign-in
 * arrives: checks that slow down later make the wait longer, and lighter addresses go ahead.
 */
export const MAX_WAIT_MS = 10_000

/** The defaults, from the thread pool's size (Node reads UV_THREADPOOL_SIZE once, at its first use). */

export function passwordCheckDefaults (env: NodeJS.ProcessEnv = process.env): PasswordCheckSettings {
  const pool = Number(env.UV_THREADPOOL_SIZE)
  const threads = Number.isSafeInteger(pool) && pool >= 1 ? Math.min(pool, 1024) : 4
  // Half the pool: the other half stays for fs (file downloads, @fastify/static) and dns.lookup.
  const concurrent = Math.max(1, Math.floor(threads / 2))
  const waiting = WAITING_PER_CHECK * concurrent
  return { concurrent, waiting, perAddress: perAddressDefault(concurrent, waiting) }
}

/**
 * Three quarters of the places: one address (a school at 8:30, a shared login's burst) can use most of
 * them, and a lighter newcomer still displaces its newest waiter when they are full.
 */
export function perAddressDefault (concurrent: number, waiting: number): number {
  return Math.max(1, Math.ceil((concurrent + waiting) * 3 / 4))
}

interface Waiter {
  start: () => void
  refuse: (error: Error) => void
  /** Arrival order, so that addresses alike are served first come, first served. */
  seq: number
}

interface Client {
  active: number
  queue: Waiter[]
  /** Checks started or refused recently, decaying by half every HALF_LIFE_MS: who has pushed hardest lately. */
  recent: number
  /** Sign-ins sent lately (every call, run or refused), decaying alike: see #pushing. */
  attempts: number
  at: number
}

// One busy error per Retry-After (1 to 60 s), shared: a spray is refused thousands of times a second, and
// a new error each time would capture a stack that nobody reads (refusals.ts says the same).
const busyErrors: Array<Error & { retryAfter: number }> = []

const HALF_LIFE_MS = 60_000
// Sign-ins lately past which an address no longer takes the last free check (#pushing), while the
// line has refused someone within LANE_MS: the lane is kept only under pressure.
const LANE_ATTEMPTS = 10
const LANE_MS = 10_000
// Addresses remembered for their recent turns; past this, idle ones are forgotten (they only lose their history).
const MAX_REMEMBERED = 10_000

/**
 * The password checks of one process, bounded: at most `concurrent` `authenticate` calls at once, at
 * most `waiting` more in line (and no more than about MAX_WAIT_MS of checks), and at most `perAddress`
 * of both from one address. The next turn goes to the waiting address with the fewest checks lately
 * (running, waiting and a decaying count of those started or refused), first come first served among
 * equals, so a sign-in from an address that is not spraying passwords goes ahead of the spray, and busy
 * addresses take turns. When the line is full, a newcomer with fewer checks lately takes the place of
 * the newest waiter of the busiest address; otherwise it is refused at once with FST_SR_SIGN_IN_BUSY
 * (503, `retryAfter`). Every call is either run or refused: nothing waits for ever. When the app
 * closes, the waiting are refused (close()).
 */
export class PasswordChecks {
  readonly #settings: PasswordCheckSettings
  readonly #clients = new Map<string, Client>()
  readonly #now: () => number
  #running = 0
  #waiting = 0
  #seq = 0
  #lastRefusal = -Infinity
  // The mean time of a check (exponentially weighted), for Retry-After and the line's room.
  #meanMs = 100
  #closing = false

  constructor (settings: PasswordCheckSettings, now: () => number = Date.now) {
    this.#settings = settings
    this.#now = now
  }

  /**
   * Runs `fn` when the client's turn comes, or rejects with FST_SR_SIGN_IN_BUSY when there is no room. The
   * client is the address, or `device` (a browser that signed in as this username before, its device cookie
   * checked): such a browser takes turns of its own, so a spray from its address (a school's one public
   * address) does not hold back the members it has seen sign in.
   */
  run<T> (address: string | undefined, fn: () => Promise<T>, device?: string): Promise<T> {
    const key = device === undefined ? clientKey(address) : `device:${device}`
    const client = this.#client(key)
    this.#load(client)
    client.attempts++
    if (client.active + client.queue.length >= this.#settings.perAddress) return this.#refuse(client)
    // A free check: taken at once when nobody waits, and by an address that is not pushing even when
    // somebody does (what waits then is held back from the last check: see #free).
    if (this.#free(client) && (this.#waiting === 0 || !this.#pushing(client))) return this.#start(client, fn)
    if (this.#waiting >= this.#room() && !this.#makeRoomFor(client)) return this.#refuse(client)
    return new Promise<T>((resolve, reject) => {
      client.queue.push({ start: () => { this.#start(client, fn).then(resolve, reject) }, refuse: reject, seq: this.#seq++ })
      this.#waiting++
    })
  }

  /**
   * The app is closing (a restart, a deploy): every sign-in still waiting is refused now with
   * FST_SR_SIGN_IN_BUSY, and from now on none waits; the checks running finish. A full line is about
   * 10 s of checks, the example's whole shutdown deadline: the browsers' retries go to another instance.
   */
  close (): void {
    this.#closing = true
    for (const client of this.#clients.values()) {
      while (client.queue.length > 0) {
        this.#waiting--
        client.queue.shift()!.refuse(this.#busy())
      }
    }
  }

  /** Waiting places now: `waiting`, and no more than the checks get through in MAX_WAIT_MS at their pace. */
  #room (): number {
    if (this.#closing) return 0
    return Math.min(this.#settings.waiting, Math.floor(this.#settings.concurrent * MAX_WAIT_MS / this.#meanMs))
  }

  #client (key: string): Client {
    let client = this.#clients.get(key)
    if (client === undefined) {
      if (this.#clients.size >= MAX_REMEMBERED) this.#forgetIdle()
      client = { active: 0, queue: [], recent: 0, attempts: 0, at: this.#now() }
      this.#clients.set(key, client)
    }
    return client
  }

  #forgetIdle (): void {
    for (const [key, client] of this.#clients) {
      if (client.active === 0 && client.queue.length === 0) this.#clients.delete(key)
    }
  }

  /**
   * How much of the checks an address has: running, waiting, and its recent turns, counted up to
   * `perAddress` only, so that every busy address (a spraying one, a school behind one address at 8:30)
   * stands alike and takes turns, while one with few turns lately goes first.
   */
  #load (client: Client): number {
    const now = this.#now()
    const fade = 2 ** (-(now - client.at) / HALF_LIFE_MS)
    client.recent *= fade
    client.attempts *= fade
    client.at = now
    return client.active + client.queue.length + Math.min(client.recent, this.#settings.perAddress)
  }

  /** A full line: the newest waiter of the busiest address gives way, if that address is busier than `client`. */
  #makeRoomFor (client: Client): boolean {
    let busiest: Client | undefined
    let most = this.#load(client)
    for (const other of this.#clients.values()) {
      if (other.queue.length === 0) continue
      const load = this.#load(other)
      if (load > most) {
        busiest = other
        most = load
      }
    }
    if (busiest === undefined) return false
    this.#waiting--
    this.#refused(busiest)
    busiest.queue.pop()!.refuse(this.#busy())
    return true
  }

  /**
   * A turn taken or refused adds to the address's recent count: an address that keeps sending while
   * the line is full (a spray, sent as fast as the answers come) is soon as busy as it can count, while
   * a member's first try from an address of its own counts nothing and goes ahead of it. Counting only
   * the turns taken, a spraying address refused a hundred times stood level with a member's first try
   * until its own first turn, and a member waited behind every such address (2.4 to 3 s in the bench).
   */
  #count (client: Client): void {
    this.#load(client)
    client.recent++
  }

  #refused (client: Client): void {
    this.#count(client)
    this.#lastRefusal = this.#now()
  }

  /**
   * Whether the address sent LANE_ATTEMPTS sign-ins or more lately (halving every minute): a spray
   * does within a second; a member retyping a password, or a household behind one address, does not.
   * Only while the line has refused someone in the last LANE_MS (a spray fills it): a school's burst
   * at 8:30 that fits the line keeps every check.
   */
  #pushing (client: Client): boolean {
    return this.#settings.concurrent > 1 && client.attempts >= LANE_ATTEMPTS && this.#now() - this.#lastRefusal < LANE_MS
  }

  /**
   * Whether a check is free for the address. The last one is not for an address that is pushing: a
   * spray then hashes on all but one of the checks, and a member's sign-in from an address of its own
   * starts at once instead of waiting for a sprayed hash to end (a priority lane). With one check at
   * once there is no lane: the one check is everyone's.
   */
  #free (client: Client): boolean {
    return this.#running < this.#settings.concurrent - (this.#pushing(client) ? 1 : 0)
  }

  #refuse (client: Client): Promise<never> {
    this.#refused(client)
    return Promise.reject(this.#busy())
  }

  async #start<T> (client: Client, fn: () => Promise<T>): Promise<T> {
    this.#running++
    client.active++
    this.#count(client)
    const started = this.#now()
    try {
      return await fn()
    } finally {
      this.#meanMs = 0.8 * this.#meanMs + 0.2 * Math.max(0, this.#now() - started)
      this.#running--
      client.active--
      this.#next()
    }
  }

  /** Starts waiters while checks are free for them: the lightest address first, then the earliest. */
  #next (): void {
    while (this.#waiting > 0) {
      let next: Client | undefined
      let least = Infinity
      for (const client of this.#clients.values()) {
        if (client.queue.length === 0) continue
        const load = this.#load(client)
        if (!this.#free(client)) continue
        if (load < least || (load === least && client.queue[0].seq < next!.queue[0].seq)) {
          next = client
          least = load
        }
      }
      if (next === undefined) return
      this.#waiting--
      next.queue.shift()!.start()
    }
  }

  #busy (): Error {
    // What is ahead, at the pace of the checks so far: seconds until a try has a fair chance, 1 to 60.
    const ahead = (this.#running + this.#waiting) / this.#settings.concurrent
    const retryAfter = Math.min(60, Math.max(1, Math.ceil(ahead * this.#meanMs / 1000)))
    busyErrors[retryAfter] ??= Object.assign(new FST_SR_SIGN_IN_BUSY(), { retryAfter })
    return busyErrors[retryAfter]
  }
}
