// The example server's settings from its environment. Every bad value is refused before anything
// starts, with a message that names the variable, says what it must be and shows what was given
// (Fastify's and node-redis's own messages name neither: "options.port should be >= 0", "Invalid URL").

import { BlockList, isIP } from 'node:net'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export interface ExampleSettings {
  /** OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_ALLOWED_DOMAINS: sign in with the school's account (docs/oidc.md). */
  oidc: { issuer: string, clientId: string, clientSecret?: string, allowedDomains?: string[] } | undefined
  port: number
  host: string
  logLevel: typeof LOG_LEVELS[number]
  baseUrl: string | undefined
  /** SESSION_PLUGIN: `session` (@fastify/session, default) or `secure-session` (@fastify/secure-session). */
  sessionPlugin: 'session' | 'secure-session'
  /** Undefined when SESSION_SECRET is unset: the server then makes one up and warns. */
  sessionSecret: string | undefined
  demoEmail: string
  demoPassword: string
  demoParentEmail: string
  demoParentPassword: string
  redisUrl: string | undefined
  /** REDIS_SENTINELS: the sentinels of a Sentinel-managed primary named REDIS_SENTINEL_NAME. */
  redisSentinels?: Array<{ host: string, port: number }>
  redisSentinelName?: string
  /** REDIS_CLUSTER_NODES: some masters of a Redis Cluster. */
  redisClusterNodes?: Array<{ host: string, port: number }>
  /** REDIS_WAIT_REPLICAS: replicas that must have a session write (default 1 with Sentinel, else 0). */
  redisWaitReplicas?: number
  redisPrefix: string | undefined
  redisTimeoutMs: number
  redisConnectTimeoutMs: number
  /** Fastify's trustProxy: behind a TLS-terminating proxy, so that the visitor's https and address count. */
  trustProxy: string | undefined
  requestTimeoutMs: number
  connectionTimeoutMs: number
  /** From SIGTERM, how long /readyz answers 503 while everything else is served, before the listener closes. */
  shutdownReadyPauseMs: number
  /** From SIGTERM, how long the requests in flight (downloads too) may take before they are cut. */
  shutdownDeadlineMs: number
  /** The directory of the demo's files; undefined: examples/files. */
  filesDir: string | undefined
  /** SMTP_URL: where reset emails go (smtp:// or smtps://); unset: the links are logged, refused with an https BASE_URL. */
  smtpUrl: string | undefined
  /** SMTP_FROM: the reset emails' From. */
  smtpFrom: string | undefined
  /** IDLE_TIMEOUT_MS and ABSOLUTE_TIMEOUT_MS: the section's `timeouts`, each `false` when `off`. */
  timeouts: { idleMs: number | false, absoluteMs: number | false }
  /** REMEMBER_ME_MS: the section's `rememberMe.maxAgeMs`, `false` when `off` or `0`. */
  rememberMeMs: number | false
}

/** Thrown for a bad setting; its message is meant to be printed as it is. */
export class SettingError extends Error {
  constructor (name: string, must: string, given: string) {
    super(`${name} ${must}; got ${JSON.stringify(given)}. Fix or unset ${name} (docs/example-server.md lists the settings).`)
    this.name = 'SettingError'
  }
}

type Env = Record<string, string | undefined>

/** The variable's value, or undefined when it is unset or empty. */
function read (env: Env, name: string): string | undefined {
  const value = env[name]
  return value === undefined || value === '' ? undefined : value
}

function wholeNumber (env: Env, name: string, fallback: number, min: number, max: number, must: string): number {
  const raw = read(env, name)
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) throw new SettingError(name, must, raw)
  return value
}

/** A timeout in milliseconds (the section's minimum, 1000), or `off`. */
function timeout (env: Env, name: string, fallback: number): number | false {
  if (read(env, name)?.trim().toLowerCase() === 'off') return false
  return wholeNumber(env, name, fallback, 1000, 2 ** 31 - 1, 'must be a whole number of milliseconds, 1000 or more, such as 3600000, or off')
}

