// The process warnings this package raises. Imports nothing of ours.

/** Code of the `UserWarning` raised when a second, different redirect is refused by `reply.redirectOnce`. */
export const REDIRECT_CONFLICT_WARNING = 'FST_SR_REDIRECT_CONFLICT'

/** Code of the `UserWarning` raised once when a session holds something under `sessionKey` that is not a member. */
export const NOT_A_MEMBER_WARNING = 'FST_SR_NOT_A_MEMBER'

// One prototype per warning type: an Error whose name is the type, as Node's own warnings have.
const prototypes = new Map<string, Error>()

function prototypeOf (type: string): Error {
  let proto = prototypes.get(type)
  if (proto === undefined) {
    proto = Object.create(Error.prototype, { name: { value: type, writable: true, configurable: true } }) as Error
    prototypes.set(type, proto)
  }
  return proto
}

/**
 * Raises a Node process warning as `process.emitWarning(message, { type, code })` does: the same
 * 'warning' event with an `Error` of that name, code and message, printed the same way. The stack
 * trace is captured only under `--trace-warnings`, the one place Node prints it: the anonymous
 * redirect raises one warning per request, and building a V8 Error for each was its largest cost
 * (docs/performance.md). The object is an Error (`instanceof`, `String()`, `util.inspect`) whose
 * `stack` is its first line, as an Error's is when no frame is captured.
 */
export function emitProcessWarning (message: string, type: string, code: string): void {
  const warning = Object.create(prototypeOf(type)) as Error & { code: string }
  warning.message = message
  warning.code = code
  if ((process as { traceProcessWarnings?: boolean }).traceProcessWarnings === true) {
    Error.captureStackTrace(warning, emitProcessWarning)
  } else {
    warning.stack = `${type}: ${message}`
  }
  process.emitWarning(warning)
}
