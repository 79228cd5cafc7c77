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
 * redirect raises one warning per request, and a stack captured for each would be work that nobody
 * reads, on the section's most frequent answer. The object is an Error (`instanceof`, `String()`, `util.inspect`) whose
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

/** The most host mistakes one logger remembers having reported; the oldest is forgotten past it. */
export const MAX_REMEMBERED_MISTAKES = 1000

/** Where host mistakes are said: an app's logger, or anything with its `warn`. */
export interface MistakeLog {
  warn: (fields: object, message: string) => void
}

// Per logger (one per app), the keys of the host mistakes already reported, oldest first.
const reported = new WeakMap<object, Set<string>>()

/**
 * Logs a host mistake (a bad value handed in by the host: a member, a catalog record, a view's result,
 * a route's config, a proxy setting) once per `key` as a `warn` line carrying `code` and the fix, so that
 * a mistake repeated on every request costs one line, not one per request. The set of keys is bounded:
 * records from an ORM are new objects on every call, so keys name the record (`catalog:maths:sheet-1`),
 * never an object. Returns whether this call wrote the line.
 */
export function warnHostMistakeOnce (
  log: MistakeLog,
  key: string,
  fields: { code: string } & Record<string, unknown>,
  message: string
): boolean {
  let keys = reported.get(log)
  if (keys === undefined) reported.set(log, keys = new Set())
  if (keys.has(key)) return false
  if (keys.size >= MAX_REMEMBERED_MISTAKES) keys.delete(keys.values().next().value as string)
  keys.add(key)
  log.warn(fields, message)
  return true
}

/**
 * Forgets that `key` was reported, so that the mistake is said again should it come back (a resource's file
 * that was restored and served, then lost again).
 */
export function forgetHostMistake (log: MistakeLog, key: string): void {
  reported.get(log)?.delete(key)
}

/** Code of the log line, once per resource until its file is served again: a file resource's file cannot be served (missing, unreadable, outside the files directory). */
export const FILE_UNAVAILABLE_WARNING = 'FST_SR_FILE_UNAVAILABLE'

/** Code of the start-up log line: Fastify's `trustProxy` is `true`, a hop count, or otherwise trusts any client's X-Forwarded-For. */
export const TRUST_PROXY_WARNING = 'FST_SR_TRUST_PROXY'

/** Code of the log line, once per listener and channel: a listener subscribed with `subscribeEvent` threw, so its event was dropped. */
export const EVENT_LISTENER_WARNING = 'FST_SR_EVENT_LISTENER'

/** Code of the log line at a provider's first discovery: it has `endSession: true` but advertises no end_session_endpoint. */
export const OIDC_END_SESSION_WARNING = 'FST_SR_OIDC_END_SESSION'

/** Code of the log line at sign-in: the session cookie is Secure (or `baseUrl` https) but Fastify sees the request as plain http. */
export const SECURE_COOKIE_OVER_HTTP_WARNING = 'FST_SR_SECURE_COOKIE_OVER_HTTP'

/**
 * What kind of value a host handed in, for an error or a warning: "a number", "an object", never the
 * value itself (a host's user record or a view's output may hold anything, a password hash included).
 */
export function kindOfValue (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  const type = typeof value
  if (type === 'undefined') return 'undefined'
  if (type === 'object') return 'an object'
  // What is left (boolean, number, string, function, symbol, bigint) all take "a".
  return `a ${type}`
}

/**
 * Code of the `warn` line logged once at start-up when the sign-in limits count in a shared store (several
 * instances) but device cookies have no shared key (`lockout.deviceSecret`).
 */
export const NO_DEVICE_SECRET_WARNING = 'FST_SR_NO_DEVICE_SECRET'

/** Code of the start-up warn line when lockout.store is shared but rememberMe.store is the in-process default. */
export const REMEMBER_STORE_NOT_SHARED_WARNING = 'FST_SR_REMEMBER_STORE_NOT_SHARED'

/**
 * Code of the `warn` line logged once at start-up when a store of the sign-in limits has no `reserve()`
 * and `release()`: the checks in flight are then kept per process, not across instances.
 */
export const NO_STORE_RESERVATIONS_WARNING = 'FST_SR_NO_STORE_RESERVATIONS'

/**
 * Code of the log line (a process warning unless the store has a `log`) when a RedisSessionStore's
 * session writes wait for fewer replicas than `waitForReplicas.replicas` (the primary has fewer online),
 * and when they wait for all of them again.
 */
export const REPLICAS_WARNING = 'FST_SR_WAIT_REPLICAS'

/** A password reset link could not be made or sent (the visitor was answered already; docs/errors.md). */
export const RESET_EMAIL_FAILED_WARNING = 'FST_SR_RESET_EMAIL_FAILED'
