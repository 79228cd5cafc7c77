// The reference's server, shared with the floor: Fastify + @fastify/cookie + @fastify/session (memory
// store, saveUninitialized: false, rolling: false), an onRequest hook that redirects anonymous visitors,
// the category route answering a member through `send`, and the bench-only sign-in.
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import { answerStats, categoryRoute, host, loginUrl, member, port, ready, secret } from './common.mjs'

/** Starts the server; `send(reply, member, slug)` answers a signed-in member's category page. */
export async function sessionServer ({ logger, send }) {
  const sessions = new Map()
  const app = Fastify({ logger })
  await app.register(fastifyCookie)
  await app.register(fastifySession, {
    secret,
    store: new fastifySession.MemoryStore(sessions),
    saveUninitialized: false,
    rolling: false,
    cookie: { secure: 'auto', httpOnly: true, sameSite: 'lax', maxAge: 8 * 60 * 60 * 1000 }
  })
  app.get(`${categoryRoute}:slug/`, {
    onRequest: async (request, reply) => {
      if (request.session.get('member') === undefined) return reply.redirect(loginUrl(request.url))
    }
  }, async (request, reply) => send(reply, request.session.get('member'), request.params.slug))
  // Bench-only sign-in: no password check (login is not what is compared), the form's body not read.
  app.addContentTypeParser('application/x-www-form-urlencoded', (_request, _payload, done) => done(null, {}))
  app.post('/Security/login', async (request, reply) => {
    await request.session.regenerate()
    request.session.set('member', member)
    return reply.redirect('/schools/resources/', 303)
  })
  answerStats(() => ({ sessions: sessions.size }))
  ready(await app.listen({ port, host }))
}