/** How long "Keep me signed in" remembers a device (the section's range: a minute to 400 days), or `off` (`0` too). */
function rememberMe (env: Env): number | false {
  const raw = read(env, 'REMEMBER_ME_MS')?.trim().toLowerCase()
  if (raw === 'off' || raw === '0' || raw === 'false') return false
  return wholeNumber(env, 'REMEMBER_ME_MS', 30 * 24 * 60 * 60 * 1000, 60_000, 400 * 24 * 60 * 60 * 1000, 'must be a whole number of milliseconds from 60000 to 400 days, such as 2592000000 (30 days), or off')
}

/** A URL for the error message without its password. */
function redacted (raw: string): string {
  return raw.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@')
}

/** A comma-separated host:port list, or undefined when unset. */
function nodes (env: Env, name: string): Array<{ host: string, port: number }> | undefined {
  const raw = read(env, name)
  if (raw === undefined) return undefined
  return raw.split(',').map((entry) => {
    const match = /^\s*([^\s:]+|\[[0-9a-f:]+\]):(\d{1,5})\s*$/i.exec(entry)
    if (match === null || Number(match[2]) < 1 || Number(match[2]) > 65535) {
      throw new SettingError(name, 'must be host:port pairs separated by commas, such as 10.0.0.1:26379,10.0.0.2:26379', raw)
    }
    return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) }
  })
}

/** At most one of REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES; a Sentinel set needs its primary's name. */
function redisTopology (env: Env): Pick<ExampleSettings, 'redisSentinels' | 'redisSentinelName' | 'redisClusterNodes'> {
  const redisSentinels = nodes(env, 'REDIS_SENTINELS')
  const redisClusterNodes = nodes(env, 'REDIS_CLUSTER_NODES')
  const redisSentinelName = read(env, 'REDIS_SENTINEL_NAME')
  const given = ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'].filter((name) => read(env, name) !== undefined)
  if (given.length > 1) throw new SettingError(given[1], `cannot be set together with ${given[0]}: one Redis, Sentinel set or Cluster`, read(env, given[1])!)
  if (redisSentinels !== undefined && redisSentinelName === undefined) {
    throw new SettingError('REDIS_SENTINEL_NAME', 'must name the primary the sentinels monitor (their "sentinel monitor <name>") when REDIS_SENTINELS is set', '')
  }
  return { redisSentinels, redisSentinelName, redisClusterNodes }
}

const TRUST_PROXY_MUST = 'must be the addresses or CIDRs of your proxies, separated by commas, such as 10.0.0.1 or 10.0.0.0/8'

/**
 * TRUST_PROXY as Fastify's trustProxy: the proxies' addresses/CIDRs separated by commas. `true` would let
 * every client choose its own address (the left end of X-Forwarded-For) for the login limit; a number is a
 * hop count, which Fastify 5 turns into "trust nobody", and as a string Fastify would read `1` as the
 * address 0.0.0.1. Both are refused with the reason.
 */
function trustProxy (raw: string | undefined): string | undefined {
  if (raw === undefined || raw === 'false') return undefined
  if (raw.trim().toLowerCase() === 'true') {
    throw new SettingError('TRUST_PROXY', `${TRUST_PROXY_MUST}; true would trust every client's own X-Forwarded-For, so a visitor could choose its address for the login limit`, raw)
  }
  const count = raw.split(',').find((entry) => /^\s*\d+\s*$/.test(entry))
  if (count !== undefined) {
    throw new SettingError('TRUST_PROXY', `${TRUST_PROXY_MUST}; a hop count such as ${count.trim()} is not trusted by Fastify 5 (it trusts no proxy at all) and as text it would be read as an IP address`, raw)
  }
  const publicPeer = ['203.0.113.1', '2001:db8::1'].find((peer) => proxies(raw).check(peer, isIP(peer) === 6 ? 'ipv6' : 'ipv4'))
  if (publicPeer !== undefined) {
    throw new SettingError('TRUST_PROXY', `${TRUST_PROXY_MUST}; this list trusts public addresses such as ${publicPeer}, whose clients could then choose their own address for the login limit, as with true`, raw)
  }
  return raw
}

