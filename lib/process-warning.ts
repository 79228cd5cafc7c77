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
 * 'warning' event with an `Error` of that name, code and message, printed the same way. Without the
 * stack trace that Node captures for every warning and prints only under `--trace-warnings`: on the
 * anonymous hot path (one warning per request) building a V8 Error was the largest cost left. The
 * object is an Error (`instanceof`, `String()`, `util.inspect`) whose `stack` is its first line, as an
 * Error's is when no frame is captured.
 */
export function emitProcessWarning (message: string, type: string, code: string): void {
  const warning = Object.create(prototypeOf(type)) as Error & { code: string }
  warning.message = message
  warning.code = code
  // Under --trace-warnings, the stack Node would have captured: from our caller.
  if ((process as { traceProcessWarnings?: boolean }).traceProcessWarnings === true) {
    Error.captureStackTrace(warning, emitProcessWarning)
  } else {
    warning.stack = `${type}: ${message}`
  }
  process.emitWarning(warning)
}
