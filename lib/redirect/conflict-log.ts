import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import { invalidOption } from '../option-checks.js'
import { IntervalLog } from '../interval-log.js'
import { REDIRECT_CONFLICT_WARNING } from '../warnings.js'

/**
 * How refused redirects are written to the log. The `UserWarning` is raised for every one whatever this
 * says; this only decides the log lines.
 * - `{ summaryIntervalMs }` (default `{ summaryIntervalMs: 60000 }`): the first refused redirect in full
 *   at once, then at most one `warn` line per interval with the number refused since and the latest of
 *   them. An interval without any ends the summary, so the next one is logged in full again. Every
 *   anonymous visitor of a members-only page causes one (crawlers, links in emails): the log does not
 *   grow by a line per visitor.
 * - `'each'`: one `warn` line per refused redirect on the request's logger.
 * - `false`: no log line.
 */
export type ConflictLogOption = 'each' | false | { summaryIntervalMs: number }

export interface ConflictLog {
  record (reply: FastifyReply, existing: string, refused: string, message: string): void
  /** Writes what is still counted; the app is closing. */
  close (): void
}

/** The default: a summary a minute. */
const DEFAULT_CONFLICT_LOG: ConflictLogOption = Object.freeze({ summaryIntervalMs: 60_000 })

// setTimeout's ceiling: a longer delay fires at once.
const MAX_INTERVAL_MS = 2 ** 31 - 1

export function parseConflictLog (value: unknown, name = 'conflictLog'): ConflictLogOption {
  if (value === undefined) return DEFAULT_CONFLICT_LOG
  if (value === 'each') return 'each'
  if (value === false) return false
  const interval = value !== null && typeof value === 'object' ? (value as { summaryIntervalMs?: unknown }).summaryIntervalMs : undefined
  if (typeof interval !== 'number' || !Number.isSafeInteger(interval) || interval < 1 || interval > MAX_INTERVAL_MS ||
    Object.keys(value as object).length !== 1) {
    invalidOption(name, `must be 'each', false, or { summaryIntervalMs: <milliseconds, 1 to ${MAX_INTERVAL_MS}> }`)
  }
  return { summaryIntervalMs: interval }
}

/** Each field of a log line is cut to this many characters, so that one line stays within a few KB. */
const MAX_FIELD = 1000

function clip (value: string): string {
  return value.length <= MAX_FIELD ? value : `${value.slice(0, MAX_FIELD)}… (${value.length} characters)`
}

function logInFull (reply: FastifyReply, existing: string, refused: string, message: string): void {
  reply.log.warn({ existingLocation: clip(existing), refusedLocation: clip(refused), code: REDIRECT_CONFLICT_WARNING }, clip(message))
}

const each: ConflictLog = { record: logInFull, close () {} }
const silent: ConflictLog = { record () {}, close () {} }

/** Counts refused redirects and reports them once per interval; costs nothing per request but a count. */
function conflictSummary (log: FastifyBaseLogger, intervalMs: number): ConflictLog {
  const interval = new IntervalLog(intervalMs, (count, latest, windowMs) => {
    const seconds = Math.max(1, Math.round(windowMs / 1000))
    log.warn(
      { code: REDIRECT_CONFLICT_WARNING, count, windowMs },
      `${count} more redirect conflicts in the last ${seconds} s, each raised as UserWarning ${REDIRECT_CONFLICT_WARNING}; the latest: ${clip(latest)}`
    )
  })
  return {
    record (reply, existing, refused, message) {
      if (interval.record(message)) logInFull(reply, existing, refused, message)
    },
    close () {
      interval.close()
    }
  }
}

export function conflictLog (option: ConflictLogOption, log: FastifyBaseLogger): ConflictLog {
  if (option === 'each') return each
  if (option === false) return silent
  return conflictSummary(log, option.summaryIntervalMs)
}
