// The section's OpenID Connect client: openid-client (an optional peer, loaded when `oidc` is set), its
// configuration per provider from discovery, and which of its errors mean "the provider is down".
import type * as OpenIdClient from 'openid-client'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { errorCodes, optionalPeer } from '../errors.js'
import { invalidOption } from '../option-checks.js'
import { OIDC_END_SESSION_WARNING, warnHostMistakeOnce } from '../warnings.js'
import type { OidcProvider } from './oidc-options.js'

const { FST_SR_OIDC_UNAVAILABLE } = errorCodes

export type Client = typeof OpenIdClient
export type Configuration = OpenIdClient.Configuration

/** openid-client's own HTTP timeout for every provider call, in seconds: a provider that hangs gets the 503, not a hung page. */
export const PROVIDER_TIMEOUT_SECONDS = 5
/** After a failed discovery, the next try waits this long: a provider that is down is not asked on every click. */
export const DISCOVERY_RETRY_MS = 30_000

/** openid-client, loaded once the first section with `oidc` registers. */
export function loadClient (): Promise<Client> {
  return optionalPeer('openid-client', () => import('openid-client'), 'oidc', 'openid-client')
}

const NETWORK_ERRORS = new Set(['TimeoutError', 'AbortError'])

/**
 * Whether `error` (from discovery or the token endpoint) means the provider could not be reached or did
 * not answer in time, rather than that it answered and the answer was refused: a network failure, a
 * timeout, or a 5xx, anywhere along its causes.
 */
export function providerUnavailable (error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== null && typeof cause === 'object' && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { name, message, status } = cause as { name?: unknown, message?: unknown, status?: unknown }
    if (NETWORK_ERRORS.has(name as string)) return true
    if (name === 'TypeError' && message === 'fetch failed') return true
    if (typeof status === 'number' && status >= 500) return true
  }
  return false
}

/**
 * Each provider's configuration, from discovery at its first sign-in (never at start-up: `ready()` does
 * not wait for a provider), kept for the process; a failure is tried again no sooner than
 * {@link DISCOVERY_RETRY_MS} later, and answered FST_SR_OIDC_UNAVAILABLE until then.
 */
export class ProviderConfigs {
  readonly #client: Client
  readonly #log: FastifyBaseLogger
  readonly #configs = new Map<string, Promise<Configuration>>()
  readonly #failedAt = new Map<string, number>()

  constructor (client: Client, log: FastifyBaseLogger) {
    this.#client = client
    this.#log = log
  }

  get client (): Client {
    return this.#client
  }

  /** The provider's configuration, or FST_SR_OIDC_UNAVAILABLE. */
  async of (provider: OidcProvider): Promise<Configuration> {
    const failed = this.#failedAt.get(provider.id)
    if (failed !== undefined && Date.now() - failed < DISCOVERY_RETRY_MS) throw new FST_SR_OIDC_UNAVAILABLE(provider.label)
    let config = this.#configs.get(provider.id)
    if (config === undefined) {
      config = this.#discover(provider)
      this.#configs.set(provider.id, config)
    }
    try {
      return await config
    } catch (err) {
      if (this.#configs.get(provider.id) === config) {
        this.#configs.delete(provider.id)
        this.#failedAt.set(provider.id, Date.now())
        this.#log.warn({ code: 'FST_SR_OIDC_UNAVAILABLE', provider: provider.id, err }, `fastify-schools-resources: discovery at ${provider.issuer.href} failed; sign-in with ${provider.label} answers 503 for ${DISCOVERY_RETRY_MS / 1000} s, then tries again`)
      }
      throw new FST_SR_OIDC_UNAVAILABLE(provider.label, { cause: err })
    }
  }

  async #discover (provider: OidcProvider): Promise<Configuration> {
    const client = this.#client
    const config = await client.discovery(
      provider.issuer,
      provider.clientId,
      provider.clientSecret,
      provider.clientSecret === undefined ? client.None() : undefined,
      { timeout: PROVIDER_TIMEOUT_SECONDS, ...(provider.insecure ? { execute: [client.allowInsecureRequests] } : {}) }
    )
    config.timeout = PROVIDER_TIMEOUT_SECONDS
    // The ID token's signature is checked against the provider's keys too, though it came straight from the token endpoint.
    client.enableNonRepudiationChecks(config)
    this.#failedAt.delete(provider.id)
    if (provider.endSession && config.serverMetadata().end_session_endpoint === undefined) {
      warnHostMistakeOnce(this.#log, `${OIDC_END_SESSION_WARNING}:${provider.id}`, { code: OIDC_END_SESSION_WARNING, provider: provider.id },
        `fastify-schools-resources: oidc provider "${provider.id}" has endSession: true, but ${provider.issuer.href} advertises no end_session_endpoint: sign-out stays local. Leave endSession out for this provider.`)
    }
    return config
  }
}

/**
 * The configurations of the `oidc` providers for the section in `fastify`: openid-client loaded (an optional
 * peer), and @fastify/cookie's secret there to sign the state cookie with.
 */
export async function oidcConfigs (fastify: FastifyInstance): Promise<ProviderConfigs> {
  if (!fastify.hasRequestDecorator('unsignCookie')) {
    invalidOption('oidc', 'needs @fastify/cookie registered with a secret (the same on every instance): the sign-in\'s state cookie is signed with it')
  }
  return new ProviderConfigs(await loadClient(), fastify.log)
}
