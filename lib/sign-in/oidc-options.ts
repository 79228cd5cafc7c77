// The `oidc` option (docs/oidc.md): its shape, and its one parser. Nothing here imports openid-client,
// so the published types do not need it.
import type { FastifyRequest } from 'fastify'
import type { Member } from '../types.js'
import { invalidOption } from '../option-checks.js'

/** One OpenID Connect provider the login page offers (docs/oidc.md). */
export interface OidcProviderOptions {
  /** A lower-case slug (`google`, `entra`), unique: in the routes `{loginPath}/oidc/{id}` and the event's `provider`. */
  id: string
  /** What the button says after "Sign in with" (`Google`, `your school account`). */
  label: string
  /** The issuer, https (a loopback http issuer is allowed for development): discovery reads `{issuer}/.well-known/openid-configuration`. */
  issuer: string
  clientId: string
  /** Left out for a public client (PKCE only). */
  clientSecret?: string
  /** The scopes asked for (default `['openid', 'email', 'profile']`); must include `openid`. */
  scopes?: string[]
  /** Google Workspace: the `hd` claim must be one of these domains (a personal account has none). */
  allowedDomains?: string[]
  /** For providers that send no `hd`: `email_verified` must be true and the address's domain one of these. */
  allowedEmailDomains?: string[]
  /** Microsoft Entra: the `tid` claim must be one of these tenant ids (required for the `common` and `organizations` issuers). */
  allowedTenants?: string[]
  /** After the section's own sign-out, go on to the provider's (its `end_session_endpoint`). Default false. */
  endSession?: boolean
}

/** The ID token's claims, as openid-client validated them. */
export interface OidcClaims {
  iss: string
  sub: string
  aud: string | string[]
  email?: string
  email_verified?: boolean
  name?: string
  /** Google Workspace's hosted domain. */
  hd?: string
  /** Microsoft Entra's tenant id. */
  tid?: string
  [claim: string]: unknown
}

/** The host's link from a provider's account to a member: the member, or null when there is none. */
export type ResolveMember = (claims: OidcClaims, context: { provider: string, request: FastifyRequest }) =>
  Member | null | undefined | Promise<Member | null | undefined>

/** The `oidc` option. */
export interface OidcOptions {
  providers: OidcProviderOptions[]
  resolveMember: ResolveMember
}

/** A provider as checked. */
export interface OidcProvider {
  id: string
  label: string
  issuer: URL
  clientId: string
  clientSecret: string | undefined
  scopes: string[]
  /** Lower-cased. */
  allowedDomains: string[] | undefined
  allowedEmailDomains: string[] | undefined
  allowedTenants: string[] | undefined
  endSession: boolean
  /** A loopback http issuer: openid-client is told to allow plain http for it. */
  insecure: boolean
}

export interface ResolvedOidc {
  providers: OidcProvider[]
  resolveMember: ResolveMember
}

const ID = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/
const OIDC_KEYS = new Set(['providers', 'resolveMember'])
const PROVIDER_KEYS = new Set(['id', 'label', 'issuer', 'clientId', 'clientSecret', 'scopes', 'allowedDomains', 'allowedEmailDomains', 'allowedTenants', 'endSession'])
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]'])
// Entra's issuers that stand for many tenants: without a tenant list, any organisation's account gets in.
const ENTRA_MULTI_TENANT = /^\/(common|organizations)(\/|$)/

function isObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function text (value: unknown, name: string, why: string): string {
  if (typeof value !== 'string' || value.trim() === '') invalidOption(name, why)
  return value
}

function list (value: unknown, name: string, lower: boolean): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) {
    invalidOption(name, 'must be a non-empty list of non-empty strings')
  }
  return lower ? value.map((v: string) => v.toLowerCase()) : [...value]
}

