import { realpathSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { FastifyRequest } from 'fastify'
import type { HelmetOptions } from 'helmet'
import type { Catalog, Credentials, Member } from './types.js'
import { invalidOption, optionalFunction, optionalObject, positiveInteger } from './option-checks.js'
import { parseBaseUrl } from './redirect/site-origin.js'
import { sessionCookieName } from './access/anonymous-short-circuit.js'
import { parseConflictLog, type ConflictLogOption } from './redirect/conflict-log.js'
import { resolveStylesheet, type ResolvedStylesheet } from './pages/stylesheet.js'
import { resolveOpenApi, type OpenApi } from './pages/openapi.js'
import { parseMembersOnlyOutsideSection, type MembersOnlyOutsideSection } from './access/members-only.js'
import type { Views } from './pages/views.js'
import { isPlainObject, Translations, type HostMessages } from './i18n/translations.js'
import { RequestLocales, type LocaleOption } from './i18n/request-locale.js'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './pages/pagination.js'
import type { FindMember, FindMemberCacheSettings } from './session/find-member.js'
import { MemoryAttemptStore, type AttemptStore } from './stores/attempt-store.js'
import { namedFile } from './section/catalog.js'
import { resolveOidc, type OidcOptions, type ResolvedOidc } from './sign-in/oidc-options.js'
import type { LockoutOptions, LockoutSettings, LoginRateLimitOptions, LoginRateLimitSettings } from './sign-in/limits.js'
import { CSRF_DEFAULT_SESSION_KEY, providerKey, type KeepSessionData } from './session/session-data.js'
import { timesKey, type TimeoutSettings, type TimeoutsOptions } from './session/timeouts.js'
import { generationKey, type SignOutEverywhereOptions } from './session/sign-out-everywhere.js'
import { REMEMBER_FIELD, type RememberMeOptions } from './session/remember-me.js'
import type { TokenStore } from './stores/token-store.js'
import { resolvePasswordReset, type PasswordResetOptions, type PasswordResetSettings } from './password-reset/options.js'
import { passwordCheckDefaults, perAddressDefault, type PasswordCheckSettings, type PasswordChecksOptions } from './sign-in/password-checks.js'

/**
 * The plugin's options. A union on purpose: with sign-in on (the default) `authenticate` is required and
 * `logoutUrl` is refused, so those start-up errors are type errors too (docs/migration.md).
 */
export type FastifySchoolsResourcesOptions = SectionSignInOptions | OidcOnlySignInOptions | HostSignInOptions

/** The section serves sign-in (`signIn` left out or `true`): it needs `authenticate`. */
export interface SectionSignInOptions extends SectionOptions {
  /** Serve the login and logout routes (default true). Hosts with their own sign-in set false. */
  signIn?: true
  /** Checks a sign-in; resolves to the member, or to null/undefined when the credentials are wrong. */
  authenticate: (credentials: Credentials, request: FastifyRequest) => Promise<Member | null | undefined>
  /** Only with `signIn: false`: the section's own sign-out is `logoutPath`. */
  logoutUrl?: never
  /** Show the password form (default true); false shows only the `oidc` providers' buttons. */
  passwordSignIn?: true
  /** Sign in with the school's account too: OpenID Connect providers (docs/oidc.md). */
  oidc?: OidcOptions
  /**
   * "Forgotten your password?" at `/Security/lostpassword` and `/Security/changepassword` (the login
   * page's folder): the host's hooks, the link's life, its store and limits (docs/password-reset.md).
   * Only with the section's own password form, `baseUrl` and `signOutEverywhere`; left out: no routes.
   */
  passwordReset?: PasswordResetOptions
}

/** The section serves sign-in with OpenID Connect only (`passwordSignIn: false`): no `authenticate`. */
export interface OidcOnlySignInOptions extends SectionOptions {
  signIn?: true
  /** No password form: the login page shows only the providers' buttons. */
  passwordSignIn: false
  oidc: OidcOptions
  /** Not used without the password form. */
  authenticate?: never
  logoutUrl?: never
  /** A reset sets the password the form checks: not without the form. */
  passwordReset?: never
}

/** The host signs members in itself (`signIn: false`): `getMember`, or the member it puts in the session. */
export interface HostSignInOptions extends SectionOptions {
  signIn: false
  /** Not used without the section's sign-in; allowed so that one options object can switch `signIn`. */
  authenticate?: (credentials: Credentials, request: FastifyRequest) => Promise<Member | null | undefined>
  /** The host's sign-out page, linked for signed-in members (docs/sign-in.md#hosts-with-their-own-sign-in). */
  logoutUrl?: string
  /** The section's own sign-in options: not with `signIn: false` (end your own callback in `reply.signInMember`). */
  oidc?: never
  passwordSignIn?: never
  /** The section's own sign-in's: not with `signIn: false`. */
  passwordReset?: never
}

/** The options both kinds of section take. */
export interface SectionOptions {
  /** Where the categories and their resources come from (required). */
  catalog: Catalog
  /** Path of the section (default `/schools/resources`). */
  prefix?: string
  /** The site's origin, e.g. `https://www.example.org`, used in absolute Locations (default: the request's). */
  baseUrl?: string
  /** Path of the login page (default `/Security/login`). */
  loginPath?: string
  /** Path of the logout action (default `/Security/logout`). */
  logoutPath?: string
  /** The return address's query and form field (default `BackURL`, the spec's); another name leaves the legacy contract. */
  returnParam?: string
  /** Session key that holds the signed-in member (default `member`). */
  sessionKey?: string
  /**
   * What sign-in keeps of the session under its new id, whichever way the member signs in: `true`
   * (default) all the host stored but `_csrf` (@fastify/csrf-protection's secret), `sessionKey` and
   * `${sessionKey}.provider` (an OpenID sign-in's); a list keeps only those keys (`['cart', 'lang']`);
   * `false` starts a clean one. A host whose csrf-protection keeps its secret under another `sessionKey`
   * lists its keys or sets false (docs/sign-in.md).
   */
  keepSessionData?: KeepSessionData
  /** Who is signed in, for hosts with their own authentication (default: the session's member). */
  getMember?: (request: FastifyRequest) => Member | null | undefined | Promise<Member | null | undefined>
  /**
   * The member with this id as it is now (`{ ...member, sessionVersion? }`), or null: the session then
   * keeps only the id, and each request loads the member through a short cache (docs/sign-in.md#findmember).
   */
  findMember?: FindMember
  /** findMember's per-process cache: answers kept `ttlMs` (default 5000; 0 keeps none), for at most `max` ids (default 1000). */
  findMemberCache?: Partial<FindMemberCacheSettings>
  /**
   * How the index shows categories with an `audience`: `'mark'` (default) lists them all and marks those
   * the signed-in member cannot open; `'hide'` lists a restricted category only to members of its
   * audience (visitors who are not signed in see only the categories open to every member).
   */
  restrictedCategories?: 'mark' | 'hide'
  /**
   * How many categories a page of the index, and resources a page of a category, shows (default 50, at
   * most 1000); longer lists are paged with `?start=` (docs/pages-and-views.md#pages).
   */
  pageSize?: number
  /** Replace any of the page renderers. */
  views?: Partial<Views>
  /** Site name shown in page titles and the header (default: the message `site.name`, "Schools resources"). */
  siteName?: string
  /**
   * The language of the pages (docs/languages.md): a fixed tag, or a function of the request giving one
   * (or undefined), which may be async; without it, or when it gives undefined, `Accept-Language` chooses
   * among the locales. A function that throws, rejects or gives a locale the section lacks is logged once
   * per kind of mistake, and `Accept-Language` chooses. A region falls back to its language (`fr-CA` → `fr`).
   */
  locale?: LocaleOption
  /** The locale when nothing else chooses one, and the fallback of a missing message (default `en`). */
  defaultLocale?: string
  /**
   * Messages per locale tag, over the shipped ones, in ICU MessageFormat: some keys of a shipped locale,
   * or a locale of your own (a key it lacks comes from its language, `defaultLocale`, then English, logged
   * once as FST_SR_MISSING_MESSAGE). Checked at start-up: known keys, the English placeholders and tags.
   */
  messages?: HostMessages
  /** IANA time zone of the times pages show, such as the end of a lockout (default `UTC`). */
  timeZone?: string
  /** `true` (default): serve and link the section's stylesheet; `false`: none; a URL: link yours instead. */
  stylesheet?: boolean | string
  /**
   * Failed-sign-in lockout (docs/security.md#sign-in-limits): 10 failures for a username from one address,
   * or 100 from browsers it never signed in from, within 15 minutes lock them for 15 minutes; a browser
   * that signed in before keeps signing in. false turns it off.
   */
  lockout?: LockoutOptions | false
  /** Failed sign-ins per client address (default 50 per 15 minutes); false turns it off. */
  loginRateLimit?: LoginRateLimitOptions | false
  /**
   * How many passwords this process checks at once, how many sign-ins wait for a turn, and how many of
   * those one client address may have (default: half of libuv's thread pool at once; 400 waiting; three
   * quarters of both per address). Past them, sign-in answers 503 FST_SR_SIGN_IN_BUSY at once.
   */
  passwordChecks?: PasswordChecksOptions
  /**
   * The session cookie's name, as given to the session plugin and `anonymousShortCircuit` (default: the
   * plugin's, `sessionId` for @fastify/session, the `sessionName` for @fastify/secure-session).
   */
  cookieName?: string
  /** Which session plugin keeps the member, needed only when both are registered (docs/session-wiring.md). */
  sessionPlugin?: '@fastify/session' | '@fastify/secure-session'
  /** @fastify/secure-session's `sessionName`, when not `session` (then that plugin is the one used). */
  sessionName?: string
  /** helmet options for the plugin's own routes (default: a strict CSP for these pages); false turns it off. */
  helmet?: HelmetOptions | false
  /**
   * How refused redirects (the redirect-conflict warning) are logged: a summary per interval
   * (`{ summaryIntervalMs }`, default one a minute), `'each'`, or `false`. The `UserWarning` is raised for every one regardless.
   */
  conflictLog?: ConflictLogOption
  /**
   * Where the files of file resources (`{ file: 'maths/sheet.pdf' }`) are kept: `root`, a directory,
   * absolute or relative to the working directory (docs/files.md). Required when the catalog names files.
   */
  files?: { root: string }
  /**
   * The section's routes in a host's @fastify/swagger document: hidden (`false`, the default), or shown
   * tagged (`true`: `Resources`; `{ tag }`) with their answers (docs/openapi.md).
   */
  openapi?: boolean | { tag?: string }
  /**
   * The key (a secret of 128 bits or more: `openssl rand -base64 32`) of the keyed hash that failed sign-in
   * events carry instead of an email address tried (docs/events.md); the same on every instance so that
   * hashes compare. Unset: one per process.
   */
  auditKey?: string
  /**
   * A section registered inside an encapsulated plugin (an @fastify/autoload file without fastify-plugin)
   * cannot see a `config.membersOnly` route elsewhere in the app, so start-up fails with
   * FST_SR_SECTION_ENCAPSULATED; `'warn'` starts it with a warning instead (docs/host-routes.md).
   */
  membersOnlyOutsideSection?: 'warn'
  /**
   * Sign a member out after `idleMs` without a request (default 60 minutes) and `absoluteMs` after
   * signing in (default 12 hours), from times the section keeps in the session; `false` turns one or
   * both off. Not with `getMember`: the host keeps that session (docs/session-lifecycle.md).
   */
  timeouts?: TimeoutsOptions | false
  /**
   * "Sign out on all devices": a per-member generation count in `store` (default `lockout.store`) that
   * every session is compared with, `app.schoolsResources.signOutEverywhere(memberId)` and the button
   * on member pages; `false` turns it off. Not with `getMember` (docs/session-lifecycle.md).
   */
  signOutEverywhere?: SignOutEverywhereOptions | false
  /**
   * "Keep me signed in on this device": a checkbox on the login form, and a remember token in its own
   * cookie for `maxAgeMs` (default 30 days), kept in `store` (default a MemoryTokenStore); `false` turns
   * it off. Not with `getMember` (docs/session-lifecycle.md#keep-me-signed-in).
   */
  rememberMe?: RememberMeOptions | false
}

export interface ResolvedOptions {
  catalog: Catalog
  authenticate: SectionSignInOptions['authenticate'] | undefined
  signIn: boolean
  /** Whether the login page has the password form (and the sign-in route is served). */
  passwordSignIn: boolean
  /** The OpenID Connect providers, checked. */
  oidc: ResolvedOidc | undefined
  prefix: string
  baseUrl: string | undefined
  loginPath: string
  logoutPath: string
  /** The host's sign-out page, as given (a path, or a URL on baseUrl's origin). */
  logoutUrl: string | undefined
  returnParam: string
  sessionKey: string
  keepSessionData: KeepSessionData
  getMember: FastifySchoolsResourcesOptions['getMember']
  /** The host's findMember and its cache settings, or undefined without it. */
  findMember: { find: FindMember, cache: FindMemberCacheSettings } | undefined
  restrictedCategories: 'mark' | 'hide'
  pageSize: number
  views: Partial<Views>
  /** The host's site name, or undefined for the message `site.name` of each page's locale. */
  siteName: string | undefined
  translations: Translations
  locales: RequestLocales
  stylesheet: ResolvedStylesheet
  lockout: LockoutSettings | false
  loginRateLimit: LoginRateLimitSettings | false
  passwordChecks: PasswordCheckSettings
  cookieName: string | undefined
  sessionPlugin: unknown
  sessionName: string | undefined
  helmet: HelmetOptions | false
  conflictLog: ConflictLogOption
  /** The files directory's real path (symlinks resolved), or undefined without the option. */
  filesRoot: string | undefined
  openapi: OpenApi
  auditKey: string | undefined
  membersOnlyOutsideSection: MembersOnlyOutsideSection
  timeouts: TimeoutSettings | false
  signOutEverywhere: { store: AttemptStore } | false
  /** `store` undefined: the app's one in-process MemoryTokenStore, which every section of it shares. */
  rememberMe: { maxAgeMs: number, store: TokenStore | undefined } | false
  passwordReset: PasswordResetSettings | undefined
}

// Fastify passes these through to every plugin; they are not ours to judge.
const FASTIFY_KEYS = new Set(['logLevel', 'logSerializers'])
const KNOWN_KEYS = new Set<string>([
  'catalog', 'authenticate', 'signIn', 'prefix', 'baseUrl', 'loginPath', 'logoutPath',
  'sessionKey', 'keepSessionData', 'getMember', 'restrictedCategories', 'views', 'siteName', 'locale', 'defaultLocale', 'messages', 'timeZone', 'stylesheet', 'lockout', 'loginRateLimit', 'helmet', 'conflictLog',
  'files', 'passwordChecks', 'cookieName', 'sessionPlugin', 'sessionName', 'pageSize',
  'openapi',
  'auditKey',
  'findMember', 'findMemberCache',
  'logoutUrl', 'returnParam', 'membersOnlyOutsideSection',
  'oidc', 'passwordSignIn',
  'timeouts', 'signOutEverywhere', 'rememberMe', 'passwordReset'
])
const VIEW_KEYS = new Set(['layout', 'index', 'category', 'login', 'notFound', 'forbidden', 'lostPassword', 'changePassword'])

const PATH_RULE = 'a leading slash, no trailing slash, no query'

function path (opts: Record<string, unknown>, name: string, fallback: string, why = `must be a path such as "/schools/resources": ${PATH_RULE}`): string {
  const value = opts[name] ?? fallback
  if (typeof value !== 'string' || !/^\/[A-Za-z0-9\-._~/]*$/.test(value) || value.includes('//') ||
    (value.length > 1 && value.endsWith('/'))) {
    invalidOption(name, why)
  }
  return value
}

/** A host page's address (`logoutUrl`): a path such as `path()` takes, or one on baseUrl's origin. */
function hostPage (value: unknown, name: string, baseUrl: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const local = typeof value === 'string' && baseUrl !== undefined && value.startsWith(`${baseUrl}/`) ? value.slice(baseUrl.length) : value
  path({ [name]: local }, name, '', `must be a path on this site such as "/Security/logout" (${PATH_RULE}), or that path on baseUrl's origin`)
  return value as string
}

// The login form's own fields: a return parameter of the same name would be read as one of them.
// The login form's fields (`remember`, its "Keep me signed in" box) and the logout form's (`everywhere`,
// its "Sign out on all devices" button).
const FORM_FIELDS = new Set(['_csrf', 'email', 'password', REMEMBER_FIELD, 'everywhere'])

/** The return parameter's name: a query name that needs no encoding (RFC 3986 unreserved characters). */
function returnParam (value: unknown): string {
  if (value === undefined) return 'BackURL'
  if (typeof value !== 'string' || !/^[A-Za-z0-9\-._~]{1,64}$/.test(value) || FORM_FIELDS.has(value)) {
    invalidOption('returnParam', `must be a query name of letters, digits and - . _ ~ (such as "returnTo" or "next"), not one of the sign-in forms' fields (${[...FORM_FIELDS].join(', ')})`)
  }
  return value
}

function optionalName (opts: Record<string, unknown>, name: string): string | undefined {
  const value = opts[name]
  if (value !== undefined && (typeof value !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(value))) invalidOption(name, 'must be the name of a request property, such as "session"')
  return value as string | undefined
}

const MINUTES_15 = 15 * 60 * 1000

const STORE_METHODS = ['increment', 'hold', 'get', 'reset'] as const

function attemptStore (value: unknown, name: string): AttemptStore {
  if (value === null || typeof value !== 'object' || STORE_METHODS.some((m) => typeof (value as Record<string, unknown>)[m] !== 'function')) {
    invalidOption(name, `must implement ${STORE_METHODS.join(', ')} (an AttemptStore, such as new RedisAttemptStore(client))`)
  }
  return value as AttemptStore
}

function resolveLockout (opts: Record<string, unknown>): LockoutSettings | false {
  const lockout = optionalObject(opts, 'lockout')
  if (lockout === false) return false
  const deviceSecret = lockout.deviceSecret
  if (deviceSecret !== undefined && (typeof deviceSecret !== 'string' || deviceSecret.length < 32)) {
    invalidOption('lockout.deviceSecret', 'must be a string of 32 characters or more, the same on every instance')
  }
  return {
    maxAttempts: positiveInteger(lockout.maxAttempts, 'lockout.maxAttempts', 10),
    maxPerUsername: positiveInteger(lockout.maxPerUsername, 'lockout.maxPerUsername', 100),
    windowMs: positiveInteger(lockout.windowMs, 'lockout.windowMs', MINUTES_15),
    durationMs: positiveInteger(lockout.durationMs, 'lockout.durationMs', MINUTES_15),
    maxConcurrent: positiveInteger(lockout.maxConcurrent, 'lockout.maxConcurrent', 10),
    store: lockout.store === undefined ? new MemoryAttemptStore() : attemptStore(lockout.store, 'lockout.store'),
    deviceSecret,
    deviceMaxAgeMs: positiveInteger(lockout.deviceMaxAgeMs, 'lockout.deviceMaxAgeMs', 30 * 24 * 60 * 60 * 1000),
    maxNewSessionsPerMinute: positiveInteger(lockout.maxNewSessionsPerMinute, 'lockout.maxNewSessionsPerMinute', 120)
  }
}

// What the limit took while @fastify/rate-limit counted it (docs/migration.md): a clear start-up error each.
const MIGRATION = 'docs/migration.md in fastify-schools-resources'

function resolveLoginRateLimit (opts: Record<string, unknown>, lockout: LockoutSettings | false): LoginRateLimitSettings | false {
  const limit = optionalObject(opts, 'loginRateLimit')
  if (limit === false) return false
  for (const key of ['redis', 'nameSpace']) {
    if (limit[key] !== undefined) invalidOption(`loginRateLimit.${key}`, `was removed: failed sign-ins are counted in an AttemptStore; pass store: new RedisAttemptStore(client, { prefix }), or leave it out to share lockout.store (${MIGRATION})`)
  }
  if (typeof limit.store === 'function') invalidOption('loginRateLimit.store', `must be an AttemptStore such as new RedisAttemptStore(client, { prefix }); @fastify/rate-limit store classes (redisRateLimitStore) are no longer used (${MIGRATION})`)
  if (typeof limit.timeWindow === 'string') invalidOption('loginRateLimit.timeWindow', `must be milliseconds, e.g. 15 * 60 * 1000 (strings such as '15 minutes' were @fastify/rate-limit's; ${MIGRATION})`)
  const store = limit.store ?? (lockout === false ? new MemoryAttemptStore() : lockout.store)
  return {
    max: positiveInteger(limit.max, 'loginRateLimit.max', 50),
    timeWindow: positiveInteger(limit.timeWindow, 'loginRateLimit.timeWindow', MINUTES_15),
    store: attemptStore(store, 'loginRateLimit.store')
  }
}

function resolvePasswordChecks (opts: Record<string, unknown>): PasswordCheckSettings {
  const given = optionalObject(opts, 'passwordChecks')
  if (given === false) invalidOption('passwordChecks', 'must be an object ({ concurrent, waiting, perAddress }); the checks cannot be unbounded')
  const defaults = passwordCheckDefaults()
  const concurrent = positiveInteger(given.concurrent, 'passwordChecks.concurrent', defaults.concurrent)
  const waiting = given.waiting === 0 ? 0 : positiveInteger(given.waiting, 'passwordChecks.waiting', defaults.waiting)
  const perAddress = positiveInteger(given.perAddress, 'passwordChecks.perAddress', perAddressDefault(concurrent, waiting))
  return { concurrent, waiting, perAddress }
}

// A few seconds: a removed group or a deleted account takes effect that soon, at one lookup per member and instance per period.
const FIND_MEMBER_TTL_MS = 5000

function resolveFindMember (opts: Record<string, unknown>): ResolvedOptions['findMember'] {
  const find = optionalFunction<FindMember>(opts, 'findMember')
  const cache = optionalObject(opts, 'findMemberCache')
  if (find === undefined) {
    if (opts.findMemberCache !== undefined) invalidOption('findMemberCache', 'is only used with findMember')
    return undefined
  }
  if (opts.getMember !== undefined) invalidOption('findMember', 'is for the section\'s own session; with getMember, load the member there')
  if (cache === false) invalidOption('findMemberCache', 'must be { ttlMs, max }; for no caching give ttlMs: 0')
  for (const key of Object.keys(cache)) {
    if (key !== 'ttlMs' && key !== 'max') invalidOption(`findMemberCache.${key}`, 'is not a setting of findMemberCache (known: ttlMs, max)')
  }
  const ttlMs = cache.ttlMs ?? FIND_MEMBER_TTL_MS
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs < 0) invalidOption('findMemberCache.ttlMs', 'must be a whole number of milliseconds: 0 keeps no answer')
  return { find, cache: { ttlMs, max: positiveInteger(cache.max, 'findMemberCache.max', 1000) } }
}

