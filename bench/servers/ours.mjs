// Our example server (examples/app.ts, built to dist/), with its real catalog, pages and sign-in, and a
// memory store the runner can count over IPC. Start-up hashes the demo password with scrypt.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import fastifySession from '@fastify/session'
import { answerStats, baseUrl, host, port, ready, secret } from './common.mjs'

// OURS_DIST: another build of this repository (bench/run.mjs --extra name=dir), to compare before/after.
const { buildApp } = await import(process.env.OURS_DIST === undefined ? '../../dist/examples/app.js' : `${process.env.OURS_DIST}/dist/examples/app.js`)
const sessions = new Map()
const app = await buildApp({
  baseUrl,
  sessionSecret: secret,
  demoEmail: 'teacher@example.org',
  demoPassword: 'correct horse battery staple',
  sessionStore: new fastifySession.MemoryStore(sessions),
  // The login probe signs in continuously from one address to measure the password hash; the
  // per-address sign-in limit (50 per 15 minutes) would refuse it, so it is off here.
  // OURS_CONFLICT_LOG=each: the plugin's default conflict log instead of the example's summary.
  sectionOptions: { loginRateLimit: false, ...(process.env.OURS_CONFLICT_LOG === 'each' ? { conflictLog: 'each' } : {}) },
  logger: { level: process.env.LOG_LEVEL ?? 'info' }
})
// Counts the redirect-conflict warnings raised (also under --disable-warning, which only stops the printing).
let warnings = 0
process.on('warning', (w) => { if (w.code === 'FST_SR_REDIRECT_CONFLICT') warnings++ })
const eld = monitorEventLoopDelay({ resolution: 1 })
eld.enable()
answerStats(() => {
  const m = process.memoryUsage()
  const stats = { sessions: sessions.size, warnings, heapUsedMiB: m.heapUsed / 2 ** 20, heapTotalMiB: m.heapTotal / 2 ** 20, externalMiB: m.external / 2 ** 20, arrayBuffersMiB: m.arrayBuffers / 2 ** 20, eldP99Ms: eld.percentile(99) / 1e6, eldMaxMs: eld.max / 1e6, eldMeanMs: eld.mean / 1e6 }
  eld.reset()
  return stats
})
// SIGTERM closes the app first, as the example server does, so that the last conflict summary is written.
process.removeAllListeners('SIGTERM')
process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
ready(await app.listen({ port, host }))
