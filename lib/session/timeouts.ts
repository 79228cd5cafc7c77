// The idle and absolute timeouts: times the section keeps in the session itself, so that they hold with
// either session plugin (a store's expiry or a cookie's Max-Age can only say one lifetime, and
// @fastify/secure-session's cookie has none the section can read). Checked wherever the member is read,
// so the access guard of every members-only route (the host's included) enforces them before any page.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { forgetStoredMember, type MemberLookup } from './member.js'
import type { SessionAdapter } from './session-adapter.js'
import type { MessageKey } from '../i18n/locales/en.js'
import type { Said } from '../i18n/translations.js'

/** The `timeouts` option: each limit in milliseconds, `false` to turn that one off. */
export interface TimeoutsOptions {
  /** Signed out after this long without a request (default 60 minutes). */
  idleMs?: number | false
  /** Signed out this long after signing in, however active (default 12 hours). */
  absoluteMs?: number | false
}

export interface TimeoutSettings {
  idleMs: number | false
  absoluteMs: number | false
}

/** Why a session was ended: which limit it passed. */
export type SessionEnd = 'idle' | 'absolute'

/** What the session keeps: when the member signed in, and when a request of theirs was last noted. */
interface SessionTimes {
  signedInAt: number
  seenAt: number
}

/** Where the times live beside the member (set again at every sign-in, never kept through one). */
export function timesKey (sessionKey: string): string {
  return `${sessionKey}.times`
}

/** The cookie that carries the reason to the login page: a minute is enough to follow the redirect. */
export const NOTICE_COOKIE = 'sr_notice'
const NOTICE_MAX_AGE_SECONDS = 60

/** The last-seen time is written at most this often, so that a member's requests do not each save the session. */
const SEEN_STEP_MS = 60_000

/**
 * How often the last-seen time is written: once a minute, or a tenth of the idle limit when that is
 * shorter. The idle limit is exact to that step: a session may end up to one step early, never late.
 */
export function seenStep (idleMs: number): number {
  return Math.max(1, Math.min(SEEN_STEP_MS, Math.floor(idleMs / 10)))
}

function readTimes (value: unknown): SessionTimes | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const { signedInAt, seenAt } = value as Partial<SessionTimes>
  return Number.isFinite(signedInAt) && Number.isFinite(seenAt) ? { signedInAt: signedInAt!, seenAt: seenAt! } : undefined
}

/** The times a sign-in starts, now. */
export function timesAtSignIn (now: number): SessionTimes {
  return { signedInAt: now, seenAt: now }
}

/** Which limit the session has passed at `now`, or undefined. */
function passed (times: SessionTimes, now: number, settings: TimeoutSettings): SessionEnd | undefined {
  if (settings.absoluteMs !== false && now - times.signedInAt >= settings.absoluteMs) return 'absolute'
  if (settings.idleMs !== false && now - times.seenAt >= settings.idleMs) return 'idle'
  return undefined
}

// The sessions this request ended, so that the answer can say why (the access guard, the index).
const ended = new WeakMap<FastifyRequest, SessionEnd>()

/**
 * `lookup` behind the timeouts: a session past a limit is ended (as a sign-out ends it) before the member
 * is looked up, and the request is a visitor's; a live one has its last-seen time written when a step has
 * passed. A session signed in before the timeouts were on gets its times at its first request, so an
 * upgrade signs nobody out.
 */
export function withTimeouts (lookup: MemberLookup, session: SessionAdapter, sessionKey: string, settings: TimeoutSettings, now: () => number = Date.now): MemberLookup {
  const key = timesKey(sessionKey)
  const step = settings.idleMs === false ? undefined : seenStep(settings.idleMs)
  return async function memberWithinTimeouts (request) {
    const handle = session.of(request)
    const times = readTimes(handle?.get(key))
    const at = now()
    const end = times === undefined ? undefined : passed(times, at, settings)
    if (end !== undefined) {
      ended.set(request, end)
      await forgetStoredMember(request, session)
      return undefined
    }
    const member = await lookup(request)
    if (member === undefined || member === null) return member
    // A member read from the session: there is one.
    if (times === undefined) handle!.set(key, timesAtSignIn(at))
    else if (step !== undefined && at - times.seenAt >= step) handle!.set(key, { signedInAt: times.signedInAt, seenAt: at })
    return member
  }
}

/**
 * When this request ended a session on a timeout, sets the short cookie that tells the login page why.
 * The redirect itself stays the spec's: its status, Location and body do not change.
 */
export function noteSessionEnd (request: FastifyRequest, reply: FastifyReply, loginPath: string): void {
  const end = ended.get(request)
  if (end === undefined) return
  reply.setCookie(NOTICE_COOKIE, end, { path: loginPath, httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', maxAge: NOTICE_MAX_AGE_SECONDS })
}

/** The login page's notice of a timeout: its message, and the duration the message names (a message too). */
export interface TimeoutNotice {
  key: MessageKey
  duration: Said
}

/** "60 minutes", "1 minute", "3 seconds", "12 hours": a limit as the notice says it (hours from two on). */
export function spokenDuration (ms: number): Said {
  const [n, key]: [number, MessageKey] = ms % 3_600_000 === 0 && ms >= 7_200_000
    ? [ms / 3_600_000, 'duration.hours']
    : ms >= 60_000 ? [Math.round(ms / 60_000), 'duration.minutes'] : [Math.max(1, Math.round(ms / 1000)), 'duration.seconds']
  return { key, values: { n } }
}

/** The notice `key` with the limit `ms` in it. */
function noticeOf (key: MessageKey, ms: number): TimeoutNotice {
  return { key, duration: spokenDuration(ms) }
}

/**
 * The login page's notice for the reason in the cookie, and the cookie cleared (read once). Anything
 * else in the cookie is no notice: the text is the section's own, never the cookie's.
 */
export function takeNotice (request: FastifyRequest, reply: FastifyReply, loginPath: string, settings: TimeoutSettings): TimeoutNotice | undefined {
  const value = (request.cookies as Record<string, string | undefined> | undefined)?.[NOTICE_COOKIE]
  if (value === undefined) return undefined
  reply.clearCookie(NOTICE_COOKIE, { path: loginPath, httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' })
  if (value === 'idle' && settings.idleMs !== false) return noticeOf('login.notice.idle', settings.idleMs)
  if (value === 'absolute' && settings.absoluteMs !== false) return noticeOf('login.notice.absolute', settings.absoluteMs)
  return undefined
}