/** The files directory's real path; it must exist and be a directory when the section starts. */
function resolveFilesRoot (opts: Record<string, unknown>, catalog: Catalog): string | undefined {
  const files = opts.files
  if (files === undefined) {
    const named = namedFile(catalog)
    if (named !== undefined) invalidOption('files', `is required: the catalog names a file (${named}), so set files: { root: '<the directory that holds it>' }`)
    return undefined
  }
  if (files === null || typeof files !== 'object' || typeof (files as { root?: unknown }).root !== 'string' || (files as { root: string }).root === '') {
    invalidOption('files', 'must be { root: \'<directory>\' }: the directory the catalog\'s file paths are relative to')
  }
  const root = resolve((files as { root: string }).root)
  let real: string
  try {
    real = realpathSync(root)
  } catch (err) {
    return invalidOption('files.root', `must be an existing directory; ${root} cannot be opened (${(err as NodeJS.ErrnoException).code})`)
  }
  if (!statSync(real).isDirectory()) invalidOption('files.root', `must be a directory; ${root} is a file`)
  return real
}

export function resolveOptions (raw: object): ResolvedOptions {
  const opts = raw as Record<string, unknown>
  for (const key of Object.keys(opts)) {
    if (!KNOWN_KEYS.has(key) && !FASTIFY_KEYS.has(key)) invalidOption(key, 'is not an option of this plugin')
  }

  const catalog = opts.catalog as Catalog | undefined
  if (catalog === null || typeof catalog !== 'object' ||
    typeof catalog.listCategories !== 'function' || typeof catalog.getCategory !== 'function') {
    invalidOption('catalog', 'is required: an object with listCategories() and getCategory(slug), such as new InMemoryCatalog(data)')
  }
  for (const read of ['listCategoriesPage', 'getCategoryPage'] as const) {
    if (catalog[read] !== undefined && typeof catalog[read] !== 'function') invalidOption(`catalog.${read}`, 'must be a function (a paged read: docs/pages-and-views.md#paged-reads), or left out')
  }

  const signIn = opts.signIn ?? true
  if (typeof signIn !== 'boolean') invalidOption('signIn', 'must be true or false')
  const passwordSignIn = opts.passwordSignIn ?? true
  if (typeof passwordSignIn !== 'boolean') invalidOption('passwordSignIn', 'must be true or false')
  if (!signIn && opts.oidc !== undefined) invalidOption('oidc', 'is the section\'s own sign-in, which signIn: false turns off; end your own callback in reply.signInMember (docs/oidc.md), or turn signIn on')
  if (!signIn && opts.passwordSignIn !== undefined) invalidOption('passwordSignIn', 'is the section\'s own sign-in, which signIn: false turns off')
  if (!passwordSignIn && opts.oidc === undefined) invalidOption('passwordSignIn', 'false needs oidc: without the password form and providers nobody could sign in (for your own sign-in, set signIn: false)')
  const authenticate = optionalFunction<ResolvedOptions['authenticate']>(opts, 'authenticate')
  if (!passwordSignIn && authenticate !== undefined) invalidOption('authenticate', 'is not used with passwordSignIn: false (no password form): leave it out, or show the form')
  if (signIn && passwordSignIn && authenticate === undefined) {
    invalidOption('authenticate', 'is required while signIn is on: an async function ({ email, password }, request) => member | null (or passwordSignIn: false with oidc)')
  }

  const sessionKey = opts.sessionKey ?? 'member'
  if (typeof sessionKey !== 'string' || sessionKey === '') invalidOption('sessionKey', 'must be a non-empty string')

  const keepSessionData = resolveKeepSessionData(opts.keepSessionData, sessionKey)

  const views = opts.views ?? {}
  if (views === null || typeof views !== 'object') invalidOption('views', 'must be an object of render functions')
  for (const [key, value] of Object.entries(views)) {
    if (!VIEW_KEYS.has(key)) invalidOption(`views.${key}`, `is not a view (known: ${[...VIEW_KEYS].join(', ')})`)
    if (typeof value !== 'function') invalidOption(`views.${key}`, 'must be a function')
  }

  const restrictedCategories = opts.restrictedCategories ?? 'mark'
  if (restrictedCategories !== 'mark' && restrictedCategories !== 'hide') invalidOption('restrictedCategories', 'must be "mark" or "hide"')

  const pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE
  if (typeof pageSize !== 'number' || !Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    invalidOption('pageSize', `must be a whole number from 1 to ${MAX_PAGE_SIZE}`)
  }

  const siteName: unknown = opts.siteName
  if (siteName !== undefined && (typeof siteName !== 'string' || siteName.trim() === '')) invalidOption('siteName', 'must be a non-empty string')
  const translations = new Translations({ defaultLocale: (opts.defaultLocale ?? 'en') as string, messages: hostMessages(opts.messages), timeZone: timeZone(opts.timeZone) })
  const locales = new RequestLocales(translations, opts.locale)

  const prefix = path(opts, 'prefix', '/schools/resources')
  const lockout = resolveLockout(opts)
  const baseUrl = parseBaseUrl(opts.baseUrl)
  if (signIn && opts.logoutUrl !== undefined) invalidOption('logoutUrl', 'is for hosts with their own sign-in (signIn: false); the section\'s own sign-out is logoutPath')
  const resolved: ResolvedOptions = {
    catalog,
    authenticate,
    signIn,
    passwordSignIn,
    oidc: resolveOidc(opts.oidc, baseUrl),
    prefix,
    baseUrl,
    loginPath: path(opts, 'loginPath', '/Security/login'),
    logoutPath: path(opts, 'logoutPath', '/Security/logout'),
    logoutUrl: hostPage(opts.logoutUrl, 'logoutUrl', baseUrl),
    returnParam: returnParam(opts.returnParam),
    sessionKey,
    keepSessionData,
    getMember: optionalFunction<ResolvedOptions['getMember']>(opts, 'getMember'),
    findMember: resolveFindMember(opts),
    restrictedCategories,
    pageSize,
    views,
    siteName: siteName as string | undefined,
    translations,
    locales,
    stylesheet: resolveStylesheet(opts.stylesheet, prefix),
    lockout,
    loginRateLimit: resolveLoginRateLimit(opts, lockout),
    passwordChecks: resolvePasswordChecks(opts),
    cookieName: opts.cookieName === undefined ? undefined : sessionCookieName(opts.cookieName),
    // Checked against the plugins registered, at registration (session/session-adapter.ts).
    sessionPlugin: opts.sessionPlugin,
    sessionName: optionalName(opts, 'sessionName'),
    helmet: optionalObject(opts, 'helmet'),
    conflictLog: parseConflictLog(opts.conflictLog),
    filesRoot: resolveFilesRoot(opts, catalog),
    openapi: resolveOpenApi(opts.openapi),
    auditKey: resolveAuditKey(opts.auditKey),
    membersOnlyOutsideSection: parseMembersOnlyOutsideSection(opts.membersOnlyOutsideSection),
    timeouts: resolveTimeouts(opts),
    signOutEverywhere: resolveSignOutEverywhere(opts, lockout),
    rememberMe: resolveRememberMe(opts),
    passwordReset: undefined
  }
  if (resolved.prefix === '/') invalidOption('prefix', 'must not be the site root')
  resolved.passwordReset = resolvePasswordReset(opts.passwordReset, {
    signIn,
    passwordSignIn,
    baseUrl,
    signOutEverywhere: resolved.signOutEverywhere !== false,
    lockoutStore: lockout === false ? undefined : lockout.store
  })
  return resolved
}