/** The proxies TRUST_PROXY lists, as a BlockList to ask whether an address is one of them; an entry that is no address or CIDR is refused. */
function proxies (raw: string): BlockList {
  const list = new BlockList()
  for (const entry of raw.split(',')) {
    const [address, prefix] = entry.trim().split('/')
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4'
    try {
      if (prefix === undefined) list.addAddress(address, family)
      else list.addSubnet(address, /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN, family)
    } catch {
      throw new SettingError('TRUST_PROXY', TRUST_PROXY_MUST, raw)
    }
  }
  return list
}

export function readSettings (env: Env): ExampleSettings {
  const logLevel = read(env, 'LOG_LEVEL') ?? 'info'
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new SettingError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`, logLevel)
  }

  const baseUrl = read(env, 'BASE_URL')
  if (baseUrl !== undefined) {
    const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined
    if (url === undefined || !/^https?:$/.test(url.protocol) || url.origin !== baseUrl.replace(/\/$/, '')) {
      throw new SettingError('BASE_URL', 'must be the site\'s origin, such as https://www.example.org (http or https, no path)', baseUrl)
    }
  }

  const sessionPlugin = read(env, 'SESSION_PLUGIN') ?? 'session'
  if (sessionPlugin !== 'session' && sessionPlugin !== 'secure-session') {
    throw new SettingError('SESSION_PLUGIN', 'must be session (@fastify/session) or secure-session (@fastify/secure-session)', sessionPlugin)
  }

  const sessionSecret = read(env, 'SESSION_SECRET')
  if (sessionSecret !== undefined && sessionSecret.length < 32) {
    throw new SettingError('SESSION_SECRET', 'must be at least 32 characters (for example: openssl rand -base64 32)', `${sessionSecret.length} characters`)
  }

  // The two demo members must be told apart at sign-in (emails compare without case).
  const demoEmail = read(env, 'DEMO_EMAIL') ?? 'teacher@example.org'
  const demoParentEmail = read(env, 'DEMO_PARENT_EMAIL') ?? 'parent@example.org'
  if (demoParentEmail.toLowerCase() === demoEmail.toLowerCase()) {
    throw new SettingError('DEMO_PARENT_EMAIL', 'must differ from DEMO_EMAIL (the teacher\'s)', demoParentEmail)
  }

  const redisUrl = read(env, 'REDIS_URL')
  if (redisUrl !== undefined && (!URL.canParse(redisUrl) || !/^rediss?:$/.test(new URL(redisUrl).protocol))) {
    throw new SettingError('REDIS_URL', 'must be a redis:// or rediss:// URL, such as redis://127.0.0.1:6379', redacted(redisUrl))
  }

  const shutdownReadyPauseMs = wholeNumber(env, 'SHUTDOWN_READY_PAUSE_MS', 0, 0, 2 ** 31 - 1, 'must be a whole number of milliseconds, longer than your load balancer takes to see a failed /readyz, such as 5000')
  const shutdownDeadlineMs = wholeNumber(env, 'SHUTDOWN_DEADLINE_MS', 10_000, 1, 2 ** 31 - 1, 'must be a positive whole number of milliseconds, such as 10000')
  if (shutdownDeadlineMs <= shutdownReadyPauseMs) {
    throw new SettingError('SHUTDOWN_DEADLINE_MS', `must be longer than SHUTDOWN_READY_PAUSE_MS (${shutdownReadyPauseMs}): both count from SIGTERM, and the requests in flight need time after the pause`, String(shutdownDeadlineMs))
  }

  const smtpUrl = read(env, 'SMTP_URL')
  if (smtpUrl !== undefined && (!URL.canParse(smtpUrl) || !/^smtps?:$/.test(new URL(smtpUrl).protocol))) {
    throw new SettingError('SMTP_URL', 'must be an smtp:// or smtps:// URL, such as smtps://user:password@smtp.example.org', redacted(smtpUrl))
  }
  // Without a mail server the reset links go to the log: fine on a developer's machine, never on a site.
  if (smtpUrl === undefined && baseUrl?.startsWith('https:') === true) {
    throw new SettingError('SMTP_URL', 'is required with an https BASE_URL: without it the password reset links would be written to the log instead of sent; give your mail server, such as smtps://user:password@smtp.example.org', '(unset)')
  }

  const oidcIssuer = read(env, 'OIDC_ISSUER')
  const oidcClientId = read(env, 'OIDC_CLIENT_ID')
  if (oidcIssuer !== undefined && oidcClientId === undefined) throw new SettingError('OIDC_CLIENT_ID', 'is required with OIDC_ISSUER: the client id the provider gave this site', '(unset)')
  if (oidcIssuer !== undefined && baseUrl === undefined) throw new SettingError('BASE_URL', 'is required with OIDC_ISSUER: the redirect URI registered at the provider is {BASE_URL}/Security/login/oidc/school/callback', '(unset)')
  const allowedDomains = read(env, 'OIDC_ALLOWED_DOMAINS')?.split(',').map((d) => d.trim()).filter((d) => d !== '')
  const oidcClientSecret = read(env, 'OIDC_CLIENT_SECRET')

  return {
    oidc: oidcIssuer === undefined
      ? undefined
      : { issuer: oidcIssuer, clientId: oidcClientId!, ...(oidcClientSecret === undefined ? {} : { clientSecret: oidcClientSecret }), ...(allowedDomains === undefined || allowedDomains.length === 0 ? {} : { allowedDomains }) },
    port: wholeNumber(env, 'PORT', 3000, 0, 65535, 'must be a port number from 0 to 65535 (0 picks a free port)'),
    host: read(env, 'HOST') ?? '127.0.0.1',
    logLevel: logLevel as ExampleSettings['logLevel'],
    baseUrl,
    sessionPlugin,
    sessionSecret,
    demoEmail,
    demoPassword: read(env, 'DEMO_PASSWORD') ?? 'correct horse battery staple',
    demoParentEmail,
    demoParentPassword: read(env, 'DEMO_PARENT_PASSWORD') ?? 'parents evening in the hall',
    redisUrl,
    ...redisTopology(env),
    redisWaitReplicas: wholeNumber(env, 'REDIS_WAIT_REPLICAS', read(env, 'REDIS_SENTINELS') === undefined ? 0 : 1, 0, 100, 'must be a whole number of replicas from 0 to 100, such as 1 (0: do not wait)'),
    redisPrefix: read(env, 'REDIS_PREFIX'),
    redisTimeoutMs: wholeNumber(env, 'REDIS_TIMEOUT_MS', 2000, 1, 2 ** 31 - 1, 'must be a positive whole number of milliseconds, such as 2000'),
    redisConnectTimeoutMs: wholeNumber(env, 'REDIS_CONNECT_TIMEOUT_MS', 10_000, 1, 2 ** 31 - 1, 'must be a positive whole number of milliseconds, such as 10000'),
    trustProxy: trustProxy(read(env, 'TRUST_PROXY')),
    requestTimeoutMs: wholeNumber(env, 'REQUEST_TIMEOUT_MS', 30_000, 1, 2 ** 31 - 1, 'must be a positive whole number of milliseconds, such as 30000'),
    connectionTimeoutMs: wholeNumber(env, 'CONNECTION_TIMEOUT_MS', 60_000, 1, 2 ** 31 - 1, 'must be a positive whole number of milliseconds, such as 60000'),
    shutdownReadyPauseMs,
    shutdownDeadlineMs,
    filesDir: read(env, 'FILES_DIR'),
    smtpUrl,
    smtpFrom: read(env, 'SMTP_FROM'),
    // The section's defaults: 60 minutes without a request, 12 hours after signing in.
    timeouts: { idleMs: timeout(env, 'IDLE_TIMEOUT_MS', 60 * 60 * 1000), absoluteMs: timeout(env, 'ABSOLUTE_TIMEOUT_MS', 12 * 60 * 60 * 1000) },
    // The section's default: 30 days.
    rememberMeMs: rememberMe(env)
  }
}
