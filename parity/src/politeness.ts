import { setTimeout as sleep } from 'node:timers/promises'
import { ParityInputError } from './errors.js'

export interface Politeness {
  /** Requests in flight at once, per origin. */
  concurrency: number
  /** Requests started per second, per origin. */
  ratePerSecond: number
  /** Milliseconds one attempt may take, headers and body. */
  timeoutMs: number
  /** Attempts after the first, for network errors, 429 and 5xx answers. */
  retries: number
  /** The first retry waits this long; each next one twice as long. */
  backoffMs: number
}

export const DEFAULT_POLITENESS: Politeness = { concurrency: 4, ratePerSecond: 10, timeoutMs: 10_000, retries: 2, backoffMs: 500 }

/**
 * One origin's budget: at most `concurrency` requests in flight, and each start at least 1/rate after
 * the one before it, measured from when that one really started: a timer that fires late (a busy event
 * loop) delays the ones after it rather than letting them catch up in a burst.
 */
export class OriginLimiter {
  #inFlight = 0
  #waiting: Array<() => void> = []
  #gate: Promise<void> = Promise.resolve()
  #lastStart = -Infinity
  readonly #interval: number
  readonly #concurrency: number

  constructor (concurrency: number, ratePerSecond: number) {
    this.#concurrency = concurrency
    this.#interval = 1000 / ratePerSecond
  }

  async run<T> (task: () => Promise<T>): Promise<T> {
    if (this.#inFlight >= this.#concurrency) await new Promise<void>((resolve) => this.#waiting.push(resolve))
    else this.#inFlight++
    try {
      const turn = this.#gate.then(async () => {
        const wait = this.#lastStart + this.#interval - performance.now()
        if (wait > 0) await sleep(wait)
        this.#lastStart = performance.now()
      })
      this.#gate = turn
      await turn
      return await task()
    } finally {
      // The slot passes straight to the next waiter, so the count never dips and lets a newcomer in first.
      const next = this.#waiting.shift()
      if (next === undefined) this.#inFlight--
      else next()
    }
  }
}

export interface Answer {
  status: number
  headers: Headers
  /** The body as text, up to the cap (empty when it went to a reader instead). */
  body: string
  /** The body was longer than the cap, after decompression: the rest was not read. */
  cut: boolean
}

/** What to do with a body: read at most `maxBytes` of it (decompressed), and hand a 200's text to a reader. */
export interface BodyRead {
  maxBytes: number
  /**
   * Made afresh for each attempt answered 200: takes the text as it arrives instead of keeping it, and
   * returns false when it wants no more (the rest is not read).
   */
  reader?: () => (text: string) => boolean
  /** The body is not wanted (an answer compared by its status and headers): read to the cap and dropped. */
  discard?: boolean
}

/**
 * Reads a body a chunk at a time, decompressed, and stops at the cap or when the reader has enough:
 * memory stays in proportion to the cap (or to the reader's own state), whatever the site sends.
 */
async function readBody (res: Response, { maxBytes, reader, discard: dropped = false }: BodyRead): Promise<{ body: string, cut: boolean }> {
  const take = res.status === 200 ? reader?.() : undefined
  // A body meant for a reader is wanted only in a 200: any other (a sitemap's 404, a 503 retried) is dropped.
  const discard = dropped || (reader !== undefined && take === undefined)
  const parts: string[] = []
  const decoder = new TextDecoder()
  // A HEAD answer has no body.
  if (res.body === null) return { body: '', cut: false }
  const stream = res.body.getReader()
  let bytes = 0
  let cut = false
  for (;;) {
    const { done, value } = await stream.read()
    if (done) break
    let chunk = value
    if (bytes + chunk.byteLength > maxBytes) {
      chunk = chunk.subarray(0, maxBytes - bytes)
      cut = true
    }
    bytes += chunk.byteLength
    const text = discard ? '' : decoder.decode(chunk, { stream: !cut })
    const more = take === undefined ? parts.push(text) > 0 : take(text)
    if (cut || !more) {
      await stream.cancel()
      break
    }
  }
  return { body: parts.join(''), cut }
}

/** Why a request failed for good: the last error, after the retries. */
export class RequestFailure extends Error {
  override name = 'RequestFailure'
  constructor (message: string, readonly code: string) {
    super(message)
  }
}

const TLS_CODE = /^(?:ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/

/** The error under fetch's "fetch failed" (undici puts the socket's error in `cause`), named by its code. */
export function failureOf (err: unknown, timeoutMs: number): RequestFailure {
  type Coded = Error & { code?: string }
  const e = err as Coded & { cause?: Coded }
  if (e.name === 'TimeoutError') return new RequestFailure(`no answer within ${timeoutMs} ms`, 'TIMEOUT')
  const cause: Coded = e.cause ?? e
  const code = cause.code ?? 'NETWORK'
  if (TLS_CODE.test(code)) return new RequestFailure(`TLS error: ${cause.message} (${code})`, 'TLS')
  return new RequestFailure(`${cause.message} (${code})`, code)
}

const retryable = (status: number) => status === 429 || status >= 500

/**
 * GET or HEAD (POST only to sign in) without following redirects, through the origin's limiter, with a
 * timeout per attempt and retries with doubling backoff (a Retry-After of up to a minute is honoured
 * instead).
 */
export async function politeRequest (url: string, method: 'GET' | 'HEAD' | 'POST', headers: Record<string, string>, limiter: OriginLimiter, politeness: Politeness, read: BodyRead, body?: string): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    let wait = politeness.backoffMs * 2 ** attempt
    try {
      const answer = await limiter.run(async () => {
        const signal = AbortSignal.timeout(politeness.timeoutMs)
        const res = await fetch(url, { method, headers, body, redirect: 'manual', signal })
        return { status: res.status, headers: res.headers, ...await readBody(res, read) }
      })
      if (!retryable(answer.status) || attempt >= politeness.retries) return answer
      const after = Number(answer.headers.get('retry-after'))
      if (after > 0 && after <= 60) wait = after * 1000
    } catch (err) {
      // A reader's verdict on the text (a sitemap that does not parse) is final.
      if (err instanceof ParityInputError) throw err
      const failure = failureOf(err, politeness.timeoutMs)
      // A TLS failure will not mend itself on a retry.
      if (attempt >= politeness.retries || failure.code === 'TLS') throw failure
    }
    await sleep(wait)
  }
}