const MINUTES_60 = 60 * 60 * 1000
const HOURS_12 = 12 * MINUTES_60

/**
 * The settings of a feature of the section's own session (`timeouts`, `signOutEverywhere`, `rememberMe`),
 * or false when it is off. With `getMember` the host keeps the session and the section never reads it,
 * so asking for one fails start-up (`keeps`: what the host's sign-in keeps instead), and left out is off.
 */
function ownSessionFeature (opts: Record<string, unknown>, name: string, known: readonly string[], keeps: string): Record<string, unknown> | false {
  if (opts.getMember !== undefined) {
    if (opts[name] !== undefined && opts[name] !== false) invalidOption(name, `is for the section's own session; with getMember your sign-in keeps the session${keeps}: leave it out, or false`)
    return false
  }
  const settings = optionalObject(opts, name)
  if (settings === false) return false
  for (const key of Object.keys(settings)) if (!known.includes(key)) invalidOption(`${name}.${key}`, `is not a setting of ${name} (${known.join(', ')})`)
  return settings
}

/**
 * `timeouts`: both limits on by default. With `getMember` the host keeps the session and the section
 * never reads it, so timeouts it asked for could not be kept: refused, and left out means off.
 */
function resolveTimeouts (opts: Record<string, unknown>): TimeoutSettings | false {
  const timeouts = ownSessionFeature(opts, 'timeouts', ['idleMs', 'absoluteMs'], ' and its timeouts')
  if (timeouts === false) return false
  const limit = (name: 'idleMs' | 'absoluteMs', fallback: number): number | false => {
    const value = timeouts[name]
    if (value === false) return false
    if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1000)) {
      invalidOption(`timeouts.${name}`, 'must be a whole number of milliseconds, 1000 or more (e.g. 60 * 60 * 1000), or false to turn it off')
    }
    return (value as number | undefined) ?? fallback
  }
  return { idleMs: limit('idleMs', MINUTES_60), absoluteMs: limit('absoluteMs', HOURS_12) }
}

