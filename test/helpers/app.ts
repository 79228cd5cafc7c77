import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import fastifyCookie, { type FastifyCookieOptions } from '@fastify/cookie'
import fastifySession from '@fastify/session'
import type { LightMyRequestResponse } from 'fastify'
import schoolsResources, {
  InMemoryCatalog,
  REDIRECT_CONFLICT_WARNING,
  type Catalog,
  type FastifySchoolsResourcesOptions,
  type Member
} from '../../lib/index.js'
import type { SectionSignInOptions } from '../../lib/options.js'
import { AsyncStore } from './async-store.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'

export const SECRET = 'a-test-secret-that-is-at-least-32-characters-long'
export const BASE_URL = 'https://www.example.org'
/** The section's CSRF cookie on an https `baseUrl` such as BASE_URL (on http: `_csrf`). */
export const CSRF_COOKIE = '__Host-_csrf'
export const TEACHER = { email: 'teacher@example.org', password: 'correct horse battery staple' }
export const TEACHER_MEMBER: Member = { id: 't-1', name: 'Ada Teacher', email: TEACHER.email }

/** A catalog that counts its lookups, to prove which requests cost one. */
export class CountingCatalog implements Catalog {
  readonly inner = new InMemoryCatalog(demoCatalog)
  lookups = 0
  lists = 0

  async listCategories () {
    this.lists++
    return this.inner.listCategories()
  }

  async getCategory (slug: string) {
    this.lookups++
    return this.inner.getCategory(slug)
  }
}

export async function teacherOnly ({ email, password }: { email: string, password: string }): Promise<Member | null> {
  return email === TEACHER.email && password === TEACHER.password ? TEACHER_MEMBER : null
}

export interface TestApp {
  app: FastifyInstance
  store: AsyncStore
  catalog: CountingCatalog
}

/**
 * The plugin's options as tests vary them: any mix of the union's members (the helpers cast the result,
 * and a start-up check refuses what the types would).
 */
export type PluginOptions = Partial<Omit<SectionSignInOptions, 'signIn' | 'passwordSignIn' | 'authenticate' | 'logoutUrl'>> & {
  signIn?: boolean
  passwordSignIn?: boolean
  authenticate?: SectionSignInOptions['authenticate']
  logoutUrl?: string
}

export interface BuildOptions {
  plugin?: PluginOptions
  fastify?: FastifyServerOptions
  session?: Record<string, unknown>
  /** @fastify/cookie's options (the host's secret, say). */
  cookie?: FastifyCookieOptions
  /** Adds routes or hooks to the host before it starts. */
  extend?: (app: FastifyInstance) => void
  /** Registers what the host has before the section (a plugin that must see its routes: @fastify/swagger). */
  before?: (app: FastifyInstance) => Promise<void>
}

/** A host app as a user would write it: cookie, session (with an asynchronous store), the plugin. */
export async function buildTestApp (opts: BuildOptions = {}): Promise<TestApp> {
  const store = new AsyncStore()
  const catalog = new CountingCatalog()
  const app = Fastify(opts.fastify)
  await app.register(fastifyCookie, opts.cookie ?? {})
  // secure: false because app.inject() speaks plain http.
  // As the README wires it: anonymous visitors leave nothing in the store.
  await app.register(fastifySession, { secret: SECRET, store, saveUninitialized: false, cookie: { secure: false }, ...opts.session })
  await opts.before?.(app)
  await app.register(schoolsResources, { catalog, authenticate: teacherOnly, baseUrl: BASE_URL, files: demoFiles, ...opts.plugin } as FastifySchoolsResourcesOptions)
  opts.extend?.(app)
  await app.ready()
  return { app, store, catalog }
}

/** The `name=value` pair of the response's session cookie, ready for a Cookie header. */
export function sessionCookie (res: LightMyRequestResponse, name = 'sessionId'): string | undefined {
  const cookie = res.cookies.find((c) => c.name === name)
  return cookie === undefined ? undefined : `${cookie.name}=${cookie.value}`
}

/** The CSRF token in a page's form. */
export function formToken (html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html)
  if (match === null) throw new Error('no CSRF token in the page')
  return match[1]
}

export interface LoginForm {
  /** The Cookie header to post the form with: the CSRF cookie (and any cookie it was opened with). */
  cookie: string
  token: string
}

/**
 * `cookie` (a Cookie header, maybe empty) with the cookies `res` set added or replaced, as a browser keeps them.
 * `encoded`: values as they were set (light-my-request hands them over decoded; secure-session's has a `;`).
 */
