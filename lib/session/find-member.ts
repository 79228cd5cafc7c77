import type { FastifyRequest } from 'fastify'
import { LruMap } from 'toad-cache'
import type { Member } from '../types.js'
import type { SessionAdapter } from './session-adapter.js'
import { forgetStoredMember, invalidMember, isMember, isSessionVersion, storedMember, type MemberLookup } from './member.js'

/** A member id as sign-in keeps it: a non-empty string or a finite number. */
export type MemberId = Member['id']

/**
 * What the host's `findMember` gives for an id: the member as it is now, with the version of its
 * sessions when the host keeps one, or nothing (null, undefined, any falsy value) when there is none.
 */
export type FoundMember = Member & { sessionVersion?: string | number }

export type FindMember = (id: MemberId) => FoundMember | null | undefined | Promise<FoundMember | null | undefined>

export interface FindMemberCacheSettings {
  /** How long an answer of findMember (a member, or "not found") is kept, in milliseconds; 0 keeps none. */
  ttlMs: number
  /** How many ids are kept at most; the least recently used goes first. */
  max: number
}

/**
 * The host's answer for `id`, checked where it enters, as getMember's is: falsy is "not found", a member
 * with that same id (and a string or number `sessionVersion`, if any) is the member, anything else is a
 * host mistake that admits nobody (FST_SR_INVALID_MEMBER: the 500 page, one warn with the fix).
 */
function checkedAnswer (request: FastifyRequest, id: MemberId, value: unknown): FoundMember | null {
  // Falsy: not found. `!value` on purpose, as for getMember: `row && toMember(row)` gives '' or 0.
  if (!(value as boolean)) return null
  if (!isMember(value)) throw invalidMember(request, 'findMember', value)
  if (value.id !== id) throw invalidMember(request, 'findMember', value, 'a member with another id')
  if (!isSessionVersion((value as FoundMember).sessionVersion)) throw invalidMember(request, 'findMember', value, 'a sessionVersion that is not a string or a number')
  return value
}

/**
 * The host's `findMember` behind a per-process cache: an LRU of at most `max` ids whose answers (a member,
 * or "not found") are kept `ttlMs`, so a removed group or a deleted account takes effect within that time
 * on every instance, each asking its own database. Lookups of one id in flight at once share one call.
 * A failure (a throw, a wrong answer) is not kept: the next request asks again.
 */
export class MemberFinder {
  readonly #find: FindMember
  readonly #cache: LruMap<FoundMember | null> | undefined
  readonly #inFlight = new Map<MemberId, Promise<FoundMember | null>>()

  constructor (find: FindMember, settings: FindMemberCacheSettings) {
    this.#find = find
    // toad-cache keeps entries forever with a ttl of 0, so "keep none" is no cache at all.
    this.#cache = settings.ttlMs === 0 ? undefined : new LruMap(settings.max, settings.ttlMs)
  }

  /** The member with `id` as the cache has it, asking findMember when it has none. */
  find (request: FastifyRequest, id: MemberId): Promise<FoundMember | null> {
    const kept = this.#cache?.get(id)
    if (kept !== undefined) return Promise.resolve(kept)
    return this.#inFlight.get(id) ?? this.#ask(request, id)
  }

  /** The member with `id` as findMember has it now (at sign-in), for the cache too. */
  findNow (request: FastifyRequest, id: MemberId): Promise<FoundMember | null> {
    return this.#ask(request, id)
  }

  #ask (request: FastifyRequest, id: MemberId): Promise<FoundMember | null> {
    const asked = (async () => checkedAnswer(request, id, await this.#find(id)))()
    this.#inFlight.set(id, asked)
    // Only the latest lookup of an id settles it: one from before a sign-in's findNow must not overwrite its answer.
    const latest = () => {
      const current = this.#inFlight.get(id) === asked
      if (current) this.#inFlight.delete(id)
      return current
    }
    asked.then((found) => { if (latest()) this.#cache?.set(id, found) }, latest)
    return asked
  }
}

/**
 * Who is signed in when the host gives `findMember`: the member whose id the session holds, as findMember
 * (through its cache) has them now. A member it no longer finds, or whose session version is not the one
 * stored at sign-in, is a visitor, and their session is ended; one it no longer finds is `gone` too
 * (their remembered devices are forgotten).
 */
export function memberById (session: SessionAdapter, sessionKey: string, finder: MemberFinder, gone?: (id: MemberId, request: FastifyRequest) => Promise<void>): MemberLookup {
  const stored = storedMember(session, sessionKey)
  return async function memberFromFinder (request) {
    const held = stored(request)
    if (held === undefined) return undefined
    const found = await finder.find(request, held.id)
    // Strict on purpose: a session from before versions were given (or after they stopped) signs in again.
    if (found !== null && found.sessionVersion === held.sessionVersion) return found
    if (found === null) await gone?.(held.id, request)
    await forgetStoredMember(request, session)
    return undefined
  }
}
