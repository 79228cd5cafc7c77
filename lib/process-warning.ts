/**
 * Raises a Node process warning exactly as `process.emitWarning(message, { type, code })` does, without
 * the stack trace that Node captures for every warning and prints only under `--trace-warnings`. On the
 * anonymous hot path (one warning per request) capturing that stack was the largest single cost.
 */
export function emitProcessWarning (message: string, type: string, code: string): void {
  const traced = (process as { traceProcessWarnings?: boolean }).traceProcessWarnings === true
  const limit = Error.stackTraceLimit
  if (!traced) Error.stackTraceLimit = 0
  const warning = new Error(message) as Error & { code: string }
  if (!traced) Error.stackTraceLimit = limit
  warning.name = type
  warning.code = code
  // Under --trace-warnings, the stack Node would have captured: from our caller, with the right name.
  if (traced) Error.captureStackTrace(warning, emitProcessWarning)
  process.emitWarning(warning)
}
