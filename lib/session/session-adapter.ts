// The section's one door to a session: what it needs of one (the member under `sessionKey`, a new session
// at sign-in, its end at sign-out, the cookie's name and Secure flag), for @fastify/session and for
// @fastify/secure-session. Nothing else in lib/ touches `request.session`. The shapes below are the two
// plugins' documented request APIs, written out here so that the published types import neither package.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { errorCodes } from '../errors.js'
import { invalidOption } from '../option-checks.js'

const { FST_SR_NO_SESSION_PLUGIN } = errorCodes

export const FASTIFY_SESSION = '@fastify/session'
export const SECURE_SESSION = '@fastify/secure-session'
export type SessionPluginName = typeof FASTIFY_SESSION | typeof SECURE_SESSION
const PLUGINS: readonly SessionPluginName[] = [FASTIFY_SESSION, SECURE_SESSION]

/** One request's session, whichever plugin keeps it. */
export interface SessionHandle {
  get (key: string): unknown
  set (key: string, value: unknown): void
  /** The keys of everything stored in it (the plugin's own bookkeeping left out). */
  keys (): string[]
  /**
   * A new session at sign-in that keeps only `keep`: a new id (and the old one dropped from the store)
   * with @fastify/session; with @fastify/secure-session, whose cookie is the session, the other data dropped.
   */
  renew (keep: readonly string[]): Promise<void>
  /** Sign-out: the session leaves the store (@fastify/session) or its cookie is cleared (@fastify/secure-session). */
  end (): Promise<void>
  /** Whether the session cookie goes out with Secure; undefined where the plugin does not tell (secure-session). */
  readonly secureCookie: boolean | undefined
}

/** The session plugin a section uses, chosen once at registration. */
export interface SessionAdapter {
  readonly plugin: SessionPluginName
  /** The session cookie's name: the `cookieName` option, else the plugin's default. */
  readonly cookieName: string
  /** The request's session, or undefined where it has none (outside @fastify/session's cookie path). */
  of (request: FastifyRequest): SessionHandle | undefined
}

/** What the section's options say about the session plugin. */
export interface SessionChoice {
  /** Which plugin, when the host registered both (as given: checked here). */
  sessionPlugin: unknown
  /** @fastify/secure-session's `sessionName` (the request property), when not `session`. */
  sessionName: string | undefined
  /** The session cookie's name, when not the plugin's default. */
  cookieName: string | undefined
}

// @fastify/session's request.session, as its types document it.
interface StoredSession {
  get (key: string): unknown
  set (key: string, value: unknown): void
  regenerate (ignoreFields: string[]): Promise<void>
  destroy (): Promise<void>
  cookie: { secure?: boolean | 'auto' }
}

// @fastify/secure-session's request[sessionName], as its types document it.
interface CookieSession {
  get (key: string): unknown
  set (key: string, value: unknown): void
  data (): Record<string, unknown>
  regenerate (ignoreFields?: string[]): void
  delete (): void
}

function sessionObject<T> (request: FastifyRequest, name: string): T | undefined {
  const session = (request as unknown as Record<string, { get?: unknown } | null | undefined>)[name]
  // Outside its cookie path @fastify/session leaves a plain object (an undocumented detail), and without
  // the plugin's onRequest there is none: only an object with get() counts as a session.
  return typeof session?.get === 'function' ? session as T : undefined
}

/** An adapter whose sessions are `request[name]`, each wrapped by `handle` where there is one. */
function adapter<S> (plugin: SessionPluginName, cookieName: string, name: string, handle: (session: S, request: FastifyRequest) => SessionHandle): SessionAdapter {
  return {
    plugin,
    cookieName,
    of (request) {
      const session = sessionObject<S>(request, name)
      return session === undefined ? undefined : handle(session, request)
    }
  }
}

function fastifySessionAdapter (cookieName: string): SessionAdapter {
  return adapter<StoredSession>(FASTIFY_SESSION, cookieName, 'session', (found, request) => {
    // regenerate() puts a new session object on the request: every call reads the current one.
    const session = () => (request as unknown as { session: StoredSession }).session
    return {
      get: (key) => session().get(key),
      set: (key, value) => { session().set(key, value) },
      // @fastify/session keeps the data as the session's own enumerable fields; `cookie` is its own.
      keys: () => Object.keys(session()).filter((key) => key !== 'cookie'),
      renew: (keep) => session().regenerate([...keep]),
      end: () => session().destroy(),
      // 'auto' is resolved per request by @fastify/session; only a literal true can fail over http.
      secureCookie: found.cookie.secure === true
    }
  })
}

function secureSessionAdapter (sessionName: string, cookieName: string): SessionAdapter {
  return adapter<CookieSession>(SECURE_SESSION, cookieName, sessionName, (session) => ({
    get: (key) => session.get(key),
    set: (key, value) => { session.set(key, value) },
    keys: () => Object.keys(session.data()),
    renew: async (keep) => { session.regenerate([...keep]) },
    end: async () => { session.delete() },
    // Its cookie options stay inside the plugin: nothing on the request tells.
    secureCookie: undefined
  }))
}

function checkedChoice (value: unknown): SessionPluginName | undefined {
  if (value === undefined || PLUGINS.includes(value as SessionPluginName)) return value as SessionPluginName | undefined
  invalidOption('sessionPlugin', `must be '${FASTIFY_SESSION}' or '${SECURE_SESSION}'`)
}

/**
 * The session plugin the host registered before the section: the only one there is, else the one the
 * `sessionPlugin` option names (both registered), else @fastify/secure-session when `sessionName` is
 * given. Fails start-up with the fix when none is there, or the one named is not.
 */
export function chooseSessionAdapter (fastify: FastifyInstance, choice: SessionChoice, why: string): SessionAdapter {
  const asked = checkedChoice(choice.sessionPlugin) ?? (choice.sessionName === undefined ? undefined : SECURE_SESSION)
  const present = PLUGINS.filter((name) => fastify.hasPlugin(name))
  if (present.length === 0) throw new FST_SR_NO_SESSION_PLUGIN(why)
  if (asked !== undefined && !present.includes(asked)) invalidOption('sessionPlugin', `names ${asked}, which is not registered before the section`)
  if (asked === undefined && present.length > 1) {
    invalidOption('sessionPlugin', `must say which session plugin the section uses: both ${FASTIFY_SESSION} and ${SECURE_SESSION} are registered`)
  }
  const plugin = asked ?? present[0]
  if (plugin === FASTIFY_SESSION) {
    if (choice.sessionName !== undefined) invalidOption('sessionName', `is ${SECURE_SESSION}'s option; ${FASTIFY_SESSION} always uses request.session`)
    return fastifySessionAdapter(choice.cookieName ?? 'sessionId')
  }
  // With both registered, request.session is @fastify/session's: secure-session's has a name of its own.
  if (choice.sessionName === undefined && present.length > 1) {
    invalidOption('sessionName', `must be the sessionName you gave ${SECURE_SESSION}: request.session is ${FASTIFY_SESSION}'s`)
  }
  const sessionName = choice.sessionName ?? 'session'
  if (!fastify.hasRequestDecorator(sessionName)) {
    invalidOption('sessionName', `request.${sessionName} is not decorated: give the sessionName you gave ${SECURE_SESSION}`)
  }
  // secure-session's cookie is named after the session unless told otherwise.
  return secureSessionAdapter(sessionName, choice.cookieName ?? sessionName)
}
