// Every error this package raises, in one place, as Fastify keeps its own `errorCodes`. Each code has a
// section in docs/errors.md; test/errors.test.ts keeps the two in step. This module imports nothing of ours.
import createError from '@fastify/error'

/** A plugin or store option is missing or has the wrong shape; fails `app.ready()` or the constructor. */
const FST_SR_INVALID_OPTION = createError<[string, string]>(
  'FST_SR_INVALID_OPTION',
  'fastify-schools-resources: invalid option "%s": %s',
  500,
  TypeError
)

/** `new InMemoryCatalog(data)` was given data of the wrong shape. */
const FST_SR_INVALID_CATALOG = createError<[string, string]>(
  'FST_SR_INVALID_CATALOG',
  'fastify-schools-resources: InMemoryCatalog: %s %s',
  500,
  TypeError
)

/** `reply.redirectOnce` was given a status code that is not a redirect. */
const FST_SR_INVALID_REDIRECT_CODE = createError<[string]>(
  'FST_SR_INVALID_REDIRECT_CODE',
  'redirectOnce: %s is not a redirect status code (use 300, 301, 302, 303, 307 or 308)',
  500,
  TypeError
)

/** `reply.redirectOnce` was given a URL that cannot be sent as a Location header. */
const FST_SR_INVALID_REDIRECT_URL = createError<[string]>(
  'FST_SR_INVALID_REDIRECT_URL',
  'redirectOnce: %s cannot be sent as a Location header',
  500,
  TypeError
)

/**
 * The host's `authenticate` or `getMember` (the first argument names which) gave something that is not
 * a member; the second says what kind of value it was, never the value itself.
 */
const FST_SR_INVALID_MEMBER = createError<[string, string]>(
  'FST_SR_INVALID_MEMBER',
  'fastify-schools-resources: %s must give a member ({ id, name }: id a non-empty string or a number, name a string, groups if any a list of non-empty strings), or null; got %s',
  500,
  TypeError
)

/** Without `baseUrl`, a Host header that is not a plain host[:port] cannot be used to build a Location. */
const FST_SR_BAD_HOST = createError<[string]>(
  'FST_SR_BAD_HOST',
  'fastify-schools-resources: the Host header %s is not a valid host name; set the baseUrl option to stop using it',
  400
)

/** A shared store (sessions, counters) failed or did not answer in time; the request cannot be served. */
const FST_SR_STORE_UNAVAILABLE = createError<[string]>(
  'FST_SR_STORE_UNAVAILABLE',
  'fastify-schools-resources: the store is unavailable: %s',
  503
)

/** The store's Redis answered with an error that no retry fixes (WRONGTYPE, a script error, a bug): a 500, not an outage. */
const FST_SR_STORE_ERROR = createError<[string]>(
  'FST_SR_STORE_ERROR',
  'fastify-schools-resources: the store failed: %s',
  500
)

/** A Redis store was handed a client it cannot drive (not node-redis v5+: ioredis, a plain object). */
const FST_SR_UNSUPPORTED_REDIS_CLIENT = createError<[string, string]>(
  'FST_SR_UNSUPPORTED_REDIS_CLIENT',
  'fastify-schools-resources: %s cannot use this Redis client: %s',
  500,
  TypeError
)

/** Too many failed sign-ins from one client address within the window. */
const FST_SR_LOGIN_RATE_LIMITED = createError<[string]>(
  'FST_SR_LOGIN_RATE_LIMITED',
  'Too many failed sign-ins from this address. Try again after %s.',
  429
)

/**
 * The section is registered inside an encapsulated plugin (named by the argument), where it cannot see a
 * `config.membersOnly` route elsewhere in the app; fails `app.ready()` unless `membersOnlyOutsideSection: 'warn'`.
 */
const FST_SR_SECTION_ENCAPSULATED = createError<[string]>(
  'FST_SR_SECTION_ENCAPSULATED',
  'fastify-schools-resources is registered inside the encapsulated plugin %s, so a config.membersOnly route ' +
    'anywhere else in the app would be served to everyone (Fastify shows a plugin no route of a sibling context). ' +
    'Wrap that plugin in fastify-plugin, so that the section joins the app\'s own context and guards every such route; ' +
    'or, if the section is meant to guard only that plugin\'s routes, set membersOnlyOutsideSection: \'warn\' and guard ' +
    'routes elsewhere with preHandler: fastify.membersOnly(), which fails start-up where no section guards them',
  500
)

/** `anonymousShortCircuit` is registered, but no resources section was registered after it. */
const FST_SR_NO_SECTION = createError(
  'FST_SR_NO_SECTION',
  'fastify-schools-resources: anonymousShortCircuit is registered but no resources section that reads members from the session (no getMember option) was registered after it',
  500
)

/** `anonymousShortCircuit` was registered after @fastify/session, where it could change nothing. */
const FST_SR_PLUGIN_ORDER = createError(
  'FST_SR_PLUGIN_ORDER',
  'fastify-schools-resources: anonymousShortCircuit must be registered after @fastify/cookie and before @fastify/session',
  500
)

