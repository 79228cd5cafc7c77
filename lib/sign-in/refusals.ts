import type { FastifyError } from 'fastify'
import { errorCodes } from '../errors.js'
import type { Said, Saying } from '../pages/answer-language.js'
import type { LoginViewData } from '../pages/views.js'

/** The login page's data as the routes give it: its error and notice named, written in the page's language. */
export type LoginPageData = Omit<LoginViewData, 'error' | 'notice'> & { error?: Saying, notice?: Saying }

/** The refusals a sign-in answers with a message only (no state of the request in them). */
export type RefusalCode = 'FST_SR_MISSING_CREDENTIALS' | 'FST_SR_INVALID_CREDENTIALS' | 'FST_SR_LOGIN_RATE_LIMITED' | 'FST_SR_LOCKED_OUT' |
  'FST_SR_SESSION_RATE_LIMITED'

/** Kept errors at most; the times are minutes ("09:15 UTC"), so a day holds a few hundred. */
export const MAX_KEPT_REFUSALS = 256

const kept = new Map<string, FastifyError>()

/**
 * The error of a refused sign-in, made once per code and minute of `until` (when it may try again) and
 * then shared: only its status, code and message are read (the page or the JSON), while a new error would
 * capture a stack that nobody reads, on each refusal of a password spray, which come as fast as the
 * attacker sends.
 */
export function refusalError (code: RefusalCode, until?: Date): FastifyError {
  const time = until === undefined ? undefined : retryTime(until)
  const key = `${code} ${time}`
  let error = kept.get(key)
  if (error === undefined) {
    if (kept.size >= MAX_KEPT_REFUSALS) kept.clear()
    const Make = errorCodes[code] as new (...args: string[]) => FastifyError
    error = time === undefined ? new Make() : new Make(time)
    kept.set(key, error)
  }
  if (until !== undefined && !retryAt.has(error)) retryAt.set(error, until)
  return error
}

// The time a kept refusal names, for its message in the visitor's language (the error's own is English,
// for the log): the first of its minute, which says the same minute.
const retryAt = new WeakMap<FastifyError, Date>()

/** "09:15 UTC": the time in a refusal's own (English, logged) message; the visitor reads `retryAt`'s, in their language. */
function retryTime (date: Date): string {
  return `${date.toISOString().slice(11, 16)} UTC`
}

/** The message a refusal says to the visitor, in their language: its code's, with the time it names. */
export function refusalSaid (error: FastifyError): Said {
  const time = retryAt.get(error)
  return { key: `error.${error.code as RefusalCode | 'FST_SR_SIGN_IN_BUSY' | 'FST_SR_INSECURE_SIGN_IN'}`, ...(time === undefined ? {} : { values: { time } }) }
}
