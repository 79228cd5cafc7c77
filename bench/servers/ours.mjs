// Our example server (examples/app.ts, built to dist/), with its real catalog, pages and sign-in, and a
// memory store the runner can count over IPC. Start-up hashes the demo password with scrypt.
// OURS_VARIANT: the same server without what later steps of the signed-in breakdown add
// (bench/lib/servers.mjs BREAKDOWN); OURS_DIST: another build of this repository (--extra name=dir).
// First, as older builds' examples/server.ts loaded it (bench/servers/next-tick-shape.mjs).
import { dist } from './next-tick-shape.mjs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import fastifySession from '@fastify/session'
import escapeHtml from 'escape-html'
import { answerStats, baseUrl, host, member, port, ready, secret, smallPage } from './common.mjs'

const { buildApp } = await import(`${dist}/examples/app.js`)
// How many password checks the example runs at once (named HASH_THREADS in builds before issue 35).
const { PASSWORD_CHECKS_AT_ONCE, HASH_THREADS } = await import(`${dist}/examples/demo-member.js`)

// The reference's small page, rendered through the section's views (escaped as a view must).
const smallPageViews = {
  layout: (page) => page.body,
  category: ({ category }, ctx) => ({ title: category.slug, body: smallPage(escapeHtml(ctx.member.name), escapeHtml(category.slug)) })
}
// Each variant leaves out one more of: the CSRF token (no sign-in routes, so no logout form), the
// security headers, our category page. Only section options change; the session wiring is the example's.
const VARIANTS = {
  'no-csrf': { signIn: false },
  'no-headers': { signIn: false, helmet: false },
  'small-page': { signIn: false, helmet: false, views: smallPageViews }
}
const variant = process.env.OURS_VARIANT
if (variant !== undefined && VARIANTS[variant] === undefined) throw new Error(`OURS_VARIANT=${variant}: not one of ${Object.keys(VARIANTS).join(', ')}`)

const sessions = new Map()
const app = await buildApp({
  baseUrl,
  // An https site behind a TLS proxy, as the example runs in production: the runner's sign-in says
  // X-Forwarded-Proto: https, so that the Secure session cookie is set over loopback http.
  trustProxy: true,
  sessionSecret: secret,
  demoEmail: 'teacher@example.org',
  demoPassword: 'correct horse battery staple',
  sessionStore: new fastifySession.MemoryStore(sessions),
  // The example's language switch wraps the layout, and a host's layout is rendered on every request
  // (the section caches only its own), so the pages compared with the peers and with older builds are
  // the section's own: OURS_LANGUAGE_SWITCH=1 measures the example as it ships.
  languageSwitch: process.env.OURS_LANGUAGE_SWITCH === '1',
  sectionOptions: {
    // The login probe signs in continuously from one address to measure the password hash; the
    // per-address sign-in limit (50 per 15 minutes) would refuse it, so it is off here, except for the
    // password spray (OURS_LIMITS=example), which measures the example's own limits.
    ...(process.env.OURS_LIMITS === 'example' ? {} : { loginRateLimit: false }),
    // OURS_PASSWORD_WAITING (the spray's --spray-waiting): a longer or shorter password line than the example's.
    ...(process.env.OURS_PASSWORD_WAITING === undefined ? {} : { passwordChecks: { concurrent: PASSWORD_CHECKS_AT_ONCE ?? HASH_THREADS, waiting: Number(process.env.OURS_PASSWORD_WAITING) } }),
    ...VARIANTS[variant]
  },
  logger: { level: process.env.LOG_LEVEL ?? 'info' }
})
if (variant !== undefined) {
  // Without the section's sign-in routes, the bench signs in as the peers do: no password check (login
  // is not what is compared), the member stored in a fresh session.
  await app.register(async function benchSignIn (scope) {
    scope.addContentTypeParser('application/x-www-form-urlencoded', (_request, _payload, done) => done(null, {}))
    scope.post('/Security/login', async (request, reply) => {
      await request.session.regenerate()
      request.session.set('member', member)
      return reply.redirect('/schools/resources/', 303)
    })
  })
}
// Counts the redirect-conflict warnings raised (also under --disable-warning, which only stops the printing).
let warnings = 0
process.on('warning', (w) => { if (w.code === 'FST_SR_REDIRECT_CONFLICT') warnings++ })
// OURS_MEASURE_LOOP=1 (the login probe and the spray): the event loop's delay, and the server's own time
// for downloads and sign-ins. Off for the load rounds, as the peers have neither: the histogram's 1 ms
// timer alone kept an idle server at 3 % of a core.
const measureLoop = process.env.OURS_MEASURE_LOOP === '1'
const eld = monitorEventLoopDelay({ resolution: 1 })
if (measureLoop) eld.enable()
// The time the server itself takes for a download and a sign-in post (from the request's arrival on the
// socket to the answer's last byte handed to the kernel), so that the spray's report can tell the
// server's share of a probe's latency from the client's and the scheduler's.
const serverMs = { download: [], signIn: [] }
if (measureLoop) {
  app.server.prependListener('request', (req, res) => {
    const kind = req.url.startsWith('/schools/resources/files/') ? 'download' : req.method === 'POST' && req.url.startsWith('/Security/login') && req.headers['x-bench-probe'] === '1' ? 'signIn' : undefined
    if (kind === undefined) return
    const t0 = process.hrtime.bigint()
    res.once('finish', () => { serverMs[kind].push(Number(process.hrtime.bigint() - t0) / 1e6) })
  })
}
function tail (values) {
  const sorted = values.sort((a, b) => a - b)
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]
  return sorted.length === 0 ? undefined : { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted[sorted.length - 1] }
}
answerStats(() => {
  const m = process.memoryUsage()
  const stats = { sessions: sessions.size, warnings, heapUsedMiB: m.heapUsed / 2 ** 20, heapTotalMiB: m.heapTotal / 2 ** 20, externalMiB: m.external / 2 ** 20, arrayBuffersMiB: m.arrayBuffers / 2 ** 20, ...(measureLoop ? { eldP99Ms: eld.percentile(99) / 1e6, eldMaxMs: eld.max / 1e6, eldMeanMs: eld.mean / 1e6 } : {}), serverDownload: tail(serverMs.download), serverSignIn: tail(serverMs.signIn) }
  eld.reset()
  serverMs.download = []
  serverMs.signIn = []
  return stats
})
// SIGTERM closes the app first, as the example server does, so that the last conflict summary is written.
process.removeAllListeners('SIGTERM')
process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
ready(await app.listen({ port, host }))