/** The section needs a session (the first argument says why) but neither session plugin was registered before it. */
const FST_SR_NO_SESSION_PLUGIN = createError<[string]>(
  'FST_SR_NO_SESSION_PLUGIN',
  'fastify-schools-resources: %s, so the section needs a session: register @fastify/cookie, then @fastify/session or @fastify/secure-session, before the section (docs/session-wiring.md)',
  500
)

/** A category page's request target (path and query) is longer than the section accepts. */
const FST_SR_URI_TOO_LONG = createError<[number]>(
  'FST_SR_URI_TOO_LONG',
  'fastify-schools-resources: the address is longer than %d characters',
  414
)

/** The section was registered under a register prefix it cannot build links for (a route parameter or wildcard). */
const FST_SR_REGISTER_PREFIX = createError<[string]>(
  'FST_SR_REGISTER_PREFIX',
  'fastify-schools-resources: cannot serve the section under the register prefix "%s": its links and redirects need a fixed path (no ":param" or "*"); register it outside that prefix and set its own prefix option',
  500
)

/** A second section shares the sign-in routes of an earlier one, but with settings that would make it not work. */
const FST_SR_SHARED_SIGN_IN = createError<[string, string]>(
  'FST_SR_SHARED_SIGN_IN',
  'fastify-schools-resources: the section at %s shares the sign-in at %s with an earlier section, so both need the same authenticate function, findMember, sessionKey, logoutPath, returnParam and passwordReset (or set signIn: false on the later one, or give it a loginPath of its own)',
  500
)

/** A sign-in without an email address or password, or with one too long to be real. */
const FST_SR_MISSING_CREDENTIALS = createError(
  'FST_SR_MISSING_CREDENTIALS',
  'Enter your email address and password.',
  400
)

/** A sign-in with an unknown email address or a wrong password (which of the two is not said). */
const FST_SR_INVALID_CREDENTIALS = createError(
  'FST_SR_INVALID_CREDENTIALS',
  'The email address or password is incorrect.',
  401
)

/** A sign-in for a username locked after too many failures; Retry-After says for how long. */
const FST_SR_LOCKED_OUT = createError<[string]>(
  'FST_SR_LOCKED_OUT',
  'Too many failed sign-ins for this email address. Try again after %s.',
  429
)

/** A member signed in more often in the last minute than `lockout.maxNewSessionsPerMinute` allows. */
const FST_SR_SESSION_RATE_LIMITED = createError<[string]>(
  'FST_SR_SESSION_RATE_LIMITED',
  'Too many sign-ins to this account in the last minute. Try again after %s.',
  429
)

/** A signed-in member asked for a page whose audience (groups) it is not in. */
const FST_SR_FORBIDDEN = createError<[string]>(
  'FST_SR_FORBIDDEN',
  'You don\'t have access to %s.',
  403
)

/** A members-only route's handler was reached without its guard having let the request in. */
const FST_SR_UNGUARDED_ROUTE = createError<[string]>(
  'FST_SR_UNGUARDED_ROUTE',
  'fastify-schools-resources: the members-only route %s was reached without its guard (an onRoute hook registered after the section replaced the route\'s preHandler?); it is refused rather than served open',
  500
)

/** Without `baseUrl`, the scheme a request reached the site with (X-Forwarded-Proto, when trustProxy lets it count) is not http or https. */
const FST_SR_BAD_PROTOCOL = createError<[string]>(
  'FST_SR_BAD_PROTOCOL',
  'fastify-schools-resources: the request\'s protocol %s is not http or https',
  400
)

/** A sign-in that could not sign anyone in: the session cookie is Secure and Fastify sees the request as plain http. */
const FST_SR_INSECURE_SIGN_IN = createError(
  'FST_SR_INSECURE_SIGN_IN',
  'You cannot be signed in over this connection: the site could not keep you signed in. Its administrator can find why in the site\'s log.',
  500
)

/**
 * The host's catalog handed in a record that is not a category (or a category list that is not a list).
 * The message says nothing of the record: the log line before it names the field.
 */
const FST_SR_INVALID_CATALOG_RECORD = createError(
  'FST_SR_INVALID_CATALOG_RECORD',
  'fastify-schools-resources: the catalog returned a record that is not valid; a warn line in the log names the field',
  500
)

/** A host view (`views.<name>`) threw, or gave something that is not a page (or, for the layout, not markup). */
const FST_SR_INVALID_VIEW = createError<[string, string, { cause: unknown }?]>(
  'FST_SR_INVALID_VIEW',
  'fastify-schools-resources: views.%s %s',
  500
)

/** What a client gets for any 5xx of the section that is not one of its own codes: never the error's own text. */
const FST_SR_INTERNAL_ERROR = createError(
  'FST_SR_INTERNAL_ERROR',
  'Something went wrong on our side. Please try again later.',
  500
)

