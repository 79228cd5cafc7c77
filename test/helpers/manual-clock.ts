import type { IntervalClock, IntervalTimer } from '../../lib/interval-log.js'

interface Pending extends IntervalTimer { at: number, callback: () => void }

/**
 * A clock a test moves by hand (`advance`), for code that takes an IntervalClock: its timers fire in
 * order of their due time, each seeing that time as now, and `refresh()` starts one again from now, as
 * Node's Timeout does. No real time passes, so a 5 s interval costs the test nothing.
 */
export class ManualClock implements IntervalClock {
  #now = 1_000_000
  readonly #pending = new Set<Pending>()

  now (): number {
    return this.#now
  }

  start (callback: () => void, ms: number): IntervalTimer {
    const timer: Pending = {
      at: this.#now + ms,
      callback,
      refresh: () => {
        timer.at = this.#now + ms
        this.#pending.add(timer)
        return timer
      }
    }
    this.#pending.add(timer)
    return timer
  }

  stop (timer: IntervalTimer | undefined): void {
    this.#pending.delete(timer as Pending)
  }

  /** Moves the clock on by `ms`, firing every timer that falls due on the way. */
  advance (ms: number): void {
    const end = this.#now + ms
    for (;;) {
      let next: Pending | undefined
      for (const timer of this.#pending) if (timer.at <= end && (next === undefined || timer.at < next.at)) next = timer
      if (next === undefined) break
      this.#pending.delete(next)
      this.#now = next.at
      next.callback()
    }
    this.#now = end
  }
}
