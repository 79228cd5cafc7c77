// The section's events on node:diagnostics_channel (docs/events.md): what an audit log or a metrics
// exporter subscribes to. A leaf hub: imports only the other hubs. Every payload is built only when a
// channel has subscribers, and holds plain values: never a password, a session id or a CSRF token.
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createHmac, createSecretKey, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { invalidOption } from './option-checks.js'
import { emitProcessWarning, EVENT_LISTENER_WARNING } from './warnings.js'

/** The channel names, for `diagnostics_channel.subscribe(name, listener)`. */
export const eventChannels = Object.freeze({
  signInSucceeded: 'fastify-schools-resources:sign-in:succeeded',
  signInFailed: 'fastify-schools-resources:sign-in:failed',
  lockedOut: 'fastify-schools-resources:sign-in:locked-out',
  signedOut: 'fastify-schools-resources:sign-out',
  signedOutEverywhere: 'fastify-schools-resources:sign-out:everywhere',
  accessRefused: 'fastify-schools-resources:access:refused',
  fileDownloaded: 'fastify-schools-resources:file:downloaded',
  storeUnavailable: 'fastify-schools-resources:store:unavailable',
  redirectRefused: 'fastify-schools-resources:redirect:refused',
  passwordReset: 'fastify-schools-resources:password-reset'
})

/** What every event carries. */
export interface SectionEvent {
  /** The Fastify instance (the app) the request reached. */
  app: FastifyInstance
  /** The section's index path (`/schools/resources/`); undefined for an event outside any one section. */
  section: string | undefined
  /** Fastify's request id. */
  requestId: string
  /** The client's address as Fastify sees it (`request.ip`, which trustProxy decides). */
  clientAddress: string
}

/** Why a sign-in was refused. An open list: new reasons may be added in a minor version. */
export type SignInFailureReason = 'wrong-credentials' | 'locked-out' | 'rate-limited' | 'csrf' | 'busy' |
  'missing-credentials' | 'insecure-connection' | 'too-many-sessions' | 'oidc-state' | 'oidc-token' | 'oidc-domain' |
  'oidc-email-unverified' | 'oidc-email-domain' | 'oidc-tenant' | 'oidc-no-member' | 'oidc-cancelled' | 'oidc-cookie-lost' | (string & {})

export interface SignInSucceededEvent extends SectionEvent {
  memberId: string | number
  /** How the member proved who they are: `'password'`, `'oidc'`, or a host's own word given to `reply.signInMember`. */
  method: string
  /** The OpenID provider's `id`, for `method: 'oidc'` (or a host's own, when it gave one). */
  provider?: string
}
export interface SignInFailedEvent extends SectionEvent {
  reason: SignInFailureReason
  /**
   * HMAC-SHA-256 (base64url) of the identifier tried, trimmed and lower-cased; undefined when none was
   * given or what was typed is no email address (a password typed into the email field is never hashed).
   */
  identifierHash: string | undefined
  /** The OpenID provider's `id`, for a refused OpenID sign-in (reasons `oidc-…`). */
  provider?: string
}
/** A failed sign-in locked its username (for this address, or for every browser it never signed in from). */
export interface LockedOutEvent extends SectionEvent {
  /** As SignInFailedEvent's: undefined when the locked username is no email address. */
  identifierHash: string | undefined
  until: Date
}
export interface SignedOutEvent extends SectionEvent { memberId: string | number | undefined }
/**
 * A member was signed out of every session (`app.schoolsResources.signOutEverywhere`, or the button). From
 * the host API there is no request: `requestId`, `clientAddress` and `section` are then undefined.
 */
export interface SignedOutEverywhereEvent extends Omit<SectionEvent, 'requestId' | 'clientAddress'> {
  requestId: string | undefined
  clientAddress: string | undefined
  memberId: string | number
  /** Who asked: the `by` given to signOutEverywhere, or the member themself for the button. */
  requestedBy: string | number | undefined
}
export interface AccessRefusedEvent extends SectionEvent {
  memberId: string | number
  /** The title of what was refused (a category, a host page). */
  title: string
  /** The request's path, without its query. */
  path: string
}
export interface FileDownloadedEvent extends SectionEvent {
  memberId: string | number
  category: string
  resource: string
  /** The file's name as served. */
  file: string
  status: 200 | 206
}
export interface StoreUnavailableEvent extends SectionEvent {
  /** The error's code, or its class name when it has none. */
  code: string | undefined
}
export interface RedirectRefusedEvent extends SectionEvent {
  existingLocation: string
  refusedLocation: string
  /**
   * True for the access guard's own refusal (the redirect to the section index after the login redirect,
   * which the spec raises on every anonymous visit); false for any other, which a metric or alert counts.
   */
  expected: boolean
}

/** Why a password reset did nothing. An open list: new reasons may be added in a minor version. */
export type PasswordResetRefusal = 'unknown-address' | 'address-limit' | 'mail-limit' | 'invalid-email' | 'invalid-link' |
  'too-many-attempts' | 'passwords-differ' | 'weak-password' | 'set-password-failed' | 'csrf' | (string & {})

/**
 * A step of a password reset (`passwordReset`): a link `requested` (and stored for a member), a password
 * `changed`, or `refused` with its reason. Never the token, the link or the address typed.
 */
export interface PasswordResetEvent extends SectionEvent {
  stage: 'requested' | 'changed' | 'refused'
  reason?: PasswordResetRefusal
  /** The member the link is for, when one is known. */
  memberId?: string | number
  /** As SignInFailedEvent's: the keyed hash of the address typed, when one was. */
  identifierHash?: string
}

