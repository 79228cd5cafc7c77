import type { FastifyInstance, FastifyRequest } from 'fastify'
import { safeBackUrl } from 'fastify-schools-resources'

// The host's login (signIn: false): `signIn` checks the form and starts the host's own session.
export function hostLogin (app: FastifyInstance, site: string, signIn: (request: FastifyRequest) => Promise<boolean>) {
  app.post('/Security/login', async (request, reply) => {
    if (!await signIn(request)) return reply.code(401).send('The email address or password is incorrect.')
    const { BackURL } = request.query as { BackURL?: unknown }
    // An address on this site, made absolute; anything else (https://evil.example, //evil.example) is undefined.
    return reply.redirect(safeBackUrl(BackURL, site) ?? `${site}/schools/resources/`, 303)
  })
}
