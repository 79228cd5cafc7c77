// "Forgotten your password?" at the legacy site's addresses, in the login page's folder:
// GET/POST …/lostpassword (an email address; the same answer, at once, whether it has an account) and
// GET/POST …/changepassword (the link's target). A GET never uses a link up: mail scanners fetch links
// before people click them. It moves the link's parts into a short-lived cookie and redirects to the clean
// address, so the token leaves the address bar, the history and the Referer; only a successful POST takes it.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify'
import type { Member } from '../types.js'
import { eventBase, identifierHash, passwordReset, type PasswordResetEvent } from '../events.js'
import { RESET_EMAIL_FAILED_WARNING } from '../warnings.js'
import type { AttemptStore } from '../stores/attempt-store.js'
import { isHttpsBase } from '../redirect/site-origin.js'
import { CSRF_ERROR_CODES, csrfTokenFor } from '../session/csrf.js'
import { invalidMember, isMember, type MemberLookup } from '../session/member.js'
import type { SessionAdapter } from '../session/session-adapter.js'
import { sessionCookieWritten, type SignInStepDeps } from '../session/sign-in-step.js'
import type { PageRenderer, SectionPaths } from '../pages/page-renderer.js'
import type { ChangePasswordViewData, LostPasswordViewData } from '../pages/views.js'
import { page, redirect, routeSchema, STORE_DOWN, type OpenApi, type RouteDoc } from '../pages/openapi.js'
import { signInLimitKeys } from '../sign-in/limits.js'
import type { NewSessions } from '../sign-in/new-sessions.js'
import { signInAndReturn } from '../sign-in/sign-in-member.js'
import type { PasswordResetSettings } from './options.js'
import { defaultValidatePassword } from './passwords.js'
import { sayIn, type Said, type Saying } from '../pages/answer-language.js'
import { ResetLimits } from './limits.js'
import { linkParts, ResetTokens, type LinkParts } from './tokens.js'

/** The cookie that holds a link's parts between its first visit and the change. */
export const RESET_COOKIE = 'schools-resources-reset'
const COOKIE_SECONDS = 15 * 60

const MAX_EMAIL_LENGTH = 254
// What the pages say, in their language.
const EXPIRED_FORM: Said = { key: 'error.formExpired' }
const LINK_UNUSABLE: Said = { key: 'reset.error.linkUnusable' }
const LINK_INCOMPLETE: Said = { key: 'reset.error.linkIncomplete' }
const TOO_MANY_TRIES: Said = { key: 'reset.error.tooManyTries' }
const EMAIL_MISSING: Said = { key: 'reset.error.emailMissing' }
const PASSWORDS_DIFFER: Said = { key: 'reset.error.passwordsDiffer' }
const NOT_CHANGED: Said = { key: 'reset.error.notChanged' }

/** A page's data as the routes give it: its error named, written in the page's language. */
type Told<T> = Omit<T, 'error'> & { error?: Saying }

/** The reset pages' paths: the login page's folder, as the legacy site has them (`/Security/lostpassword`). */
export function resetPaths (loginPath: string): { lostPassword: string, changePassword: string } {
  const folder = loginPath.slice(0, loginPath.lastIndexOf('/'))
  return { lostPassword: `${folder}/lostpassword`, changePassword: `${folder}/changepassword` }
}

export interface PasswordResetDeps {
  reset: PasswordResetSettings
  session: SessionAdapter
  memberOf: MemberLookup
  pages: PageRenderer
  paths: SectionPaths
  /** The login path as the routes are registered (Fastify puts the register prefix in front). */
  loginRoute: string
  baseUrl: string
  step: SignInStepDeps
  newSessions: NewSessions | undefined
  verifyCsrf: preHandlerHookHandler
  openapi: OpenApi
  auditKey: string | undefined
  /** Ends every session of the member (session/sign-out-everywhere.ts). */
  signOutEverywhere: (memberId: Member['id'], request: FastifyRequest) => Promise<void>
  /** Where the sign-in lockout counts, whose counts of the username a change clears; undefined without the lockout. */
  lockoutStore: AttemptStore | undefined
  tokens: ResetTokens
}