/** Each channel's payload, by its name in `eventChannels`. */
export interface SectionEvents {
  signInSucceeded: SignInSucceededEvent
  signInFailed: SignInFailedEvent
  lockedOut: LockedOutEvent
  signedOut: SignedOutEvent
  signedOutEverywhere: SignedOutEverywhereEvent
  accessRefused: AccessRefusedEvent
  fileDownloaded: FileDownloadedEvent
  storeUnavailable: StoreUnavailableEvent
  redirectRefused: RedirectRefusedEvent
  passwordReset: PasswordResetEvent
}

export type SectionEventName = keyof SectionEvents

/** A listener given to `subscribeEvent`: it may be async; a throw or a rejection drops the event for it. */
export type SectionEventListener<K extends SectionEventName> = (event: SectionEvents[K]) => void | Promise<void>

/**
 * Subscribes `listener` to the section's event `name` (a key of `eventChannels`) and returns the function
 * that unsubscribes it. Node rethrows a raw diagnostics_channel subscriber's error as an uncaught exception,
 * which ends the process (an audit sink with a full disk would take the site down); here a throw, or a
 * rejected promise, drops that event for this listener and is said once per listener and channel, in the
 * log of the app the event came from.
 */
export function subscribeEvent<K extends SectionEventName> (name: K, listener: SectionEventListener<K>): () => void {
  if (typeof name !== 'string' || !Object.hasOwn(eventChannels, name)) {
    invalidOption('subscribeEvent name', `must be one of ${Object.keys(eventChannels).join(', ')}`)
  }
  if (typeof listener !== 'function') invalidOption('subscribeEvent listener', 'must be a function')
  const channelName = eventChannels[name]
  let said = false
  const dropped = (event: SectionEvents[K], error: unknown) => {
    if (said) return
    said = true
    listenerThrew(event.app, channelName, error)
  }
  const guarded = (message: unknown) => {
    const event = message as SectionEvents[K]
    try {
      const result = listener(event)
      if (result instanceof Promise) result.catch((error: unknown) => dropped(event, error))
    } catch (error) {
      dropped(event, error)
    }
  }
  subscribe(channelName, guarded)
  return () => { unsubscribe(channelName, guarded) }
}

function listenerThrew (app: FastifyInstance, channelName: string, error: unknown): void {
  const message = `a listener of ${channelName} failed, so the event was dropped for it (said once per listener ` +
    'and channel): catch its errors inside it (a log sink that fails must not lose the rest of the trail)'
  try {
    app.log.warn({ code: EVENT_LISTENER_WARNING, channel: channelName, err: error }, message)
  } catch {
    // The app's own logger failed too: the process warning still reaches stderr.
    emitProcessWarning(message, 'Warning', EVENT_LISTENER_WARNING)
  }
}

/** A channel whose messages are `T`: a typed view of node:diagnostics_channel's own. */
export interface EventChannel<T> {
  readonly hasSubscribers: boolean
  publish (message: T): void
}

function made<T> (name: string): EventChannel<T> {
  return channel(name)
}

export const signInSucceeded = made<SignInSucceededEvent>(eventChannels.signInSucceeded)
export const signInFailed = made<SignInFailedEvent>(eventChannels.signInFailed)
export const lockedOut = made<LockedOutEvent>(eventChannels.lockedOut)
export const signedOut = made<SignedOutEvent>(eventChannels.signedOut)
export const signedOutEverywhere = made<SignedOutEverywhereEvent>(eventChannels.signedOutEverywhere)
export const accessRefused = made<AccessRefusedEvent>(eventChannels.accessRefused)
export const fileDownloaded = made<FileDownloadedEvent>(eventChannels.fileDownloaded)
export const storeUnavailable = made<StoreUnavailableEvent>(eventChannels.storeUnavailable)
export const redirectRefused = made<RedirectRefusedEvent>(eventChannels.redirectRefused)
export const passwordReset = made<PasswordResetEvent>(eventChannels.passwordReset)

/** The fields every event carries, for `request` in `section`. */
export function eventBase (request: FastifyRequest, section: string | undefined): SectionEvent {
  return { app: request.server, section, requestId: request.id, clientAddress: request.ip }
}

// Used when the host gives no auditKey: hashes compare within this process only. A KeyObject, not the
// bytes: Node 24's createHmac takes several times longer to accept a Buffer key (docs/upstream-hmac-key.md),
// and a password spray makes one hash per attempt.
const PROCESS_KEY = createSecretKey(randomBytes(32))

// What an email address looks like as people type it: no spaces, one @, a dotted domain ending in letters.
// Anything else (a password typed into the email field, most often) is no identifier, and is not hashed.
const IDENTIFIER = /^[^\s@]{1,64}@[^\s@.]+(?:\.[^\s@.]+)*\.[a-z]{2,63}$/

/**
 * The keyed hash a failed sign-in carries instead of what was typed: the same identifier gives the same
 * hash under one key, and without the key it cannot be tested against a list of addresses. Only an
 * identifier is hashed (an email address, trimmed and lower-cased); anything else gives undefined, since
 * people type passwords into the email field and a leaked key and log would make such a hash a dictionary.
 */
export function identifierHash (typed: unknown, key: string | undefined): string | undefined {
  if (typeof typed !== 'string' || typed.length > 320) return undefined
  const identifier = typed.trim().toLowerCase()
  if (!IDENTIFIER.test(identifier)) return undefined
  return createHmac('sha256', key ?? PROCESS_KEY).update(identifier).digest('base64url')
}
