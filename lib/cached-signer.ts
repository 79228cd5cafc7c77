import { Signer, type UnsignResult } from '@fastify/cookie'
import { FST_SR_INVALID_OPTION } from './errors.js'

export interface CachedSignerOptions {
  /** HMAC algorithm, as for @fastify/session's `algorithm` (default `sha256`). */
  algorithm?: string
  /** How many verified cookies to remember (default 10,000); the oldest is forgotten first. */
  maxEntries?: number
}

/**
 * A cookie signer for @fastify/session's `secret` option that remembers the cookies it has verified.
 * The session plugin checks the cookie's HMAC on every request; a signed-in member sends the same cookie
 * on every page, so a hit returns the earlier result instead of computing the HMAC again. Only valid
 * signatures are remembered (a forged cookie cannot fill the cache), and only up to `maxEntries`.
 * A hit needs the exact signed string, which only this secret could have produced.
 */
export class CachedSigner {
  readonly #signer: Signer
  readonly #verified = new Map<string, UnsignResult>()
  readonly #maxEntries: number

  constructor (secrets: string | string[], options: CachedSignerOptions = {}) {
    const list = Array.isArray(secrets) ? secrets : [secrets]
    // @fastify/session checks this for a string secret, but not for a signer object: check it here.
    if (list.length === 0 || list.some((s) => typeof s !== 'string' || s.length < 32)) {
      throw new FST_SR_INVALID_OPTION('secret', 'must be a string of 32 or more characters, or a non-empty array of them')
    }
    const maxEntries = options.maxEntries ?? 10_000
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new FST_SR_INVALID_OPTION('maxEntries', 'must be a positive integer')
    this.#signer = new Signer(secrets, options.algorithm ?? 'sha256')
    this.#maxEntries = maxEntries
  }

  sign (value: string): string {
    return this.#signer.sign(value)
  }

  unsign (signed: string): UnsignResult {
    const known = this.#verified.get(signed)
    if (known !== undefined) return known
    const result = this.#signer.unsign(signed)
    if (result.valid) {
      if (this.#verified.size >= this.#maxEntries) this.#verified.delete(this.#verified.keys().next().value!)
      this.#verified.set(signed, Object.freeze(result))
    }
    return result
  }

  /** Number of verified cookies remembered. */
  get size (): number {
    return this.#verified.size
  }
}
