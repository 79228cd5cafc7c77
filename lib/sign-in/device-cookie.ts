import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto'

/** The cookie a browser gets at a successful sign-in, as OWASP's "device cookies" describe. */
export const DEVICE_COOKIE = 'sr_device'

/** A browser shared by several members (a classroom computer) remembers this many of them, newest first. */
export const MAX_DEVICE_ENTRIES = 5

// One entry: a random nonce, the second it was issued (base 36) and HMAC-SHA256(key, username + "\n" +
// nonce + "\n" + issued), base64url. The username is not in the cookie; an entry proves only that this
// browser signed in as the username it is checked with, and when. An entry without the time (the format
// before it) matches nothing: that browser is unknown until it signs in again.
const ENTRY = /^([A-Za-z0-9_-]{22})\.([0-9a-z]{1,9})\.([A-Za-z0-9_-]{43})$/
const MAX_COOKIE_LENGTH = MAX_DEVICE_ENTRIES * 77

// Instances whose clocks differ a little may issue an entry another sees as a few seconds ahead.
const CLOCK_SKEW_S = 60

interface Entry { nonce: string, issued: string, mac: string }

/**
 * Signs and checks device cookies. The key must be the same on every instance (the `lockout.deviceSecret`
 * option); without it each process draws its own, so a browser is known only to the process that signed
 * it in, until that process restarts. An entry is refused once it is older than `maxAgeMs` (the cookie's
 * own Max-Age is only the browser's to honour: a copy of the cookie would otherwise be known for ever).
 */
export class DeviceCookies {
  // A KeyObject: Node's createHmac accepts one several times faster than a Buffer (see events.ts).
  readonly #key: KeyObject
  readonly #maxAgeS: number

  constructor (secret: string | undefined, maxAgeMs: number) {
    this.#key = createSecretKey(secret === undefined ? randomBytes(32) : Buffer.from(secret))
    this.#maxAgeS = maxAgeMs / 1000
  }

  #sign (username: string, nonce: string, issued: string): string {
    return createHmac('sha256', this.#key).update(`${username}\n${nonce}\n${issued}`).digest('base64url')
  }

  #entries (cookie: unknown): Entry[] {
    if (typeof cookie !== 'string' || cookie.length > MAX_COOKIE_LENGTH) return []
    const entries = []
    for (const part of cookie.split('~')) {
      const match = ENTRY.exec(part)
      if (match !== null) entries.push({ nonce: match[1], issued: match[2], mac: match[3] })
    }
    return entries.slice(0, MAX_DEVICE_ENTRIES)
  }

  /** Whether `entry` says it was issued within the maximum age before `now` (seconds). */
  #young (entry: Entry, now: number): boolean {
    const age = now - parseInt(entry.issued, 36)
    return age < this.#maxAgeS && age > -CLOCK_SKEW_S
  }

  /** Whether `entry` is young, and this key's for `username` (so its issue time is ours too). */
  #valid (entry: Entry, username: string, now: number): boolean {
    return this.#young(entry, now) && timingSafeEqual(Buffer.from(entry.mac), Buffer.from(this.#sign(username, entry.nonce, entry.issued)))
  }

  /** The nonce of the cookie's entry for `username` (this browser signed in as it, within the maximum age), or undefined. */
  known (cookie: unknown, username: string, now = Date.now()): string | undefined {
    return this.#entries(cookie).find((entry) => this.#valid(entry, username, now / 1000))?.nonce
  }

  /**
   * The cookie after a successful sign-in as `username`: its entry first (the same nonce, so its count of
   * failures stays its own, issued again now; or a new one), then the others that are not too old.
   */
  remember (cookie: unknown, username: string, now = Date.now()): string {
    const entries = this.#entries(cookie)
    const own = entries.find((entry) => this.#valid(entry, username, now / 1000))
    const nonce = own?.nonce ?? randomBytes(16).toString('base64url')
    const issued = Math.floor(now / 1000).toString(36)
    const others = entries.filter((entry) => entry !== own && this.#young(entry, now / 1000)).map((entry) => `${entry.nonce}.${entry.issued}.${entry.mac}`)
    return [`${nonce}.${issued}.${this.#sign(username, nonce, issued)}`, ...others].slice(0, MAX_DEVICE_ENTRIES).join('~')
  }
}
