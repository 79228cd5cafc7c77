import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession, { type SessionStore } from '@fastify/session'
import schoolsResources, { anonymousFastPath, CachedSigner, InMemoryCatalog } from 'fastify-schools-resources'
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
  /** Where sessions are kept (default: @fastify/session's memory store). */
  sessionStore?: SessionStore
}

/** The example site: cookie, session and the resources section, plus a home page that points to it. */
export async function buildApp (config: ExampleConfig): Promise<FastifyInstance> {
  const app = Fastify({ logger: config.logger ?? false })
  const { authenticate } = await demoDirectory(config.demoEmail, config.demoPassword)

  await app.register(fastifyCookie)
  // Before the session plugin: answers anonymous category requests before a session is built for them.
  await app.register(anonymousFastPath)
  await app.register(fastifySession, {
    // The same secret, with the HMAC check of a signed-in member's cookie done once, not on every page.
    secret: new CachedSigner(config.sessionSecret),
    store: config.sessionStore,
    // Anonymous visitors get no session until something is stored in it.
    saveUninitialized: false,
    // The cookie and the stored session are written at sign-in only, not again on every page: a
    // session lasts sessionMaxAge from sign-in (a school day), and a page view costs no store write.
    rolling: false,
    cookie: {
      // Secure over https, plain over http, so the demo works on localhost.
      secure: 'auto',
      httpOnly: true,
      sameSite: 'lax',
      maxAge: config.sessionMaxAge ?? 8 * 60 * 60 * 1000
    }
  })
  await app.register(schoolsResources, {
    catalog: new InMemoryCatalog(demoCatalog),
    authenticate,
    baseUrl: config.baseUrl,
    siteName: 'Riverside School'
  })

  app.get('/', async (_request, reply) => reply.redirect('/schools/resources/'))
  return app
}
