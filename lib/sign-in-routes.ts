import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Credentials } from './options.js'
import { safeBackUrl } from './back-url.js'
import { FST_SR_INVALID_MEMBER } from './errors.js'
import { isMember, releaseUntouchedSession, type Member, type MemberLookup } from './member.js'
import type { PageRenderer, SectionPaths } from './pages.js'
import { siteOrigin } from './site-origin.js'
import type { LoginViewData } from './views.js'

export interface SignInDeps {
  authenticate: (credentials: Credentials, request: FastifyRequest) => Promise<Member | null | undefined>
  memberOf: MemberLookup
  pages: PageRenderer
  paths: SectionPaths
  baseUrl: string | undefined
  sessionKey: string
}

// Longer values cannot be real credentials; refusing them early keeps hashing cost bounded.
const MAX_EMAIL_LENGTH = 254
const MAX_PASSWORD_LENGTH = 1024

type Fields = Record<string, unknown>

interface RegenerableSession {
  regenerate (): Promise<void>
  set (key: string, value: unknown): void
}

function fields (value: unknown): Fields {
  return value !== null && typeof value === 'object' ? value as Fields : {}
}

/** Login form, sign-in and sign-out. The return address is checked every time it is read. */
export function signInRoutes (fastify: FastifyInstance, deps: SignInDeps): void {
  const { authenticate, memberOf, pages, paths, baseUrl, sessionKey } = deps

  function loginPage (reply: FastifyReply, status: number, data: LoginViewData, member: Member | undefined) {
    const ctx = pages.context(member)
    reply.code(status).header('cache-control', 'no-store')
    return pages.send(reply, pages.views.login(data, ctx), ctx)
  }

  fastify.get(paths.login, async function loginForm (request, reply) {
    const member = await memberOf(request) ?? undefined
    if (member === undefined) releaseUntouchedSession(request)
    const backUrl = fields(request.query).BackURL
    const safe = safeBackUrl(backUrl, siteOrigin(request, baseUrl)) !== undefined
    return loginPage(reply, 200, { backUrl: safe ? backUrl as string : undefined }, member)
  })

  fastify.post(paths.login, async function signIn (request, reply) {
    const body = fields(request.body)
    const origin = siteOrigin(request, baseUrl)
    // The form posts BackURL in its body; a hand-made link may carry it in the query instead.
    const backUrl = body.BackURL ?? fields(request.query).BackURL
    const returnTo = safeBackUrl(backUrl, origin)
    const formBackUrl = returnTo === undefined ? undefined : backUrl as string
    const email = typeof body.email === 'string' ? body.email.trim() : ''
    const password = typeof body.password === 'string' ? body.password : ''

    if (email === '' || password === '' || email.length > MAX_EMAIL_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
      releaseUntouchedSession(request)
      return loginPage(reply, 400, { backUrl: formBackUrl, email: email.slice(0, MAX_EMAIL_LENGTH), error: 'Enter your email address and password.' }, undefined)
    }

    const member = await authenticate({ email, password }, request)
    if (member === null || member === undefined) {
      releaseUntouchedSession(request)
      return loginPage(reply, 401, { backUrl: formBackUrl, email, error: 'The email address or password is incorrect.' }, undefined)
    }
    if (!isMember(member)) {
      releaseUntouchedSession(request)
      throw new FST_SR_INVALID_MEMBER(typeof member === 'object' ? 'an object without them' : typeof member)
    }

    // A new session id at sign-in, so that an id planted before it (session fixation) is worthless.
    const session = request.session as unknown as RegenerableSession
    await session.regenerate()
    const stored: Member = { id: member.id, name: member.name }
    if (typeof member.email === 'string') stored.email = member.email
    ;(request.session as unknown as RegenerableSession).set(sessionKey, stored)

    reply.header('cache-control', 'no-store')
    return reply.redirectOnce(returnTo ?? paths.index, 303)
  })

  fastify.post(paths.logout, async function signOut (request, reply) {
    const session = request.session as { destroy?: () => Promise<void> } | null
    if (typeof session?.destroy === 'function') await session.destroy()
    reply.header('cache-control', 'no-store')
    return reply.redirectOnce(paths.index, 303)
  })
}
