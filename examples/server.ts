import { randomBytes } from 'node:crypto'
import { buildApp } from './app.js'

const env = process.env
const port = Number(env.PORT ?? 3000)
const host = env.HOST ?? '127.0.0.1'

let sessionSecret = env.SESSION_SECRET
if (sessionSecret === undefined || sessionSecret === '') {
  sessionSecret = randomBytes(32).toString('base64url')
  process.emitWarning('SESSION_SECRET is not set: using a random secret for this process only, so sessions end when it stops.', {
    type: 'UserWarning',
    code: 'EXAMPLE_NO_SESSION_SECRET'
  })
}

const demoEmail = env.DEMO_EMAIL ?? 'teacher@example.org'
const demoPassword = env.DEMO_PASSWORD ?? 'correct horse battery staple'

async function main (): Promise<void> {
  const app = await buildApp({
    baseUrl: env.BASE_URL === '' ? undefined : env.BASE_URL,
    sessionSecret: sessionSecret!,
    demoEmail,
    demoPassword,
    logger: { level: env.LOG_LEVEL ?? 'info' }
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down')
      app.close().then(() => process.exit(0), () => process.exit(1))
    })
  }
  const address = await app.listen({ port, host })
  app.log.info(`Resources section: ${address}/schools/resources/ (sign in as ${demoEmail})`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
