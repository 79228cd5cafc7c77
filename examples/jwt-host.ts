// A host with its own authentication and no session at all: @fastify/jwt verifies a Bearer token, and the
// section reads the member from it (getMember) with signIn off. No @fastify/cookie, no session plugin.
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import fastifyJwt from '@fastify/jwt'
import schoolsResources, { InMemoryCatalog, type Member } from 'fastify-schools-resources'
import { demoCatalog, demoFiles } from './demo-catalog.js'

/** What the host puts in its tokens: the member's id as `sub`, the name and groups the section needs. */
export interface MemberClaims {
  sub: string
  name: string
  groups?: string[]
}

/** The member a verified token names, or null for a visitor (no token, a bad one, an expired one). */
async function memberFromToken (request: FastifyRequest): Promise<Member | null> {
  if (request.headers.authorization === undefined) return null
  try {
    const claims = await request.jwtVerify<MemberClaims>()
    return { id: claims.sub, name: claims.name, groups: claims.groups ?? [] }
  } catch {
    return null
  }
}

export async function buildJwtHost (secret: string): Promise<FastifyInstance> {
  const app = Fastify()
  // Short-lived tokens: the section sees a removed group when the host's next token leaves it out.
  await app.register(fastifyJwt, { secret, sign: { expiresIn: '15m' } })
  await app.register(schoolsResources, {
    catalog: new InMemoryCatalog(demoCatalog),
    files: demoFiles,
    signIn: false,
    getMember: memberFromToken,
    // The host's own login page, which checks BackURL with safeBackUrl before it sends the member back.
    loginPath: '/login'
  })
  return app
}
