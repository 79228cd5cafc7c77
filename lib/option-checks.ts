// The one home of the option checks' helpers (docs/architecture.md#where-an-options-parser-lives): every
// parser, whichever floor it sits on, refuses a value through invalidOption(), so that each refusal is
// FST_SR_INVALID_OPTION with the option's name and the fix. A leaf: it imports only errors.ts.
import { errorCodes } from './errors.js'

const { FST_SR_INVALID_OPTION } = errorCodes

/** Refuses an option: FST_SR_INVALID_OPTION naming it (`lockout.windowMs`) and saying what it must be. */
export function invalidOption (name: string, why: string): never {
  throw new FST_SR_INVALID_OPTION(name, why)
}

/** A positive whole number, or `fallback` when left out. */
export function positiveInteger (value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) invalidOption(name, 'must be a positive whole number')
  return value
}

/** `opts[name]`: a function, or left out. Fastify always hands a plugin an options object (`{}` when none was given). */
export function optionalFunction<T> (opts: Record<string, unknown>, name: string): T | undefined {
  const value = opts[name]
  if (value !== undefined && typeof value !== 'function') invalidOption(name, 'must be a function')
  return value as T | undefined
}

/** `opts[name]`: an object of settings (`{}` when left out), or false to turn the feature off. */
export function optionalObject (opts: Record<string, unknown>, name: string): Record<string, unknown> | false {
  const value = opts[name] ?? {}
  if (value === false) return false
  if (value === null || typeof value !== 'object' || Array.isArray(value)) invalidOption(name, 'must be an object, or false to turn it off')
  return value as Record<string, unknown>
}