/** Every password check of this process is taken and the line for one is full; Retry-After says when to try again. */
const FST_SR_SIGN_IN_BUSY = createError(
  'FST_SR_SIGN_IN_BUSY',
  'Sign-in is busy. Please try again in a moment.',
  503
)

/** An option is set (`files`, `oidc`: the first argument) whose optional peer (the second) is not installed; the third says what to install. */
const FST_SR_MISSING_PACKAGE = createError<[string, string, string]>(
  'FST_SR_MISSING_PACKAGE',
  'fastify-schools-resources: the %s option needs the package %s, which is not installed: npm i %s',
  500
)

/** `reply.signInMember` called without its options, or with a `method` (or `provider`) that is not a word of a–z, 0–9 and `-`. */
const FST_SR_INVALID_SIGN_IN_OPTIONS = createError<[string]>(
  'FST_SR_INVALID_SIGN_IN_OPTIONS',
  'fastify-schools-resources: reply.signInMember(member, { method, backUrl?, provider? }): %s',
  500,
  TypeError
)

/** An OpenID provider could not be reached, or did not answer in time (its name is the argument). */
const FST_SR_OIDC_UNAVAILABLE = createError<[string, { cause: unknown }?]>(
  'FST_SR_OIDC_UNAVAILABLE',
  'Sign-in with %s is briefly unavailable. Please try again in a moment.',
  503
)

/** An OpenID sign-in the section refused; the argument is the message for the visitor. */
const FST_SR_OIDC_REFUSED = createError<[string]>(
  'FST_SR_OIDC_REFUSED',
  '%s',
  403
)

/** A TokenStore's method (the first argument) was called with a key, record or ttlMs it cannot keep (the second says which). */
const FST_SR_INVALID_TOKEN = createError<[string, string]>(
  'FST_SR_INVALID_TOKEN',
  'fastify-schools-resources: TokenStore.%s: %s',
  500,
  TypeError
)

/** `signOutEverywhere(memberId)` was given something that is no member id (its kind is the argument). */
const FST_SR_INVALID_MEMBER_ID = createError<[string]>(
  'FST_SR_INVALID_MEMBER_ID',
  'fastify-schools-resources: signOutEverywhere(memberId) needs a member id (a non-empty string or a finite number); got %s',
  500,
  TypeError
)

export const errorCodes = {
  FST_SR_INVALID_OPTION,
  FST_SR_INVALID_CATALOG,
  FST_SR_INVALID_REDIRECT_CODE,
  FST_SR_INVALID_REDIRECT_URL,
  FST_SR_INVALID_MEMBER,
  FST_SR_BAD_HOST,
  FST_SR_URI_TOO_LONG,
  FST_SR_STORE_UNAVAILABLE,
  FST_SR_STORE_ERROR,
  FST_SR_UNSUPPORTED_REDIS_CLIENT,
  FST_SR_LOGIN_RATE_LIMITED,
  FST_SR_SECTION_ENCAPSULATED,
  FST_SR_NO_SECTION,
  FST_SR_PLUGIN_ORDER,
  FST_SR_NO_SESSION_PLUGIN,
  FST_SR_REGISTER_PREFIX,
  FST_SR_SHARED_SIGN_IN,
  FST_SR_MISSING_CREDENTIALS,
  FST_SR_INVALID_CREDENTIALS,
  FST_SR_LOCKED_OUT,
  FST_SR_SESSION_RATE_LIMITED,
  FST_SR_FORBIDDEN,
  FST_SR_UNGUARDED_ROUTE,
  FST_SR_BAD_PROTOCOL,
  FST_SR_INSECURE_SIGN_IN,
  FST_SR_INVALID_CATALOG_RECORD,
  FST_SR_INVALID_VIEW,
  FST_SR_INTERNAL_ERROR,
  FST_SR_SIGN_IN_BUSY,
  FST_SR_MISSING_PACKAGE,
  FST_SR_INVALID_SIGN_IN_OPTIONS,
  FST_SR_OIDC_UNAVAILABLE,
  FST_SR_OIDC_REFUSED,
  FST_SR_INVALID_TOKEN,
  FST_SR_INVALID_MEMBER_ID
} as const

/**
 * An optional peer dependency, loaded when the option that needs it is set: a site without files
 * installs neither @fastify/static nor content-disposition (docs/files.md), one without `oidc` no
 * openid-client. Missing, it fails `app.ready()` saying what to install; a package that is there but
 * fails to load is not hidden behind that message.
 */
export async function optionalPeer<T> (name: string, load: () => Promise<T>, option = 'files', install = '@fastify/static content-disposition'): Promise<T> {
  try {
    return await load()
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${name}'`)) throw new FST_SR_MISSING_PACKAGE(option, name, install)
    throw err
  }
}

// Which errors are an outage of a shared store (answered 503 by pages/unavailable.ts). Here, next to
// FST_SR_STORE_UNAVAILABLE, because the Redis stores (stores/redis/client.ts) ask it too.

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
