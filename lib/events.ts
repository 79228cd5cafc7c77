// The section's events on node:diagnostics_channel (docs/events.md): what an audit log or a metrics
// exporter subscribes to. A leaf: imports nothing of ours. Every payload is built only when a channel
// has subscribers, and holds plain values: never a password, a session id or a CSRF token.
import { channel } from 'node:diagnostics_channel'
import { createHmac, createSecretKey, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/** The channel names, for `diagnostics_channel.subscribe(name, listener)`. */
export const eventChannels = Object.freeze({
  signInSucceeded: 'fastify-schools-resources:sign-in:succeeded',
  signInFailed: 'fastify-schools-resources:sign-in:failed',
  lockedOut: 'fastify-schools-resources:sign-in:locked-out',
  signedOut: 'fastify-schools-resources:sign-out',
  accessRefused: 'fastify-schools-resources:access:refused',
  fileDownloaded: 'fastify-schools-resources:file:downloaded',
  storeUnavailable: 'fastify-schools-resources:store:unavailable',
  redirectRefused: 'fastify-schools-resources:redirect:refused'
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
  'missing-credentials' | 'insecure-connection' | (string & {})

export interface SignInSucceededEvent extends SectionEvent { memberId: string | number }
export interface SignInFailedEvent extends SectionEvent {
  reason: SignInFailureReason
  /** HMAC-SHA-256 (base64url) of the identifier tried, trimmed and lower-cased; undefined when none was given. */
  identifierHash: string | undefined
}
/** A failed sign-in locked its username (for this address, or for every browser it never signed in from). */
export interface LockedOutEvent extends SectionEvent {
  identifierHash: string
  until: Date
}
export interface SignedOutEvent extends SectionEvent { memberId: string | number | undefined }
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
export const accessRefused = made<AccessRefusedEvent>(eventChannels.accessRefused)
export const fileDownloaded = made<FileDownloadedEvent>(eventChannels.fileDownloaded)
export const storeUnavailable = made<StoreUnavailableEvent>(eventChannels.storeUnavailable)
export const redirectRefused = made<RedirectRefusedEvent>(eventChannels.redirectRefused)

/** The fields every event carries, for `request` in `section`. */
export function eventBase (request: FastifyRequest, section: string | undefined): SectionEvent {
  return { app: request.server, section, requestId: request.id, clientAddress: request.ip }
}

// Used when the host gives no auditKey: hashes compare within this process only. A KeyObject, not the
// bytes: Node 24's createHmac takes several times longer to accept a Buffer key (docs/upstream-hmac-key.md),
// and a password spray makes one hash per attempt.
const PROCESS_KEY = createSecretKey(randomBytes(32))

/**
 * The keyed hash a failed sign-in carries instead of what was typed (people type passwords into the
 * email field): the same identifier gives the same hash under one key, and without the key it cannot
 * be tested against a list of addresses.
 */
export function identifierHash (identifier: string, key: string | undefined): string {
  return createHmac('sha256', key ?? PROCESS_KEY).update(identifier.trim().toLowerCase()).digest('base64url')
}
