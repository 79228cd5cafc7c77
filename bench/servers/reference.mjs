// The straightforward reference: Fastify + @fastify/cookie + @fastify/session (memory store,
// saveUninitialized: false, rolling: false) and an onRequest hook that redirects anonymous visitors
// (session-server.mjs), answering a member with the small page.
import { smallPage } from './common.mjs'
import { sessionServer } from './session-server.mjs'

await sessionServer({
  logger: { level: process.env.LOG_LEVEL ?? 'warn' },
  send: (reply, member, slug) => reply.type('text/html; charset=utf-8').send(smallPage(member.name, slug))
})