/** `signOutEverywhere`: on by default, counting in `lockout.store`; like the timeouts, refused with getMember. */
function resolveSignOutEverywhere (opts: Record<string, unknown>, lockout: LockoutSettings | false): { store: AttemptStore } | false {
  const settings = ownSessionFeature(opts, 'signOutEverywhere', ['store'], '')
  if (settings === false) return false
  const store = settings.store ?? (lockout === false ? new MemoryAttemptStore() : lockout.store)
  return { store: attemptStore(store, 'signOutEverywhere.store') }
}

const DAYS_30 = 30 * 24 * MINUTES_60
// The longest a browser keeps a cookie (RFC 6265bis caps Max-Age at 400 days).
const DAYS_400 = 400 * 24 * MINUTES_60
const TOKEN_STORE_METHODS = ['get', 'set', 'take', 'deleteAll'] as const

/** `rememberMe`: on by default (30 days, tokens in this process); like the timeouts, refused with getMember. */
function resolveRememberMe (opts: Record<string, unknown>): ResolvedOptions['rememberMe'] {
  const settings = ownSessionFeature(opts, 'rememberMe', ['maxAgeMs', 'store'], ' and any "keep me signed in"')
  if (settings === false) return false
  const maxAgeMs = settings.maxAgeMs ?? DAYS_30
  if (typeof maxAgeMs !== 'number' || !Number.isSafeInteger(maxAgeMs) || maxAgeMs < 60_000 || maxAgeMs > DAYS_400) {
    invalidOption('rememberMe.maxAgeMs', 'must be a whole number of milliseconds from 60000 (a minute) to 400 days, e.g. 30 * 24 * 60 * 60 * 1000; or rememberMe: false to turn it off')
  }
  const store = settings.store
  if (store !== undefined && (store === null || typeof store !== 'object' || TOKEN_STORE_METHODS.some((m) => typeof (store as Record<string, unknown>)[m] !== 'function'))) {
    invalidOption('rememberMe.store', `must implement ${TOKEN_STORE_METHODS.join(', ')} (a TokenStore, such as new RedisTokenStore(client))`)
  }
  return { maxAgeMs, store: store as TokenStore | undefined }
}