export function withCookies (cookie: string | undefined, res: LightMyRequestResponse, encoded = false): string {
  const jar = new Map((cookie ?? '').split('; ').filter((p) => p !== '').map((p) => [p.slice(0, p.indexOf('=')), p] as const))
  for (const c of res.cookies) {
    if (c.value === '' || (c.maxAge !== undefined && c.maxAge <= 0)) jar.delete(c.name)
    else jar.set(c.name, `${c.name}=${encoded ? encodeURIComponent(c.value) : c.value}`)
  }
  return [...jar.values()].join('; ')
}

/** Opens the login form as a browser would: its CSRF cookie and the form's CSRF token. */
export async function openLoginForm (app: FastifyInstance, loginPath = '/Security/login', cookie?: string): Promise<LoginForm> {
  const res = await app.inject({ url: loginPath, headers: cookie === undefined ? {} : { cookie } })
  const token = formToken(res.body)
  return { cookie: withCookies(cookie, res), token }
}

/** A form body as a browser sends it; fields that are not strings can only be sent as JSON. */
export function formBody (fields: Record<string, unknown>): { payload: string | Record<string, unknown>, headers: Record<string, string> } {
  const values = Object.entries(fields).filter(([, v]) => v !== undefined)
  if (!values.every(([, v]) => typeof v === 'string')) return { payload: fields, headers: {} }
  return { payload: new URLSearchParams(values as Array<[string, string]>).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }
}

/**
 * Posts the login form with a fresh form's cookie and token; `fields` may override anything. Sent as a
 * browser sends the form (urlencoded) when every field is a string, else as JSON.
 */
export async function postLogin (app: FastifyInstance, fields: Record<string, unknown>, opts: { url?: string, headers?: Record<string, string>, form?: LoginForm, remoteAddress?: string } = {}) {
  const form = opts.form ?? await openLoginForm(app, (opts.url ?? '/Security/login').split('?')[0])
  const body = formBody({ _csrf: form.token, ...fields })
  return app.inject({
    method: 'POST',
    url: opts.url ?? '/Security/login',
    headers: { cookie: form.cookie, ...body.headers, ...opts.headers },
    payload: body.payload,
    ...(opts.remoteAddress === undefined ? {} : { remoteAddress: opts.remoteAddress })
  })
}

/** Signs the teacher in and returns the session cookie. */
export async function signIn (app: FastifyInstance, backUrl?: string): Promise<string> {
  const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, ...(backUrl === undefined ? {} : { BackURL: backUrl }) })
  const cookie = sessionCookie(res)
  if (res.statusCode !== 303 || cookie === undefined) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`)
  return cookie
}

/** Posts the logout form from a member page, with its CSRF token. */
export async function signOut (app: FastifyInstance, cookie: string, logoutPath = '/Security/logout', pagePath = '/schools/resources/') {
  const page = await app.inject({ url: pagePath, headers: { cookie } })
  return postSignOutForm(app, cookie, page, {}, logoutPath)
}

/** Posts the sign-out form of `page` (a response that carries one) as a browser would, with `fields` added (a BackURL). */
export function postSignOutForm (app: FastifyInstance, cookie: string, page: LightMyRequestResponse, fields: Record<string, string> = {}, logoutPath = '/Security/logout') {
  return app.inject({ method: 'POST', url: logoutPath, headers: { cookie: withCookies(cookie, page) }, payload: { _csrf: formToken(page.body), ...fields } })
}

/**
 * Collects the redirect-conflict warnings raised while `fn` runs. Node emits 'warning' on the next
 * tick, so it waits one turn of the event loop before returning.
 */
export async function conflictWarnings (fn: () => Promise<unknown>): Promise<Error[]> {
  const seen: Error[] = []
  const listener = (warning: Error & { code?: string }) => {
    if (warning.code === REDIRECT_CONFLICT_WARNING) seen.push(warning)
  }
  process.on('warning', listener)
  try {
    await fn()
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.off('warning', listener)
  }
  return seen
}

/** A logger that keeps its lines (level `warn` and up), for Fastify's `logger` option. */
export function capturedLogs (): { logger: FastifyServerOptions['logger'], lines: Array<{ code?: string, msg: string } & Record<string, unknown>>, withCode: (code: string) => Array<{ msg: string } & Record<string, unknown>> } {
  const lines: Array<{ code?: string, msg: string } & Record<string, unknown>> = []
  return {
    logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } },
    lines,
    withCode: (code) => lines.filter((line) => line.code === code)
  }
}
