import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto'

/** The cookie a browser gets at a successful sign-in, as OWASP's "device cookies" describe. */
export const DEVICE_COOKIE = 'sr_device'

/** A browser shared by several members (a classroom computer) remembers this many of them, newest first. */
export const MAX_DEVICE_ENTRIES = 5

// One entry: a random nonce and HMAC-SHA256(key, username + "\n" + nonce), both base64url. The username is
// not in the cookie; an entry proves only that this browser signed in as the username it is checked with.
const ENTRY = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/
const MAX_COOKIE_LENGTH = MAX_DEVICE_ENTRIES * 67

/**
 * Signs and checks device cookies. The key must be the same on every instance (the `lockout.deviceSecret`
 * option); without it each process draws its own, so a browser is known only to the process that signed
 * it in, until that process restarts.
 */
export class DeviceCookies {
  // A KeyObject: Node's createHmac accepts one several times faster than a Buffer (see events.ts).
  readonly #key: KeyObject

  constructor (secret: string | undefined) {
    this.#key = createSecretKey(secret === undefined ? randomBytes(32) : Buffer.from(secret))
  }

  #sign (username: string, nonce: string): string {
    return createHmac('sha256', this.#key).update(`${username}\n${nonce}`).digest('base64url')
  }

  #entries (cookie: unknown): Array<{ nonce: string, mac: string }> {
    if (typeof cookie !== 'string' || cookie.length > MAX_COOKIE_LENGTH) return []
    const entries = []
    for (const part of cookie.split('~')) {
      const match = ENTRY.exec(part)
      if (match !== null) entries.push({ nonce: match[1], mac: match[2] })
    }
    return entries.slice(0, MAX_DEVICE_ENTRIES)
  }

  #matches (entry: { nonce: string, mac: string }, username: string): boolean {
    return timingSafeEqual(Buffer.from(entry.mac), Buffer.from(this.#sign(username, entry.nonce)))
  }

  /** The nonce of the cookie's entry for `username` (this browser signed in as it before), or undefined. */
  known (cookie: unknown, username: string): string | undefined {
    return this.#entries(cookie).find((entry) => this.#matches(entry, username))?.nonce
  }

  /** The cookie after a successful sign-in as `username`: its entry first (kept, or new), the others after it. */
  remember (cookie: unknown, username: string): string {
    const entries = this.#entries(cookie)
    const own = entries.find((entry) => this.#matches(entry, username))
    const nonce = own?.nonce ?? randomBytes(16).toString('base64url')
    const others = entries.filter((entry) => entry !== own).map((entry) => `${entry.nonce}.${entry.mac}`)
    return [`${nonce}.${this.#sign(username, nonce)}`, ...others].slice(0, MAX_DEVICE_ENTRIES).join('~')
  }
}
