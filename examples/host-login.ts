import type { FastifyInstance, FastifyRequest } from 'fastify'
import { safeBackUrl, type Member } from 'fastify-schools-resources'

// The host's login (signIn: false): `check` checks the form; the member goes where the section reads it.
export function hostLogin (app: FastifyInstance, site: string, check: (request: FastifyRequest) => Promise<Member | null>) {
  app.post('/Security/login', async (request, reply) => {
    const member = await check(request)
    if (member === null) return reply.code(401).send('The email address or password is incorrect.')
    await request.session.regenerate() // a new session id: an id planted before sign-in opens nothing after it
    request.session.set('member', member) // the section's sessionKey
    const { BackURL } = request.query as { BackURL?: unknown }
    // An address on this site, made absolute; anything else (https://evil.example, //evil.example) is undefined.
    return reply.redirect(safeBackUrl(BackURL, site) ?? `${site}/schools/resources/`, 303)
  })
}
