// The `passwordReset` option: the host's hooks (it owns members, passwords and email), the link's life, the
// store of reset records and the limits, checked at start-up. Fail closed: a reset that could not be done
// safely (no baseUrl for the link, no password form, no way to end the member's sessions) fails start-up.
import type { FastifyRequest } from 'fastify'
import type { Member } from '../types.js'
import { invalidOption, positiveInteger } from '../option-checks.js'
import { MemoryAttemptStore, type AttemptStore } from '../stores/attempt-store.js'
import { MemoryTokenStore, type TokenStore } from '../stores/token-store.js'
import { defaultValidatePassword } from './passwords.js'
import type { Saying } from '../pages/answer-language.js'

/** What `sendResetEmail` is given: the member, the link to send them, until when it works, the request that asked. */
export interface ResetEmail {
  member: Member
  /** The absolute link: `{baseUrl}{prefix}/Security/changepassword?m=…&t=…`. Send it; never log it. */
  url: string
  expiresAt: Date
  request: FastifyRequest
}

/** The `passwordReset` option (docs/password-reset.md). */
export interface PasswordResetOptions {
  /** The member with this email address (as typed, trimmed), or null: the answer is the same either way. */
  findMemberByEmail: (email: string) => Member | null | undefined | Promise<Member | null | undefined>
  /** Sends the link. Runs after the answer has gone, so its time tells nothing; a failure is only logged. */
  sendResetEmail: (email: ResetEmail) => void | Promise<void>
  /** Sets the member's new password (hash it). A rejection shows "could not be changed" and keeps the link. */
  setPassword: (member: Member, newPassword: string) => void | Promise<void>
  /**
   * undefined to accept `password`, or the sentence to show. Default: 15 to 1,024 characters, not the
   * member's email, not one of the 10,000 most common passwords; no composition rules (NIST SP 800-63B-4).
   */
  validatePassword?: (password: string, member: Member) => string | undefined | Promise<string | undefined>
  /** How long a link works (default 2 days, as the legacy site's). */
  expiresInMs?: number
  /** After a change: sign the member in (true, default) or send them to the login page (false). */
  signIn?: boolean
  /**
   * Where reset records live (default: a MemoryTokenStore of this process). Give it a store of its own
   * (for Redis: `new RedisTokenStore(client, { prefix: 'schools-resources:reset:' })`): a new link ends
   * every older record of the member in it.
   */
  store?: TokenStore
  /** Mails per email address an hour (3), requests per client address per 15 minutes (20), changes tried per link (5). */
  limits?: { mailsPerEmail?: number, perAddress?: number, changesPerLink?: number }
}

export interface PasswordResetLimits {
  mailsPerEmail: number
  perAddress: number
  changesPerLink: number
  /** The lockout's store (or one of this process's without the lockout). */
  store: AttemptStore
}

export interface PasswordResetSettings {
  findMemberByEmail: PasswordResetOptions['findMemberByEmail']
  sendResetEmail: PasswordResetOptions['sendResetEmail']
  setPassword: PasswordResetOptions['setPassword']
  /** The host's rule (its sentence shown as given), or the default one, whose messages are in the page's language. */
  validatePassword: (password: string, member: Member) => Saying | undefined | Promise<Saying | undefined>
  expiresInMs: number
  signIn: boolean
  store: TokenStore
  limits: PasswordResetLimits
  /** The option as the host gave it: sections sharing one sign-in must give the same one. */
  given: object
}

const DAYS_2 = 2 * 24 * 60 * 60 * 1000
const KEYS = new Set(['findMemberByEmail', 'sendResetEmail', 'setPassword', 'validatePassword', 'expiresInMs', 'signIn', 'store', 'limits'])
const LIMIT_KEYS = new Set(['mailsPerEmail', 'perAddress', 'changesPerLink'])
const TOKEN_STORE_METHODS = ['get', 'set', 'take', 'deleteAll'] as const