type Fields = Record<string, unknown>
/** A body or query's fields; anything else (no body, a JSON string) has none. */
function fields (value: unknown): Fields {
  return Object(value) as Fields
}

/** The reset pages, in a context of their own inside the section's (its CSRF plugin, form parser and error handlers). */
export function passwordResetRoutes (section: FastifyInstance, deps: PasswordResetDeps): void {
  section.register(async function schoolsResourcesPasswordReset (fastify) {
    resetForms(fastify, deps)
  })
}

function resetForms (fastify: FastifyInstance, deps: PasswordResetDeps): void {
  const { reset, pages, paths, baseUrl, tokens } = deps
  const routes = resetPaths(deps.loginRoute)
  const links = resetPaths(paths.login)
  const limits = new ResetLimits(reset.limits, reset.expiresInMs)
  const cookieOptions = { path: links.changePassword, httpOnly: true, sameSite: 'lax' as const, secure: isHttpsBase(baseUrl) ? true : 'auto' as const }

  function publish (request: FastifyRequest, event: Omit<PasswordResetEvent, keyof ReturnType<typeof eventBase>>): void {
    if (passwordReset.hasSubscribers) passwordReset.publish({ ...eventBase(request, paths.index), ...event })
  }

  async function lostPage (request: FastifyRequest, reply: FastifyReply, status: number, { error, ...data }: Told<Omit<LostPasswordViewData, 'loginUrl' | 'action'>>) {
    const ctx = await pages.context(await deps.memberOf(request) ?? undefined, reply)
    reply.code(status).header('cache-control', 'no-store')
    return pages.sendView(reply, 'lostPassword', { ...data, ...(error === undefined ? {} : { error: sayIn(ctx, error) }), csrfToken: csrfTokenFor(reply, deps.session), loginUrl: paths.login, action: links.lostPassword }, ctx)
  }

  async function changePage (request: FastifyRequest, reply: FastifyReply, status: number, { error, ...data }: Told<Pick<ChangePasswordViewData, 'linkValid' | 'error'>>) {
    const ctx = await pages.context(await deps.memberOf(request) ?? undefined, reply)
    reply.code(status).header('cache-control', 'no-store')
    // A link that cannot be used is forgotten here too, so that the next one starts clean.
    if (!data.linkValid && request.cookies[RESET_COOKIE] !== undefined) reply.clearCookie(RESET_COOKIE, cookieOptions)
    return pages.sendView(reply, 'changePassword', { ...data, ...(error === undefined ? {} : { error: sayIn(ctx, error) }), csrfToken: csrfTokenFor(reply, deps.session), lostPasswordUrl: links.lostPassword, action: links.changePassword }, ctx)
  }

  /** The link's parts the cookie holds, or undefined (none, or not of their shape: tampered). */
  function cookieLink (request: FastifyRequest): LinkParts | undefined {
    const [selector, token] = String(request.cookies[RESET_COOKIE] ?? '').split('.')
    return linkParts(selector, token)
  }

  // An expired form answers with the form again rather than a bare 403; any other error goes on to the
  // section's handlers (a store outage: the 503 page).
  fastify.setErrorHandler(async function resetErrors (error: FastifyError, request, reply) {
    if (!CSRF_ERROR_CODES.has(error.code ?? '')) throw error
    publish(request, { stage: 'refused', reason: 'csrf' })
    if (request.routeOptions.url === routes.lostPassword) return lostPage(request, reply, 403, { error: EXPIRED_FORM })
    return changePage(request, reply, 403, { linkValid: cookieLink(request) !== undefined, error: EXPIRED_FORM })
  })

  /** After the answer has gone: the member looked up, a link made and sent. Its time and its failures tell the visitor nothing. */
  async function sendLink (request: FastifyRequest, email: string, hash: string | undefined): Promise<void> {
    try {
      const member = await reset.findMemberByEmail(email)
      if (member === null || member === undefined) {
        publish(request, { stage: 'refused', reason: 'unknown-address', identifierHash: hash })
        return
      }
      // Said once in the log with the fix (FST_SR_INVALID_MEMBER); the visitor had the same answer.
      if (!isMember(member)) throw invalidMember(request, 'findMemberByEmail', member)
      const link = await tokens.issue(member, email)
      publish(request, { stage: 'requested', memberId: member.id, identifierHash: hash })
      const url = `${baseUrl}${links.changePassword}?m=${link.selector}&t=${link.token}`
      await reset.sendResetEmail({ member, url, expiresAt: link.expiresAt, request })
    } catch (err) {
      request.log.error({ err, code: RESET_EMAIL_FAILED_WARNING }, 'fastify-schools-resources: a password reset link could not be made or sent (the visitor was told it was sent, as for any address)')
    }
  }

  const FORM = page('OK: the form')
  const EXPIRED = page('Forbidden: the form\'s CSRF token is missing, wrong or expired (the form again, saying so)')
  const lostDoc: RouteDoc = { summary: 'Forgotten password', description: 'The form that asks for an email address to send a reset link to.', answers: { 200: FORM, 503: STORE_DOWN } }
  const requestDoc: RouteDoc = {
    summary: 'Send a reset link',
    description: 'Form fields: email, _csrf. The same answer whether the address has an account or not, and whether a limit was reached; the link is sent after the answer.',
    answers: { 200: page('OK: "If that address has an account, we have sent a link"'), 400: page('Bad Request: no address, or one over 254 characters (the form again)'), 403: EXPIRED, 503: STORE_DOWN }
  }
  const changeDoc: RouteDoc = {
    summary: 'The reset link\'s page',
    description: 'With m and t (the link): moves them into a 15-minute cookie and redirects to this address without them; never uses the link up. Without: the form for a new password.',
    answers: { 200: FORM, 303: redirect('See Other: the same page without the link in its address'), 400: page('Bad Request: the link is incomplete, expired or used (a way to ask for a new one)'), 503: STORE_DOWN }
  }
  const setDoc: RouteDoc = {
    summary: 'Change the password',
    description: 'Form fields: password, confirm, _csrf; the link from the cookie. On success every session of the member ends and this browser is signed in (or sent to the login page).',
    answers: {
      303: redirect('See Other: changed; to the section index, signed in (or to the login page)'),
      400: page('Bad Request: the passwords differ or are refused, or the link cannot be used (the page again, saying why)'),
      403: EXPIRED,
      500: page('Internal Server Error: setPassword failed; the link still works'),
      503: STORE_DOWN
    }
  }

  fastify.get(routes.lostPassword, { schema: routeSchema(deps.openapi, lostDoc) }, async function lostPasswordForm (request, reply) {
    return lostPage(request, reply, 200, {})
  })

  fastify.post(routes.lostPassword, { schema: routeSchema(deps.openapi, requestDoc), preHandler: deps.verifyCsrf }, async function requestLink (request, reply) {
    const typed = fields(request.body).email
    const email = typeof typed === 'string' ? typed.trim() : ''
    if (email === '' || email.length > MAX_EMAIL_LENGTH) {
      publish(request, { stage: 'refused', reason: 'invalid-email' })
      return lostPage(request, reply, 400, { email: email.slice(0, MAX_EMAIL_LENGTH), error: EMAIL_MISSING })
    }
    const hash = identifierHash(email, deps.auditKey)
    const refused = await limits.request(request.ip, email)
    await lostPage(request, reply, 200, { sent: true })
    if (refused !== undefined) {
      publish(request, { stage: 'refused', reason: refused, identifierHash: hash })
      return reply
    }
    // Not awaited: the answer is the same, in the same time, for an address with an account and one without.
    // sendLink catches its own failures.
    setImmediate(() => { sendLink(request, email, hash).catch(() => {}) })
    return reply
  })

  fastify.get(routes.changePassword, { schema: routeSchema(deps.openapi, changeDoc) }, async function changePasswordForm (request, reply) {
    const query = fields(request.query)
    if (query.m !== undefined || query.t !== undefined) {
      const link = linkParts(query.m, query.t)
      if (link === undefined) {
        publish(request, { stage: 'refused', reason: 'invalid-link' })
        return changePage(request, reply, 400, { linkValid: false, error: LINK_INCOMPLETE })
      }
      reply.setCookie(RESET_COOKIE, `${link.selector}.${link.token}`, { ...cookieOptions, maxAge: COOKIE_SECONDS })
      return reply.header('cache-control', 'no-store').redirect(`${baseUrl}${links.changePassword}`, 303)
    }
    const link = cookieLink(request)
    if (link === undefined || await tokens.find(link) === undefined) {
      return changePage(request, reply, 400, { linkValid: false, error: link === undefined ? LINK_INCOMPLETE : LINK_UNUSABLE })
    }
    return changePage(request, reply, 200, { linkValid: true })
  })

  fastify.post(routes.changePassword, { schema: routeSchema(deps.openapi, setDoc), preHandler: deps.verifyCsrf }, async function changePassword (request, reply) {
    const link = cookieLink(request)
    if (link === undefined) {
      publish(request, { stage: 'refused', reason: 'invalid-link' })
      return changePage(request, reply, 400, { linkValid: false, error: LINK_INCOMPLETE })
    }
    // Counted before the link is looked at: guesses at one link's token count as much as mistakes.
    if (!await limits.change(link.selector)) {
      publish(request, { stage: 'refused', reason: 'too-many-attempts' })
      return changePage(request, reply, 400, { linkValid: false, error: TOO_MANY_TRIES })
    }
    const found = await tokens.find(link)
    if (found === undefined) {
      publish(request, { stage: 'refused', reason: 'invalid-link' })
      return changePage(request, reply, 400, { linkValid: false, error: LINK_UNUSABLE })
    }
    const memberId = found.member.id
    const body = fields(request.body)
    const password = typeof body.password === 'string' ? body.password : ''
    if (password !== body.confirm) {
      publish(request, { stage: 'refused', reason: 'passwords-differ', memberId })
      return changePage(request, reply, 400, { linkValid: true, error: PASSWORDS_DIFFER })
    }
    const weak = await reset.validatePassword(password, found.member)
    // A host's rule says a sentence (anything else is no refusal, as before); the default one, a message.
    if (typeof weak === 'string' || (reset.validatePassword === defaultValidatePassword && weak !== undefined)) {
      publish(request, { stage: 'refused', reason: 'weak-password', memberId })
      return changePage(request, reply, 400, { linkValid: true, error: weak })
    }
    // Taken in one step: of two changes at once, one goes on.
    const record = await tokens.take(link)
    if (record === undefined) {
      publish(request, { stage: 'refused', reason: 'invalid-link', memberId })
      return changePage(request, reply, 400, { linkValid: false, error: LINK_UNUSABLE })
    }
    // Every session of the member ends (its generation moves on; their devices and links are forgotten)
    // before the password changes: a store that fails here leaves the password and the link as they were,
    // never a new password with the old sessions still running. The sign-in after starts one of the new generation.
    try {
      await deps.signOutEverywhere(memberId, request)
    } catch (err) {
      await tokens.restore(link, record)
      throw err
    }
    try {
      await reset.setPassword(record.member, password)
    } catch (err) {
      // The host could not change it: the link stays usable for the rest of its time.
      await tokens.restore(link, record)
      request.log.error({ err }, 'fastify-schools-resources: passwordReset.setPassword failed; the member may try the same link again')
      publish(request, { stage: 'refused', reason: 'set-password-failed', memberId })
      return changePage(request, reply, 500, { linkValid: true, error: NOT_CHANGED })
    }
    reply.clearCookie(RESET_COOKIE, cookieOptions)
    await tokens.endAll(memberId)
    // The username's failed sign-ins are forgiven: whoever made them, the password they guessed at is gone.
    if (deps.lockoutStore !== undefined) {
      for (const username of new Set([record.email, record.member.email ?? record.email])) {
        const keys = signInLimitKeys(username, request.ip)
        await deps.lockoutStore.reset(keys.username)
        await deps.lockoutStore.reset(keys.usernameAndAddress)
      }
    }
    publish(request, { stage: 'changed', memberId })
    // The password is changed either way: where no session could be kept (a Secure cookie over what
    // Fastify sees as http, logged with its fix), the login page rather than a 500 after the change.
    if (!reset.signIn || !sessionCookieWritten(request, deps.session.of(request), request.log, baseUrl)) {
      return reply.header('cache-control', 'no-store').redirect(`${baseUrl}${paths.login}`, 303)
    }
    return signInAndReturn(reply, record.member, undefined, { method: 'password-reset' }, deps.step, 'findMemberByEmail', deps.newSessions)
  })
}
