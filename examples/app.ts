import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, {
  InMemoryCatalog,
  RedisAttemptStore,
  RedisSessionStore,
  redisRateLimitStore,
  storeErrorHandler,
  type RedisCommandClient
} from 'fastify-schools-resources'
import { demoCatalog } from './demo-catalog.js'
import { demoDirectory } from './demo-member.js'

export interface ExampleConfig {
  baseUrl?: string
  sessionSecret: string
  demoEmail: string
  demoPassword: string
  /** Session cookie lifetime in milliseconds. */
  sessionMaxAge?: number
  logger?: FastifyServerOptions['logger']
  /**
   * Share sessions, lockout counts and the login rate limit between instances through Redis: a connected
   * node-redis client, and the prefix of every key (default `schools-resources:`). Unset: in memory.
   */
  redis?: { client: RedisCommandClient, prefix?: string, timeoutMs?: number }
}

/** The example site: cookie, session and the resources section, plus a home page that points to it. */
export async function buildApp (config: ExampleConfig): Promise<FastifyInstance> {
  const app = Fastify({ logger: config.logger ?? false })
  const { authenticate } = await demoDirectory(config.demoEmail, config.demoPassword)

  const redis = config.redis
  const prefix = redis?.prefix ?? 'schools-resources:'
  const timeoutMs = redis?.timeoutMs
  const maxAge = config.sessionMaxAge ?? 8 * 60 * 60 * 1000

  // Store failures on the host's own routes get the same clear 503 as the section's.
  app.setErrorHandler(storeErrorHandler)
  await app.register(fastifyCookie)
  await app.register(fastifySession, {
    secret: config.sessionSecret,
    // In Redis each session lives as long as its cookie (maxAge), then expires there too.
    ...(redis === undefined ? {} : { store: new RedisSessionStore(redis.client, { prefix: `${prefix}sess:`, timeoutMs }) }),
    // Anonymous visitors get no session until something is stored in it.
    saveUninitialized: false,
    cookie: {
      // Secure over https, plain over http, so the demo works on localhost.
      secure: 'auto',
      httpOnly: true,
      sameSite: 'lax',
      maxAge
    }
  })
  await app.register(schoolsResources, {
    catalog: new InMemoryCatalog(demoCatalog),
    authenticate,
    baseUrl: config.baseUrl,
    siteName: 'Riverside School',
    ...(redis === undefined
      ? {}
      : {
          lockout: { store: new RedisAttemptStore(redis.client, { prefix: `${prefix}attempts:`, timeoutMs }) },
          loginRateLimit: { store: redisRateLimitStore(redis.client, { prefix: `${prefix}rate-limit:`, timeoutMs }) }
        })
  })

  app.get('/', async (_request, reply) => reply.redirect('/schools/resources/'))
  return app
}
