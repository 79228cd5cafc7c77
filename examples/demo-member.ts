import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import type { Credentials, Member } from 'fastify-schools-resources'

/**
 * Password checks at once, each on a thread of its own (the section's `passwordChecks.concurrent`, set
 * to the same number in app.ts): the section's line lets no more than this many run, so a check never
 * waits here for a thread.
 */
export const HASH_THREADS = 2

/**
 * How much lower a hashing thread's priority is than the process's: 5, a third of a busy thread's share
 * of a core under Linux's scheduler. Lower still (10, a ninth) measured a little better for downloads in
 * the spray bench, but starved the hashes when the machine was busy: a shutdown with 40 sign-ins in line
 * did not finish within its 10 s (test/example.test.ts, with other tests running).
 */
export const HASH_NICE = 5

// A hashing thread: scrypt, synchronous, one at a time. It first lowers its own scheduling priority
// (Linux: a thread is a task with a nice value of its own, found by /proc/thread-self), so that the
// event loop and the thread pool's file reads, which serve pages and downloads in a few milliseconds,
// always go ahead of a 50 ms hash; elsewhere it keeps the process's priority. Plain JavaScript,
// evaluated, so that no worker file has to be found in dist/ or under a TypeScript loader; built-ins
// through process.getBuiltinModule, which works whether Node evaluates it as CommonJS or as a module.
const HASHER = `
const NICE = ${HASH_NICE}
const { parentPort } = process.getBuiltinModule('node:worker_threads')
const { scryptSync } = process.getBuiltinModule('node:crypto')
try {
  const { getPriority, setPriority } = process.getBuiltinModule('node:os')
  const tid = Number(process.getBuiltinModule('node:fs').readlinkSync('/proc/thread-self').split('/').pop())
  setPriority(tid, Math.min(19, getPriority(tid) + NICE))
} catch {}
parentPort.on('message', ({ password, salt, keylen, options }) => {
  try {
    parentPort.postMessage({ key: scryptSync(password, salt, keylen, options) })
  } catch (err) {
    parentPort.postMessage({ error: String(err.message) })
  }
})
`

interface Job { password: string, salt: Buffer, keylen: number, options: ScryptOptions, resolve: (key: Buffer) => void, reject: (err: Error) => void }

/**
 * How long a hashing thread may sit idle before it stops. Each thread is a V8 isolate of about 6 MiB
 * resident: two kept for ever took the example's memory right after start from 85 to 98 MiB (the
 * bench's RSS figure, issue 23), for sign-ins that mostly come in bursts (a school's 8:30).
 */
export const HASH_IDLE_MS = 30_000

/**
 * node:crypto's scrypt on HASH_THREADS worker threads of the example's own, not on libuv's thread pool:
 * the pool (4 threads) stays for file reads, and the hashes run below the event loop's priority. In the
 * spray bench (docs/performance.md) this took the server's event-loop delay p99 from 46-61 ms to 33-35 ms
 * and a download's p99 from 346-453 ms to 255-298 ms. A thread is started when a check finds none free,
 * and stops after `idleMs` without work; it holds the process open only while it hashes.
 */
export class Hashers {
  readonly #idle: Worker[] = []
  readonly #jobs: Job[] = []
  readonly #running = new Map<Worker, Job>()
  readonly #idleTimers = new Map<Worker, NodeJS.Timeout>()
  readonly #idleMs: number
  #threads = 0

  constructor (idleMs = HASH_IDLE_MS) {
    this.#idleMs = idleMs
  }