function issuer (value: unknown, name: string): { url: URL, insecure: boolean } {
  let url: URL | undefined
  try {
    url = typeof value === 'string' ? new URL(value) : undefined
  } catch {}
  if (url === undefined || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    return invalidOption(name, 'must be the provider\'s issuer URL, such as "https://accounts.google.com"')
  }
  if (url.protocol === 'https:') return { url, insecure: false }
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return { url, insecure: true }
  return invalidOption(name, 'must be https (plain http only for a provider on this machine: 127.0.0.1, localhost or [::1])')
}

function provider (value: unknown, name: string): OidcProvider {
  if (!isObject(value)) return invalidOption(name, 'must be { id, label, issuer, clientId, clientSecret?, ... }')
  for (const key of Object.keys(value)) {
    if (!PROVIDER_KEYS.has(key)) invalidOption(`${name}.${key}`, `is not a provider setting (known: ${[...PROVIDER_KEYS].join(', ')})`)
  }
  const id = value.id
  if (typeof id !== 'string' || !ID.test(id)) invalidOption(`${name}.id`, 'must be a lower-case slug of a-z, 0-9 and - (1 to 32 characters, not starting or ending with -), such as "google"')
  const { url, insecure } = issuer(value.issuer, `${name}.issuer`)
  const scopes = list(value.scopes, `${name}.scopes`, false) ?? ['openid', 'email', 'profile']
  if (!scopes.includes('openid')) invalidOption(`${name}.scopes`, 'must include "openid"')
  const secret = value.clientSecret
  if (secret !== undefined) text(secret, `${name}.clientSecret`, 'must be a non-empty string, or left out for a public client')
  const endSession = value.endSession ?? false
  if (typeof endSession !== 'boolean') invalidOption(`${name}.endSession`, 'must be true or false')
  const allowedTenants = list(value.allowedTenants, `${name}.allowedTenants`, true)
  if (url.hostname === 'login.microsoftonline.com' && ENTRA_MULTI_TENANT.test(url.pathname) && allowedTenants === undefined) {
    invalidOption(`${name}.allowedTenants`, 'is required with Entra\'s common or organizations issuer: list your tenant ids, or any organisation\'s account signs in')
  }
  return {
    id,
    label: text(value.label, `${name}.label`, 'must be a non-empty string: the button says "Sign in with {label}"'),
    issuer: url,
    clientId: text(value.clientId, `${name}.clientId`, 'must be the client id the provider gave you'),
    clientSecret: secret as string | undefined,
    scopes,
    allowedDomains: list(value.allowedDomains, `${name}.allowedDomains`, true),
    allowedEmailDomains: list(value.allowedEmailDomains, `${name}.allowedEmailDomains`, true),
    allowedTenants,
    endSession,
    insecure
  }
}

/** The `oidc` option, checked; undefined when left out. It needs `baseUrl` for its redirect URIs. */
export function resolveOidc (value: unknown, baseUrl: string | undefined): ResolvedOidc | undefined {
  if (value === undefined) return undefined
  if (!isObject(value)) return invalidOption('oidc', 'must be { providers: [...], resolveMember }')
  for (const key of Object.keys(value)) {
    if (!OIDC_KEYS.has(key)) invalidOption(`oidc.${key}`, 'is not an oidc setting (known: providers, resolveMember)')
  }
  if (!Array.isArray(value.providers) || value.providers.length === 0) invalidOption('oidc.providers', 'must be a non-empty list of providers')
  if (typeof value.resolveMember !== 'function') invalidOption('oidc.resolveMember', 'is required: (claims, { provider, request }) => member | null')
  if (baseUrl === undefined) invalidOption('baseUrl', 'is required with oidc: the redirect URI registered at the provider is {baseUrl}{loginPath}/oidc/{id}/callback')
  const providers = (value.providers as unknown[]).map((p, i) => provider(p, `oidc.providers[${i}]`))
  const seen = new Set<string>()
  providers.forEach((p, i) => {
    if (seen.has(p.id)) invalidOption(`oidc.providers[${i}].id`, `"${p.id}" is given twice: each provider needs its own id`)
    seen.add(p.id)
  })
  return { providers, resolveMember: value.resolveMember as ResolveMember }
}
