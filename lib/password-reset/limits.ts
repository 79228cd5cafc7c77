// The reset's limits, counted in the lockout's store under keys of their own: no flood of mail to one
// inbox, no enumeration from one address, no guessing at one link. Every refusal gets the same page as a
// success, so a limit tells nothing about an account either.
import { createHash } from 'node:crypto'
import type { PasswordResetLimits } from './options.js'

const HOUR = 60 * 60 * 1000
const MINUTES_15 = 15 * 60 * 1000

/** Why a request for a link sends nothing. */
export type RequestRefusal = 'address-limit' | 'mail-limit'

/** An address's key: a hash, so that the store holds no email address. */
function emailKey (email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('base64url')
}

export class ResetLimits {
  readonly #limits: PasswordResetLimits
  readonly #linkWindowMs: number

  constructor (limits: PasswordResetLimits, linkWindowMs: number) {
    this.#limits = limits
    this.#linkWindowMs = linkWindowMs
  }

  /** Counts a request for a link from `ip` for `email`; the limit it goes past, or undefined. */
  async request (ip: string, email: string): Promise<RequestRefusal | undefined> {
    const { store, perAddress, mailsPerEmail } = this.#limits
    // Counted per address first: past it, the email's count is not touched (a flood from one address
    // cannot use up someone's mails).
    if ((await store.increment(`reset-address:${ip}`, MINUTES_15)).count > perAddress) return 'address-limit'
    if ((await store.increment(`reset-mail:${emailKey(email)}`, HOUR)).count > mailsPerEmail) return 'mail-limit'
    return undefined
  }

  /** Counts a change tried with the link `selector`; true while within the limit. */
  async change (selector: string): Promise<boolean> {
    const { store, changesPerLink } = this.#limits
    return (await store.increment(`reset-change:${selector}`, this.#linkWindowMs)).count <= changesPerLink
  }
}
