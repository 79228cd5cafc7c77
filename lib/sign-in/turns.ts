/**
 * This process's view of the sign-ins in flight, which the counts in the store cannot give: how many
 * passwords are being checked right now, per counter key, and a queue per username so that at most
 * `slots` of its passwords are checked at once. Nothing here is shared between instances.
 */
import { signInBusy } from './password-checks.js'

/**
 * Sign-ins to one username that may wait for a turn; past it, FST_SR_SIGN_IN_BUSY at once. A shared class
 * login opened on a class set of devices fits many times over; a flood of correct sign-ins to one account
 * (each a full password check and a new session) no longer piles up without bound.
 */
export const MAX_WAITING_PER_USERNAME = 100

interface Entry {
  /** Passwords being checked now under this key. */
  checking: number
  /** Checks under this key that ended, since the entry was made (it lives while anyone holds it). */
  exits: number
  /** Sign-ins holding the entry (reading its counts, waiting or checking). */
  holders: number
  /** Wakes the sign-ins waiting for the next check under this key to end. */
  waiters: Array<() => void>
}

interface Queue {
  running: number
  next: Array<() => void>
}

export class Turns {
  readonly #entries = new Map<string, Entry>()
  readonly #queues = new Map<string, Queue>()
  readonly #slots: number

  constructor (slots: number) {
    this.#slots = slots
  }

  /** Waits until fewer than `slots` sign-ins to `username` are past this point (first come, first served). */
  async take (username: string): Promise<void> {
    let queue = this.#queues.get(username)
    if (queue === undefined) this.#queues.set(username, queue = { running: 0, next: [] })
    if (queue.running < this.#slots) {
      queue.running++
      return
    }
    if (queue.next.length >= MAX_WAITING_PER_USERNAME) throw signInBusy()
    // The slot is handed over by give() without ever being counted free, so nobody overtakes.
    await new Promise<void>((resolve) => queue.next.push(resolve))
  }

  give (username: string): void {
    const queue = this.#queues.get(username)!
    const next = queue.next.shift()
    if (next !== undefined) return next()
    if (--queue.running === 0) this.#queues.delete(username)
  }

  /** Keeps the entries of `keys` (and so their exit counts) alive until drop(). */
  hold (keys: readonly string[]): Entry[] {
    return keys.map((key) => {
      let entry = this.#entries.get(key)
      if (entry === undefined) this.#entries.set(key, entry = { checking: 0, exits: 0, holders: 0, waiters: [] })
      entry.holders++
      return entry
    })
  }

  drop (keys: readonly string[], entries: readonly Entry[]): void {
    entries.forEach((entry, i) => {
      if (--entry.holders === 0) this.#entries.delete(keys[i])
    })
  }

  /** Changes whenever a check under one of `entries` ends: counts read before then may be stale. */
  static exits (entries: readonly Entry[]): number {
    return entries.reduce((sum, entry) => sum + entry.exits, 0)
  }

  /** Whether one more check fits: under every key, fewer checks in flight than `room[i]` failures left. */
  static fits (entries: readonly Entry[], room: readonly number[]): boolean {
    return entries.every((entry, i) => entry.checking < room[i])
  }

  static start (entries: readonly Entry[]): void {
    for (const entry of entries) entry.checking++
  }

  /** A check ended (its failure, if any, is already counted in the store): wake whoever waits on its keys. */
  static finish (entries: readonly Entry[]): void {
    for (const entry of entries) {
      entry.checking--
      entry.exits++
      const waiters = entry.waiters
      entry.waiters = []
      for (const wake of waiters) wake()
    }
  }

  /** Resolves when the next check under any of `entries` ends. */
  static next (entries: readonly Entry[]): Promise<void> {
    return new Promise((resolve) => {
      for (const entry of entries) entry.waiters.push(resolve)
    })
  }
}

export type TurnEntry = Entry
