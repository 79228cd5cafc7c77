import { createHash } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import type { SessionStore } from '@fastify/session'
import schoolsResources, {
  anonymousShortCircuit,
  html,
  InMemoryCatalog,
  storeErrorHandler,
  type FastifySchoolsResourcesOptions
} from 'fastify-schools-resources'
import { RedisAttemptStore, RedisSessionStore, RedisTokenStore, type RedisCommandClient } from 'fastify-schools-resources/redis'
import { demoCatalog, demoFiles } from './demo-catalog.js'
import { demoDirectory, PASSWORD_CHECKS_AT_ONCE, PASSWORD_CHECKS_WAITING, type DemoAccount } from './demo-member.js'
import { registerSessionPlugin, type SessionPluginSetting } from './session-plugin.js'
import { auditLog } from './audit-log.js'
import { registerMetrics } from './metrics.js'
import { healthRoutes, type Store } from './health.js'
import { resetMailer, type ResetMailSettings } from './reset-mail.js'
import { languageSwitch } from './language.js'

export interface ExampleConfig {
  baseUrl?: string
  sessionSecret: string
  demoEmail: string
  demoPassword: string
  /** The second demo member, a parent outside the staff audience; absent: the teacher only. */
  demoParent?: DemoAccount
  /** Which session plugin: @fastify/session (default) or @fastify/secure-session (examples/session-plugin.ts). */
  sessionPlugin?: SessionPluginSetting
  /** Session cookie lifetime in milliseconds. */
  sessionMaxAge?: number
  logger?: FastifyServerOptions['logger']
  /**
   * Share sessions and the sign-in limits' counts between instances through Redis: a connected
   * node-redis client, and the prefix of every key (default `schools-resources:`). Unset: in memory.
   */
  redis?: { client: RedisCommandClient, prefix?: string, timeoutMs?: number, waitForReplicas?: number }
  /** Without redis: where sessions are kept (default: @fastify/session's memory store; the bench counts them). */
  sessionStore?: SessionStore
  /**
   * Fastify's trustProxy: behind a TLS-terminating proxy, so that the visitor's https (and address) is
   * seen. Unset: the connection's own.
   */
  trustProxy?: FastifyServerOptions['trustProxy']
  /** Milliseconds a whole request may take to arrive (default 30 s); Fastify's own default, 0, waits forever. */
  requestTimeoutMs?: number
  /** Milliseconds a socket may stay idle (default 60 s). */
  connectionTimeoutMs?: number
  /** Serve Prometheus metrics at /metrics (METRICS=1, docs/events.md). */
  metrics?: boolean
  /** True from SIGTERM on, so that /readyz fails (examples/server.ts); unset: never. */
  draining?: () => boolean
  /** The directory of the demo's files (default examples/files). */
  filesDir?: string
  /** The section's idle and absolute timeouts (default its own: 60 minutes, 12 hours). */
  timeouts?: { idleMs: number | false, absoluteMs: number | false }
  /** How long "Keep me signed in" remembers a device, in milliseconds (default the section's 30 days); false: off. */
  rememberMeMs?: number | false
  /**
   * Sign in with the school's account too (docs/oidc.md): an OpenID provider's issuer and the client it
   * registered for this site, and the Google Workspace domains allowed (hd). Needs baseUrl.
   */
  oidc?: { issuer: string, clientId: string, clientSecret?: string, allowedDomains?: string[] }
  /**
   * "Forgotten your password?" (on with baseUrl, which the link needs): SMTP_URL sends the link through
   * nodemailer; without it the link is logged (examples/reset-mail.ts).
   */
  resetMail?: ResetMailSettings
  /**
   * The language switch on every page (examples/language.ts): default on. Its layout wraps the built-in
   * one, so the section renders each category page rather than keeping its cached copy.
   */
  languageSwitch?: boolean
  /** More options for the resources section (the bench turns the per-address sign-in limit off). */
  sectionOptions?: Partial<FastifySchoolsResourcesOptions>
}

