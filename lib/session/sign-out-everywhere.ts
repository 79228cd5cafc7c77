// Sign a member out everywhere: a per-member generation count in a store every instance shares, copied
// into the session at sign-in and compared on every read of the member. A count, not a time: instances'
// clocks differ, and a sign-in right after (a password reset) must start a session of the new generation.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { LruMap } from 'toad-cache'
import type { AttemptStore } from '../stores/attempt-store.js'
import type { TokenStore } from '../stores/token-store.js'
import type { Member, SchoolsResourcesApi } from '../types.js'
import { errorCodes } from '../errors.js'
import { signedOutEverywhere } from '../events.js'
import { forgetStoredMember, type MemberLookup } from './member.js'
import type { SessionAdapter } from './session-adapter.js'

const { FST_SR_INVALID_MEMBER_ID } = errorCodes

/** The `signOutEverywhere` option. */
export interface SignOutEverywhereOptions {
  /**
   * Where each member's generation count lives: an `AttemptStore` (default `lockout.store`, or one in
   * this process without the lockout); `new RedisAttemptStore(client)` shares it between instances.
   */
  store?: AttemptStore
}

/** How long a count read is trusted on another instance: the same staleness as findMember's default cache. */
export const GENERATION_CACHE_MS = 5000
const GENERATION_CACHE_MAX = 1000

/** Where the session keeps the generation it was signed in under. */
export function generationKey (sessionKey: string): string {
  return `${sessionKey}.generation`
}

/** A member id as the host has it, or FST_SR_INVALID_MEMBER_ID (a TypeError). */
function checkedId (value: unknown): Member['id'] {
  if ((typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))) return value
  throw new FST_SR_INVALID_MEMBER_ID(value === null ? 'null' : typeof value === 'string' ? 'an empty string' : typeof value === 'number' ? String(value) : typeof value)
}

/**
 * The generation counts of one store. Reads are cached per id for GENERATION_CACHE_MS (a sign-out
 * everywhere on another instance takes effect here within that time; on this one at once); sign-in
 * reads the store itself. Each count is held `holdMs`: longer than any session it could end may live.
 */
export class Generations {
  readonly store: AttemptStore
  readonly #holdMs: number
  readonly #cache = new LruMap<number>(GENERATION_CACHE_MAX, GENERATION_CACHE_MS)

  constructor (store: AttemptStore, holdMs: number) {
    this.store = store
    this.#holdMs = holdMs
  }

  #key (id: Member['id']): string {
    return `generation:${String(id)}`
  }

  /** The count as it is now in the store (0 before the first sign-out everywhere). */
  async now (id: Member['id']): Promise<number> {
    const count = (await this.store.get(this.#key(id)))?.count ?? 0
    this.#cache.set(String(id), count)
    return count
  }

  /** The count, from the cache when it is fresh. */
  async current (id: Member['id']): Promise<number> {
    return this.#cache.get(String(id)) ?? this.now(id)
  }

  /** One generation on: every session signed in before it ends at its next request. */
  async bump (id: Member['id']): Promise<void> {
    const key = this.#key(id)
    const { count } = await this.store.increment(key, this.#holdMs)
    // increment keeps the first window; hold makes every sign-out everywhere last the full time.
    await this.store.hold(key, this.#holdMs)
    this.#cache.set(String(id), count)
  }
}

/**
 * `lookup` behind the generation check: a member whose session holds another generation than the store's
 * is signed out (the session ended, as a sign-out ends it). A session from before the feature takes the
 * current generation at its first request, so an upgrade signs nobody out.
 */
export function withGenerations (lookup: MemberLookup, session: SessionAdapter, sessionKey: string, generations: Generations): MemberLookup {
  const key = generationKey(sessionKey)
  return async function memberOfThisGeneration (request) {
    const member = await lookup(request)
    if (member === undefined || member === null) return member
    const current = await generations.current(member.id)
    // A member read from the section's session: there is one.
    const handle = session.of(request)!
    const held: unknown = handle.get(key)
    if (held === current) return member
    if (held === undefined) {
      handle.set(key, current)
      return member
    }
    await forgetStoredMember(request, session)
    return undefined
  }
}

/** What a sign-out everywhere ends, per API object: the sections' generation counts and token stores (remembered devices, reset links). */
interface Ended {
  generations: Generations[]
  tokens: MemberTokens[]
}

/** A store of tokens, and how it names a member as their tokens' owner (reset links keep owners of their own). */
export interface MemberTokens {
  store: TokenStore
  /** Put before `String(id)`: '' for remembered devices, `reset:` for reset links. */
  ownerPrefix: string
}

// Per API object: what the sections that share it keep (one app, several sections).
const counters = new WeakMap<SchoolsResourcesApi, Ended>()

/**
 * Decorates `fastify.schoolsResources` once per app (a later section adds its store), and answers the
 * function the logout form's button calls.
 */
export function decorateSignOutEverywhere (fastify: FastifyInstance, generations: Generations, section: string, tokens: readonly MemberTokens[]): (memberId: Member['id'], request: FastifyRequest, by?: string) => Promise<void> {
  let api = fastify.hasDecorator('schoolsResources') ? fastify.schoolsResources : undefined
  if (api === undefined) {
    const made: SchoolsResourcesApi = {
      async signOutEverywhere (memberId, options = {}) {
        await signOutEverywhereNow(made, checkedId(memberId), options.by, { app: fastify, section: undefined, requestId: undefined, clientAddress: undefined })
      }
    }
    fastify.decorate('schoolsResources', made)
    counters.set(made, { generations: [], tokens: [] })
    api = made
  }
  const ended = counters.get(api)!
  if (!ended.generations.some((g) => g.store === generations.store)) ended.generations.push(generations)
  for (const t of tokens) if (!ended.tokens.some((e) => e.store === t.store && e.ownerPrefix === t.ownerPrefix)) ended.tokens.push(t)
  const shared = api
  // The button: the member asked; a stolen remember token: `by` says so.
  return (memberId, request, by) => signOutEverywhereNow(shared, memberId, by ?? memberId, { app: request.server, section, requestId: request.id, clientAddress: request.ip })
}

async function signOutEverywhereNow (api: SchoolsResourcesApi, memberId: Member['id'], by: string | number | undefined,
  base: { app: FastifyInstance, section: string | undefined, requestId: string | undefined, clientAddress: string | undefined }): Promise<void> {
  const ended = counters.get(api)!
  for (const generations of ended.generations) await generations.bump(memberId)
  // Every remembered device too (a token would otherwise sign a device in again), and every reset link
  // (a leaver's, or one asked for before a password changed, would otherwise set a password and sign in).
  for (const { store, ownerPrefix } of ended.tokens) await store.deleteAll(`${ownerPrefix}${String(memberId)}`)
  if (signedOutEverywhere.hasSubscribers) signedOutEverywhere.publish({ ...base, memberId, requestedBy: by })
}