  hash (password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.#jobs.push({ password, salt, keylen, options, resolve, reject })
      this.#dispatch()
    })
  }

  #dispatch (): void {
    while (this.#jobs.length > 0) {
      const worker = this.#idle.pop() ?? this.#spawn()
      if (worker === undefined) return
      clearTimeout(this.#idleTimers.get(worker))
      this.#idleTimers.delete(worker)
      const job = this.#jobs.shift()!
      this.#running.set(worker, job)
      worker.ref()
      worker.postMessage({ password: job.password, salt: job.salt, keylen: job.keylen, options: job.options })
    }
  }

  #spawn (): Worker | undefined {
    if (this.#threads >= HASH_THREADS) return undefined
    this.#threads++
    const worker = new Worker(HASHER, { eval: true })
    worker.unref()
    worker.on('message', ({ key, error }: { key?: Uint8Array, error?: string }) => {
      const job = this.#running.get(worker)!
      this.#running.delete(worker)
      worker.unref()
      this.#idle.push(worker)
      this.#idleTimers.set(worker, setTimeout(() => this.#stop(worker), this.#idleMs).unref())
      if (key === undefined) job.reject(new Error(error))
      else job.resolve(Buffer.from(key.buffer, key.byteOffset, key.byteLength))
      this.#dispatch()
    })
    // A thread that dies (out of memory) fails its check, not the process; the next hash starts another.
    worker.on('error', (err) => {
      this.#running.get(worker)?.reject(err)
      this.#running.delete(worker)
      this.#forget(worker)
      this.#dispatch()
    })
    return worker
  }

  /** An idle thread's time is up: it leaves the pool, and a later check starts a new one. */
  #stop (worker: Worker): void {
    this.#forget(worker)
    worker.terminate().catch(() => {})
  }

  #forget (worker: Worker): void {
    clearTimeout(this.#idleTimers.get(worker))
    this.#idleTimers.delete(worker)
    const at = this.#idle.indexOf(worker)
    if (at !== -1) this.#idle.splice(at, 1)
    this.#threads--
  }
}

const hashers = new Hashers()

function scryptAsync (password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, options, (err, key) => { if (err === null) resolve(key); else reject(err) })
  })
}

const KEY_LENGTH = 64
const PARAMS = { N: 16384, r: 8, p: 1 }

/** `scrypt$N$r$p$salt$hash`, base64 parts: the parameters travel with the hash. */
export async function hashPassword (password: string): Promise<string> {
  const salt = randomBytes(16)
  // Hashed at start-up (the demo accounts) on libuv's pool, before any file is served: the threads
  // start with the first sign-in instead of sitting idle from the start.
  const key = await scryptAsync(password, salt, KEY_LENGTH, PARAMS)
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$')
}

export async function verifyPassword (password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || hash === undefined) throw new Error('unknown password hash format')
  const expected = Buffer.from(hash, 'base64')
  const key = await hashers.hash(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(N), r: Number(r), p: Number(p) })
  return timingSafeEqual(key, expected)
}

export interface DemoMember extends Member {
  email: string
  passwordHash: string
}

/** An account of the example's: who the member is, and the email and password to sign in with. */
export interface DemoAccount {
  email: string
  password: string
}

/** The demo teacher is staff, so the staff-only category opens for them. */
export const DEMO_TEACHER: Member = { id: 'demo-teacher', name: 'Demo Teacher', groups: ['staff'] }
/** The demo parent is a member outside the staff audience: the staff-only category answers 403. */
export const DEMO_PARENT: Member = { id: 'demo-parent', name: 'Demo Parent', groups: ['parents'] }

/** The member as the section sees it: never the password hash. */
function withoutHash ({ passwordHash: _hash, ...member }: DemoMember): Member {
  return member
}

/**
 * The example's members (the teacher, and the parent when given) and their authenticate(). An unknown
 * email still costs one hash check, so that the answer's timing does not tell which addresses have an
 * account.
 */
export async function demoDirectory (teacher: DemoAccount, parent?: DemoAccount) {
  const accounts: Array<[Member, DemoAccount]> = parent === undefined ? [[DEMO_TEACHER, teacher]] : [[DEMO_TEACHER, teacher], [DEMO_PARENT, parent]]
  const members: DemoMember[] = await Promise.all(accounts.map(async ([member, { email, password }]) => ({ ...member, email, passwordHash: await hashPassword(password) })))
  const dummyHash = await hashPassword(randomBytes(16).toString('hex'))

  async function authenticate ({ email: given, password: attempt }: Credentials): Promise<Member | null> {
    const found = members.find((m) => m.email.toLowerCase() === given.toLowerCase())
    const ok = await verifyPassword(attempt, found?.passwordHash ?? dummyHash)
    return found === undefined || !ok ? null : withoutHash(found)
  }

  /** The member with this id as the directory has them now (the section's findMember), or null. */
  async function findMember (id: Member['id']): Promise<Member | null> {
    const found = members.find((m) => m.id === id)
    return found === undefined ? null : withoutHash(found)
  }

  return { members, authenticate, findMember }
}