/** What the reset needs of the other options, already resolved. */
export interface ResetNeeds {
  signIn: boolean
  passwordSignIn: boolean
  baseUrl: string | undefined
  signOutEverywhere: boolean
  lockoutStore: AttemptStore | undefined
}

function hook<T> (given: Record<string, unknown>, name: string, required: boolean): T | undefined {
  const value = given[name]
  if (value === undefined && !required) return undefined
  if (typeof value !== 'function') invalidOption(`passwordReset.${name}`, `must be a function${required ? ' (required)' : ', or left out'}`)
  return value as T
}

/** The checked `passwordReset` option, or undefined when it is left out (no reset routes). */
export function resolvePasswordReset (value: unknown, needs: ResetNeeds): PasswordResetSettings | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object' || Array.isArray(value)) invalidOption('passwordReset', 'must be an object ({ findMemberByEmail, sendResetEmail, setPassword })')
  const given = value as Record<string, unknown>
  if (!needs.signIn || !needs.passwordSignIn) invalidOption('passwordReset', 'needs the section\'s own password form (signIn and passwordSignIn on): a reset sets a password the form checks')
  if (needs.baseUrl === undefined) invalidOption('passwordReset', 'needs baseUrl (e.g. \'https://www.example.org\'): a link built from the request\'s Host header would send the token wherever an attacker names')
  if (!needs.signOutEverywhere) invalidOption('passwordReset', 'needs signOutEverywhere (leave it out, or give its store): after a change every session of the member must end')
  for (const key of Object.keys(given)) if (!KEYS.has(key)) invalidOption(`passwordReset.${key}`, `is not a setting of passwordReset (known: ${[...KEYS].join(', ')})`)
  const signIn = given.signIn ?? true
  if (typeof signIn !== 'boolean') invalidOption('passwordReset.signIn', 'must be true (sign in after a change) or false (the login page)')
  const store = given.store ?? new MemoryTokenStore()
  if (typeof store !== 'object' || TOKEN_STORE_METHODS.some((m) => typeof (store as Record<string, unknown>)[m] !== 'function')) {
    invalidOption('passwordReset.store', `must implement ${TOKEN_STORE_METHODS.join(', ')} (a TokenStore of its own, such as new RedisTokenStore(client, { prefix: 'schools-resources:reset:' }))`)
  }
  const limits = given.limits ?? {}
  if (limits === null || typeof limits !== 'object' || Array.isArray(limits)) invalidOption('passwordReset.limits', 'must be an object ({ mailsPerEmail, perAddress, changesPerLink }); the limits cannot be turned off')
  const l = limits as Record<string, unknown>
  for (const key of Object.keys(l)) if (!LIMIT_KEYS.has(key)) invalidOption(`passwordReset.limits.${key}`, `is not a limit (known: ${[...LIMIT_KEYS].join(', ')})`)
  return {
    findMemberByEmail: hook(given, 'findMemberByEmail', true)!,
    sendResetEmail: hook(given, 'sendResetEmail', true)!,
    setPassword: hook(given, 'setPassword', true)!,
    validatePassword: hook<NonNullable<PasswordResetOptions['validatePassword']>>(given, 'validatePassword', false) ?? defaultValidatePassword,
    expiresInMs: positiveInteger(given.expiresInMs, 'passwordReset.expiresInMs', DAYS_2),
    signIn,
    store: store as TokenStore,
    limits: {
      mailsPerEmail: positiveInteger(l.mailsPerEmail, 'passwordReset.limits.mailsPerEmail', 3),
      perAddress: positiveInteger(l.perAddress, 'passwordReset.limits.perAddress', 20),
      changesPerLink: positiveInteger(l.changesPerLink, 'passwordReset.limits.changesPerLink', 5),
      store: needs.lockoutStore ?? new MemoryAttemptStore()
    },
    given
  }
}
