// The one policy for a flood of like log lines (refused redirects, 503s during a store outage). A leaf:
// redirect/conflict-log.ts and pages/unavailable.ts, two floors apart, both use it. Imports nothing.

/** Writes the summary: `count` more events in the last `windowMs`, the latest of them `latest`. */
export type Summarize = (count: number, latest: string, windowMs: number) => void

/** A timer the log can start again from now (Node's Timeout is one). */
export interface IntervalTimer { refresh (): unknown }

/** Time as the log sees it: the process's own unless a test moves a clock of its own by hand. */
export interface IntervalClock {
  now (): number
  /** Starts a timer that never keeps the process alive. */
  start (callback: () => void, ms: number): IntervalTimer
  stop (timer: IntervalTimer | undefined): void
}

const processClock: IntervalClock = {
  now: Date.now,
  // Unref'd: a pending summary never keeps the process alive; close() writes it.
  start: (callback, ms) => setTimeout(callback, ms).unref(),
  stop: (timer) => { clearTimeout(timer as NodeJS.Timeout | undefined) }
}

/**
 * The first event of a run is written in full by the caller (`record()` says so); later ones are only
 * counted, and at most one summary per interval says how many and the latest. An interval without any
 * ends the run, so the next event is written in full again. Nothing per event but a count: a 60 s store
 * outage under load once wrote 370 MB of log, a line per request.
 */
export class IntervalLog {
  readonly #intervalMs: number
  readonly #summarize: Summarize
  readonly #clock: IntervalClock
  #timer: IntervalTimer | undefined
  #count = 0
  #latest = ''
  #since = 0

  constructor (intervalMs: number, summarize: Summarize, clock: IntervalClock = processClock) {
    this.#intervalMs = intervalMs
    this.#summarize = summarize
    this.#clock = clock
  }

  /** True for the first event of a run, which the caller writes in full; false when it is counted. */
  record (latest: string): boolean {
    if (this.#timer !== undefined) {
      this.#count++
      this.#latest = latest
      return false
    }
    this.#since = this.#clock.now()
    this.#timer = this.#clock.start(() => this.#tick(), this.#intervalMs)
    return true
  }

  #tick (): void {
    if (this.#count === 0) {
      this.#timer = undefined
      return
    }
    this.#report()
    this.#timer!.refresh()
  }

  #report (): void {
    const now = this.#clock.now()
    const count = this.#count
    this.#count = 0
    this.#summarize(count, this.#latest, now - this.#since)
    this.#since = now
  }

  /** Writes what is still counted and stops the timer; the app is closing. */
  close (): void {
    this.#clock.stop(this.#timer)
    this.#timer = undefined
    if (this.#count > 0) this.#report()
  }
}
