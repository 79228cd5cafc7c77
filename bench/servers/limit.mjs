// The limit: bare Fastify 5, no cookie or session plugin. Without a Cookie header the category route
// redirects to the login page; with one it returns a small HTML page.
import Fastify from 'fastify'
import { answerStats, categoryRoute, host, loginUrl, port, ready, smallPage } from './common.mjs'

const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn' } })
app.get(`${categoryRoute}:slug/`, async (request, reply) => {
  if (request.headers.cookie === undefined) return reply.redirect(loginUrl(request.url))
  return reply.type('text/html; charset=utf-8').send(smallPage('Demo Teacher', request.params.slug))
})
// "Signing in" to the limit just hands out a cookie: it has no session.
// Bench-only: the sign-in form's body is not read.
app.addContentTypeParser('application/x-www-form-urlencoded', (_request, _payload, done) => done(null, {}))
app.post('/Security/login', async (_request, reply) => reply.header('set-cookie', 'sessionId=x; Path=/; HttpOnly').redirect('/schools/resources/', 303))
answerStats()
ready(await app.listen({ port, host }))
