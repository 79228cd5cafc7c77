import type { FastifyRequest } from 'fastify'
import type {} from '@fastify/session'
import type { ResolvedOptions } from './options.js'

/** A signed-in member, as kept in the session. Keep it small and JSON-serialisable. */
export interface Member {
  id: string
  name: string
  email?: string
}

declare module 'fastify' {
  interface Session {
    /** Set at sign-in under the default `sessionKey`. */
    member?: Member
  }
}

export type MemberLookup = (request: FastifyRequest) => Member | null | undefined | Promise<Member | null | undefined>

export function isMember (value: unknown): value is Member {
  return value !== null && typeof value === 'object' &&
    typeof (value as Member).id === 'string' && (value as Member).id !== '' &&
    typeof (value as Member).name === 'string'
}

/**
 * Whether the request carries a real session: the session plugin leaves a plain object (no get()) on
 * paths outside its cookie path, and the plugin releases untouched anonymous sessions (null).
 */
export function hasLiveSession (request: FastifyRequest): boolean {
  const session = request.session as { get?: unknown } | null | undefined
  return typeof session?.get === 'function'
}

/** The member stored under `sessionKey`, or undefined; anything malformed counts as signed out. */
export function sessionMember (sessionKey: string): MemberLookup {
  return function memberFromSession (request) {
    const value = hasLiveSession(request) ? request.session.get(sessionKey as 'member') : undefined
    return isMember(value) ? value : undefined
  }
}

export function memberLookup (opts: Pick<ResolvedOptions, 'getMember' | 'sessionKey'>): MemberLookup {
  return opts.getMember ?? sessionMember(opts.sessionKey)
}

/**
 * Lets the session plugin skip an untouched session: an anonymous visitor who is only being
 * redirected should leave nothing in the store and get no cookie.
 */
export function releaseUntouchedSession (request: FastifyRequest): void {
  const session = request.session as { isModified?: () => boolean } | null | undefined
  if (typeof session?.isModified === 'function' && !session.isModified()) {
    (request as unknown as { session: null }).session = null
  }
}
