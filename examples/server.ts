import { randomBytes } from 'node:crypto'
import { buildApp } from './app.js'
import { connectRedis, createRedisClient, redact, watchRedis, type RedisClient } from './redis.js'
import { readSettings, type ExampleSettings } from './settings.js'

let settings: ExampleSettings
try {
  settings = readSettings(process.env)
} catch (err) {
  console.error(`Not starting: ${(err as Error).message}`)
  process.exit(1)
}
const { port, host, logLevel, demoEmail, demoPassword } = settings

let sessionSecret = settings.sessionSecret
if (sessionSecret === undefined) {
  sessionSecret = randomBytes(32).toString('base64url')
  process.emitWarning('SESSION_SECRET is not set: using a random secret for this process only, so sessions end when it stops.', {
    type: 'UserWarning',
    code: 'EXAMPLE_NO_SESSION_SECRET'
  })
}

/** How long a stuck shutdown may take before the process gives up and exits non-zero. */
const SHUTDOWN_DEADLINE_MS = 10_000

async function main (): Promise<void> {
  const redisUrl = settings.redisUrl
  const redis: RedisClient | undefined = redisUrl === undefined ? undefined : createRedisClient(redisUrl)
  const app = await buildApp({
    baseUrl: settings.baseUrl,
    sessionSecret: sessionSecret!,
    demoEmail,
    demoPassword,
    logger: { level: logLevel },
    ...(redis === undefined
      ? {}
      : { redis: { client: redis, prefix: settings.redisPrefix, timeoutMs: settings.redisTimeoutMs } })
  })
  if (redis !== undefined) {
    watchRedis(redis, redisUrl!, app.log)
    // Before listening: a server without its session store must not serve anything.
    try {
      await connectRedis(redis, redisUrl!, settings.redisConnectTimeoutMs, app.log)
    } catch (err) {
      await app.close()
      throw err
    }
    // Runs after the server has stopped accepting and the requests in flight are done.
    app.addHook('onClose', async () => {
      await redis.close()
      app.log.info('Redis connection closed')
    })
  }
  // While shutting down, answers close their keep-alive connections, so that close() need not wait
  // for clients to hang up.
  let closing = false
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      closing = true
      app.log.info({ signal }, 'shutting down: no new connections; finishing requests in flight')
      setTimeout(() => {
        app.log.error(`shutdown took longer than ${SHUTDOWN_DEADLINE_MS} ms; exiting`)
        process.exit(1)
      }, SHUTDOWN_DEADLINE_MS).unref()
      app.close().then(() => process.exit(0), () => process.exit(1))
    })
  }
  const address = await app.listen({ port, host })
  const where = `Resources section: ${address}/schools/resources/ (sign in as ${demoEmail})` +
    (redisUrl === undefined ? '; sessions in memory (set REDIS_URL to share them between instances)' : `; sessions in Redis at ${redact(redisUrl)}`)
  // Always said, whatever LOG_LEVEL hides: with PORT=0 this is the only place the port is told.
  if (['info', 'debug', 'trace'].includes(logLevel)) app.log.info(where)
  else console.log(where)
}

main().catch((err) => {
  console.error(`Not starting: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