/** The example site: cookie, session and the resources section, plus a home page that points to it. */
export async function buildApp (config: ExampleConfig): Promise<FastifyInstance> {
  const requestTimeout = config.requestTimeoutMs ?? 30_000
  const app = Fastify({
    logger: config.logger ?? false,
    trustProxy: config.trustProxy,
    // Slow clients (a body trickled a byte at a time) are cut off rather than holding a socket forever.
    requestTimeout,
    connectionTimeout: config.connectionTimeoutMs ?? 60_000,
    // Node looks for requests past requestTimeout only every connectionsCheckingInterval (30 s by
    // default: a 30 s timeout cut slow clients at up to 60 s); a tenth of the timeout keeps it close.
    http: { connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.round(requestTimeout / 10))) },
    // While closing, requests on connections already accepted are answered, not given Fastify's bare 503
    // (which has no Retry-After); the answers close their connections (examples/server.ts).
    return503OnClosing: false
  })
  // Node's headersTimeout must not exceed requestTimeout.
  app.server.headersTimeout = Math.min(app.server.headersTimeout, requestTimeout)
  auditLog(app)
  if (config.metrics === true) registerMetrics(app)
  const https = config.baseUrl?.startsWith('https:') === true
  const { authenticate, findMember, findByEmail, setPassword } = await demoDirectory({ email: config.demoEmail, password: config.demoPassword }, config.demoParent)

  const redis = config.redis
  const prefix = redis?.prefix ?? 'schools-resources:'
  const timeoutMs = redis?.timeoutMs
  // A sign-in is answered only once that many replicas have its session (REDIS_WAIT_REPLICAS).
  const waitFor = (replicas = 0) => replicas > 0 ? { waitForReplicas: { replicas, timeoutMs: 1000 } } : {}
  const maxAge = config.sessionMaxAge ?? 8 * 60 * 60 * 1000

  // Store failures on the host's own routes get the same clear 503 as the section's.
  app.setErrorHandler(storeErrorHandler)
  // A secret of its own (derived from the session's) signs the sign-in forms' CSRF cookie.
  await app.register(fastifyCookie, { secret: createHash('sha256').update(`csrf-cookie:${config.sessionSecret}`).digest('base64url') })
  // Anonymous category requests (no session cookie) get their login redirect before @fastify/session
  // builds a session only to throw it away; everything else, members included, takes the normal path
  // through every hook. Registered between the cookie and the session plugins.
  await app.register(anonymousShortCircuit)
  const store = redis === undefined ? config.sessionStore : new RedisSessionStore(redis.client, { prefix: `${prefix}sess:`, timeoutMs, ...waitFor(redis.waitForReplicas), log: app.log })
  await registerSessionPlugin(app, config.sessionPlugin ?? 'session', { secret: config.sessionSecret, store, https, maxAge })
  // Pages in the browser's language, or the one chosen with the switch on each page (a `lang` cookie).
  const languages = config.languageSwitch === false ? undefined : languageSwitch(app, https)
  const section: FastifySchoolsResourcesOptions = {
    catalog: new InMemoryCatalog(demoCatalog),
    // Three resources are files of the site's own (two PDFs and an image), served to members who may see their category.
    files: config.filesDir === undefined ? demoFiles : { root: config.filesDir },
    authenticate,
    // The session keeps the member's id; each request loads the member (cached 5 s per instance), so a
    // leaver or a removed group takes effect at once (docs/sign-in.md#findmember).
    findMember,
    // The sign-in limits keep the section's defaults, chosen for a school whose staff all sign in from
    // one address (docs/example-server.md). The password checks (scrypt on libuv's thread pool) run two
    // at once, so that a burst of sign-ins leaves the pool's other threads to the downloads, and about
    // 10 s of them may wait (examples/demo-member.ts).
    passwordChecks: { concurrent: PASSWORD_CHECKS_AT_ONCE, waiting: PASSWORD_CHECKS_WAITING },
    baseUrl: config.baseUrl,
    ...(config.oidc === undefined
      ? {}
      : {
          oidc: {
            providers: [{ id: 'school', label: 'your school account', ...config.oidc }],
            // The demo's members by the address the provider vouches for: the teacher's and the parent's.
            resolveMember: async (claims) => claims.email_verified === true ? await findByEmail(claims.email) : null
          }
        }),
    siteName: 'Riverside School',
    ...(languages === undefined ? {} : { locale: languages.locale, views: languages.views }),
    // IDLE_TIMEOUT_MS and ABSOLUTE_TIMEOUT_MS; "Sign out on all devices" counts in the lockout's store
    // (Redis when there is one), so a leaver is signed out on every instance (docs/session-lifecycle.md).
    ...(config.timeouts === undefined ? {} : { timeouts: config.timeouts }),
    // REMEMBER_ME_MS: "Keep me signed in on this device"; its tokens in Redis when there is one, so a
    // remembered device is known to every instance and through a restart.
    rememberMe: config.rememberMeMs === false
      ? false
      : {
          ...(config.rememberMeMs === undefined ? {} : { maxAgeMs: config.rememberMeMs }),
          ...(redis === undefined ? {} : { store: new RedisTokenStore(redis.client, { prefix: `${prefix}tokens:`, timeoutMs }) })
        },
    // Every anonymous visitor to a category raises the redirect-conflict warning (the legacy behaviour);
    // the log gets the first in full and then a count a minute, not a line per visitor. `npm start` runs
    // Node with --disable-warning=FST_SR_REDIRECT_CONFLICT so that stderr does not get one either.
    conflictLog: { summaryIntervalMs: 60_000 },
    lockout: {
      // The failure counts of the lockout and the per-address limit, shared by every instance in Redis.
      ...(redis === undefined ? {} : { store: new RedisAttemptStore(redis.client, { prefix: `${prefix}attempts:`, timeoutMs }) }),
      // Signs the device cookies of browsers that signed in before; derived from the session secret, so
      // every instance has the same key.
      deviceSecret: createHash('sha256').update(`device-cookie:${config.sessionSecret}`).digest('base64url')
    },
    // "Forgotten your password?" at /Security/lostpassword: the link needs the site's own address, so only
    // with BASE_URL. Its records in Redis when there is one, under a prefix of their own (a new link ends
    // the member's older ones there); its limits count in the lockout's store.
    ...(config.baseUrl === undefined
      ? {}
      : {
          passwordReset: {
            findMemberByEmail: findByEmail,
            setPassword,
            sendResetEmail: resetMailer(config.resetMail ?? {}, 'Riverside School'),
            ...(redis === undefined ? {} : { store: new RedisTokenStore(redis.client, { prefix: `${prefix}reset:`, timeoutMs }) })
          }
        })
  }
  // The tests' overrides may turn signIn off, which the options' type (a union on signIn) cannot follow
  // through a spread of a Partial: the options above are checked whole, the merge is asserted.
  await app.register(schoolsResources, { ...section, ...config.sectionOptions } as FastifySchoolsResourcesOptions)

  // /healthz and /readyz for a load balancer, /storez for monitoring (docs/health.md: this file is its recipe).
  // The example's clients are node-redis ones (examples/redis.ts): a client, a Sentinel or a Cluster client.
  healthRoutes(app, { draining: config.draining ?? (() => false), store: redis?.client as Store | undefined, timeoutMs, keyPrefix: `${prefix}storez:` })
  app.get('/', async (_request, reply) => reply.redirect('/schools/resources/'))
  // A page of the site's own, outside the section, behind the same guard: staff only. Visitors get the
  // login redirect back to it, other members the 403 page.
  app.get('/staff/noticeboard', { config: { membersOnly: { groups: ['staff'], title: 'the staff noticeboard' } } }, async (request, reply) => {
    // The member the guard let in (with findMember, as the directory has them now): never read from the session.
    const member = request.schoolsMember!
    reply.header('cache-control', 'private, no-store').type('text/html; charset=utf-8')
    return String(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Staff noticeboard | Riverside School</title><link rel="stylesheet" href="/schools/resources/assets/resources.css"></head>
<body><main id="main" class="site-main"><h1>Staff noticeboard</h1>
<p class="lead">Signed in as <strong>${member.name}</strong>.</p>
<ul><li>Staff meeting on Thursday at 3:30 in the library.</li><li>Semester reports are due in week 9.</li></ul>
<p><a href="/schools/resources/">All resources</a></p></main></body></html>
`)
  })
  return app
}
