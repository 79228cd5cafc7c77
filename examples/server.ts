import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { buildApp } from './app.js'
import { readSettings, type ExampleSettings } from './settings.js'

let settings: ExampleSettings
try {
  settings = readSettings(process.env)
} catch (err) {
  console.error(`Not starting: ${(err as Error).message}`)
  process.exit(1)
}
const { port, host, logLevel, demoEmail, demoPassword, demoParentEmail, demoParentPassword } = settings

let sessionSecret = settings.sessionSecret
if (sessionSecret === undefined) {
  sessionSecret = randomBytes(32).toString('base64url')
  process.emitWarning('SESSION_SECRET is not set: using a random secret for this process only, so sessions end when it stops.', {
    type: 'UserWarning',
    code: 'EXAMPLE_NO_SESSION_SECRET'
  })
}

/**
 * Into a shutdown the server keeps accepting until no connection has arrived for DRAIN_QUIET_MS (at most
 * DRAIN_MAX_MS): closing the listener resets the connections the kernel has queued but Node has not
 * accepted yet, and Node's close() drops accepted ones whose request it has not read yet.
 */
const DRAIN_QUIET_MS = 100
const DRAIN_MAX_MS = 2000
/** How long closing Redis may wait for its replies before the connection is dropped. */
const REDIS_CLOSE_MS = 2000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function main (): Promise<void> {
  // `redis` is loaded only when one is configured (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES).
  const hasRedis = settings.redisUrl !== undefined || settings.redisSentinels !== undefined || settings.redisClusterNodes !== undefined
  const { connectRedis, redact, redisFromSettings, watchRedis } = hasRedis ? await import('./redis.js') : {} as Partial<typeof import('./redis.js')>
  const { where: redisUrl, client: redis } = redisFromSettings?.(settings) ?? {}
  // True from SIGTERM: /readyz answers 503 and every answer closes its connection.
  let closing = false
  // True once the listener is closing (after the pause and the drain).
  let stopping = false
  const app = await buildApp({
    baseUrl: settings.baseUrl,
    sessionSecret: sessionSecret!,
    sessionPlugin: settings.sessionPlugin,
    demoEmail,
    demoPassword,
    demoParent: { email: demoParentEmail, password: demoParentPassword },
    logger: { level: logLevel },
    trustProxy: settings.trustProxy,
    requestTimeoutMs: settings.requestTimeoutMs,
    connectionTimeoutMs: settings.connectionTimeoutMs,
    metrics: process.env.METRICS === '1',
    draining: () => closing,
    filesDir: settings.filesDir,
    timeouts: settings.timeouts,
    rememberMeMs: settings.rememberMeMs,
    oidc: settings.oidc,
    resetMail: { ...(settings.smtpUrl === undefined ? {} : { smtpUrl: settings.smtpUrl }), ...(settings.smtpFrom === undefined ? {} : { from: settings.smtpFrom }) },
    ...(redis === undefined
      ? {}
      : { redis: { client: redis, prefix: settings.redisPrefix, timeoutMs: settings.redisTimeoutMs, waitForReplicas: settings.redisWaitReplicas } })
  })
  if (redis !== undefined) {
    watchRedis!(redis, redisUrl!, app.log)
    // Before listening: a server without its session store must not serve anything.
    try {
      await connectRedis!(redis, redisUrl!, settings.redisConnectTimeoutMs, app.log)
    } catch (err) {
      await app.close()
      throw err
    }
    // Runs after the server has stopped accepting and the requests in flight are done.
    // A stalled Redis never answers close(): give it REDIS_CLOSE_MS, then drop the connection.
    app.addHook('onClose', async () => {
      const closed = await Promise.race([redis.close().then(() => true, () => false), sleep(REDIS_CLOSE_MS).then(() => false)])
      if (closed) {
        app.log.info('Redis connection closed')
      } else {
        redis.destroy()
        app.log.warn(`Redis did not confirm the close within ${REDIS_CLOSE_MS} ms; connection dropped`)
      }
    })
  }
  // While shutting down, answers close their keep-alive connections, so that close() need not wait
  // for clients to hang up.
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
  // Connections accepted whose first request has not been read yet: close() would drop them as idle.
  const unread = new Set<Socket>()
  // Responses not finished yet: at the deadline, those already sending (downloads) are cut, and any
  // other means the shutdown hangs.
  const inFlight = new Set<ServerResponse>()
  let lastConnection = 0
  app.server.on('connection', (socket: Socket) => {
    lastConnection = Date.now()
    unread.add(socket)
    socket.once('close', () => unread.delete(socket))
  })
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    unread.delete(request.socket)
    inFlight.add(response)
    response.once('close', () => {
      inFlight.delete(response)
      // An answer begun before the signal kept its connection alive; done now, that idle connection
      // would hold close() until the client (a load balancer's pool) hangs up, past the deadline.
      if (stopping) setImmediate(() => app.server.closeIdleConnections())
    })
  })
  async function drain (): Promise<void> {
    const started = Date.now()
    while ((unread.size > 0 || Date.now() - lastConnection < DRAIN_QUIET_MS) && Date.now() - started < DRAIN_MAX_MS) await sleep(10)
  }
  const { shutdownReadyPauseMs: pauseMs, shutdownDeadlineMs: deadlineMs } = settings
  /**
   * At the deadline: if every request still open is a download already sending, they are cut (logged
   * with how many) and the exit stays 0; a request not answered yet, or a close that hangs without
   * any, is a stuck shutdown: exit 1.
   */
  function atDeadline (): void {
    const sending = [...inFlight].filter((response) => response.headersSent)
    const unanswered = inFlight.size - sending.length
    if (sending.length === 0 || unanswered > 0) {
      app.log.error({ unanswered }, `shutdown took longer than ${deadlineMs} ms (SHUTDOWN_DEADLINE_MS); exiting`)
      process.exit(1)
    }
    app.log.warn({ cut: sending.length }, `shutdown deadline (${deadlineMs} ms, SHUTDOWN_DEADLINE_MS): cutting ${sending.length} download${sending.length === 1 ? '' : 's'} still sending`)
    for (const response of sending) response.destroy()
    setTimeout(() => {
      app.log.error(`shutdown still not finished ${REDIS_CLOSE_MS + 1000} ms after the deadline; exiting`)
      process.exit(1)
    }, REDIS_CLOSE_MS + 1000).unref()
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      closing = true
      app.log.info({ signal, pauseMs, deadlineMs }, pauseMs > 0
        ? `shutting down: /readyz answers 503; serving for ${pauseMs} ms (SHUTDOWN_READY_PAUSE_MS), then answering the connections already made, then no new ones`
        : 'shutting down: answering the connections already made, then no new ones')
      setTimeout(atDeadline, deadlineMs).unref()
      // Without a pause, no timer before the drain: the event loop would read, and serve, a request
      // sent meanwhile on a kept-alive connection that close() is about to shut as idle.
      const paused = pauseMs > 0 ? sleep(pauseMs) : Promise.resolve()
      paused.then(drain).then(() => {
        stopping = true
        return app.close()
      }).then(() => {
        app.log.info('shut down')
        process.exit(0)
      }, () => process.exit(1))
    })
  }
  const address = await app.listen({ port, host })
  const where = `Resources section: ${address}/schools/resources/ (sign in as ${demoEmail}, staff, or ${demoParentEmail}, not staff)` +
    (redisUrl === undefined ? '; sessions in memory (set REDIS_URL to share them between instances)' : `; sessions in Redis at ${redact!(redisUrl)}`)
  // Always said, whatever LOG_LEVEL hides: with PORT=0 this is the only place the port is told.
  if (['info', 'debug', 'trace'].includes(logLevel)) app.log.info(where)
  else console.log(where)
}

main().catch((err) => {
  console.error(`Not starting: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