const KEEP_SESSION_DATA = 'must be true (all the host stored but the CSRF secret), false (nothing), or a list of session keys such as [\'cart\', \'lang\']'

function resolveKeepSessionData (value: unknown, sessionKey: string): KeepSessionData {
  if (value === undefined) return true
  if (typeof value === 'boolean') return value
  if (!Array.isArray(value) || !value.every((key) => typeof key === 'string' && key !== '')) invalidOption('keepSessionData', KEEP_SESSION_DATA)
  const own: Array<[string, string]> = [
    [CSRF_DEFAULT_SESSION_KEY, 'the CSRF secret is renewed with the session id'],
    [sessionKey, 'the member is set again at sign-in'],
    [providerKey(sessionKey), 'the OpenID provider is set again at sign-in'],
    [timesKey(sessionKey), 'the session\'s times start again at sign-in'],
    [generationKey(sessionKey), 'the generation is set again at sign-in']
  ]
  for (const [key, why] of own) {
    if (value.includes(key)) invalidOption('keepSessionData', `must not list ${JSON.stringify(key)}: ${why}`)
  }
  return Object.freeze([...value as string[]])
}

/**
 * The bits a secret written as text carries, estimated: its length times log2 of the alphabet it seems
 * drawn from, taken as twice the distinct characters in it (a short random string shows only part of its
 * alphabet) and no more than the classes it uses (lower case, upper case, digits, others). 32 random hex
 * digits give about 150, `openssl rand -base64 32` about 250; a word repeated, or one character, far fewer.
 */
