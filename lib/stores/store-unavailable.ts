/** Seconds a client is told to wait before trying again while a store is unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 5

// node-redis and ioredis error classes raised while the connection is down, closed or stuck.
const CLIENT_ERROR_NAMES = new Set([
  'ClientClosedError', 'ClientOfflineError', 'ConnectionTimeoutError', 'SocketClosedUnexpectedlyError',
  'ReconnectStrategyError', 'SocketTimeoutError', 'TimeoutError', 'AbortError', 'MaxRetriesPerRequestError'
])
// Node's network error codes.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

/**
 * Whether `error` means the store could not be reached: FST_SR_STORE_UNAVAILABLE (raised by the Redis
 * stores of this package) or a Redis client's connection error, as a store from elsewhere
 * (connect-redis, a host's own) would pass it on.
 */
export function isStoreUnavailable (error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false
  const { code, name } = error as { code?: unknown, name?: unknown }
  return code === 'FST_SR_STORE_UNAVAILABLE' ||
    (typeof name === 'string' && CLIENT_ERROR_NAMES.has(name)) ||
    // node-redis 5 leaves `name` as 'Error' on its classes ("The client is closed" is a ClientClosedError
    // named Error), so the class is known by its constructor's name.
    CLIENT_ERROR_NAMES.has((error as { constructor?: { name?: unknown } }).constructor?.name as string) ||
    (typeof code === 'string' && NETWORK_CODES.has(code))
}