function estimatedBits (secret: string): number {
  const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^a-zA-Z\d]/].reduce((size, re, i) => size + (re.test(secret) ? [26, 26, 10, 33][i] : 0), 0)
  return secret.length * Math.log2(Math.min(classes, 2 * new Set(secret).size))
}

const AUDIT_KEY_BITS = 128

function resolveAuditKey (value: unknown): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || estimatedBits(value) < AUDIT_KEY_BITS)) {
    invalidOption('auditKey', `must be a secret of ${AUDIT_KEY_BITS} bits or more, such as the output of \`openssl rand -base64 32\`, the same on every instance`)
  }
  return value as string | undefined
}

/** Option `messages`: an object of locales, each an object of messages (checked key by key in Translations). */
function hostMessages (messages: unknown): HostMessages {
  if (messages === undefined) return {}
  if (!isPlainObject(messages)) invalidOption('messages', 'must be an object of locales, each an object of messages by key (docs/languages.md)')
  return messages as HostMessages
}

/** Option `timeZone`: an IANA zone Intl knows, `UTC` when left out. */
function timeZone (zone: unknown): string {
  if (zone === undefined) return 'UTC'
  try {
    if (typeof zone === 'string') return new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone
  } catch {}
  return invalidOption('timeZone', 'must be an IANA time zone, such as "Europe/London" or "Pacific/Auckland"')
}
