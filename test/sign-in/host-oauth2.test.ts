// Issue 36, "done when": a host with @fastify/oauth2 and its own callback, ending in reply.signInMember,
// against oidc-provider, as docs/oidc.md#your-own-callback shows it. The section does the rest: the new
// session, the member stored, the event, the checked return address.
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import oauthPlugin, { type OAuth2Namespace } from '@fastify/oauth2'
import schoolsResources, { InMemoryCatalog, type Member } from '../../lib/index.js'
import { AsyncStore } from '../helpers/async-store.js'
import { BASE_URL, SECRET } from '../helpers/app.js'
import { atProvider, callbackUrl, CLIENT_ID, CLIENT_SECRET, cookiesOf, startIdp, type Idp } from '../helpers/oidc.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'

declare module 'fastify' {
  interface FastifyInstance {
    schoolAccount: OAuth2Namespace
  }
}

const MATHS = '/schools/resources/resources/maths/'
const CALLBACK = '/auth/school/callback'

let idp: Idp
t.before(async () => {
  idp = await startIdp({ ada: { email: 'ada@school.example', email_verified: true, name: 'Ada Lovelace' } }, [callbackUrl('school'), `${BASE_URL}${CALLBACK}`])
})
t.teardown(() => idp.close())

async function hostApp (): Promise<{ app: FastifyInstance, store: AsyncStore }> {
  const store = new AsyncStore()
  const app = Fastify()
  await app.register(fastifyCookie, { secret: SECRET })
  await app.register(fastifySession, { secret: SECRET, store, saveUninitialized: false, cookie: { secure: false } })
  // The host's own sign-in: the section's password form off, its members read from the session.
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, signIn: false, baseUrl: BASE_URL })
  await app.register(oauthPlugin, {
    name: 'schoolAccount',
    scope: ['openid', 'email', 'profile'],
    credentials: { client: { id: CLIENT_ID, secret: CLIENT_SECRET } },
    discovery: { issuer: idp.issuer },
    callbackUri: `${BASE_URL}${CALLBACK}`,
    pkce: 'S256'
  })
  // The section sends visitors to /Security/login?BackURL=…: the host's start keeps BackURL in a cookie of its own.
  app.get('/Security/login', async (request, reply) => {
    const back = (request.query as { BackURL?: string }).BackURL
    if (back !== undefined) reply.setCookie('return-to', back, { path: '/auth/', httpOnly: true, sameSite: 'lax', signed: true, maxAge: 600 })
    return reply.redirect(await app.schoolAccount.generateAuthorizationUri(request, reply))
  })
  app.get(CALLBACK, async (request, reply) => {
    const { token } = await app.schoolAccount.getAccessTokenFromAuthorizationCodeFlow(request, reply)
    const info = await app.schoolAccount.userinfo(token.access_token) as { email?: string, email_verified?: boolean, name?: string }
    if (info.email_verified !== true || info.email !== 'ada@school.example') return reply.code(403).send('No member account for this address.')
    const member: Member = { id: 'm-ada', name: info.name ?? info.email, email: info.email }
    const back = request.unsignCookie(request.cookies['return-to'] ?? '')
    reply.clearCookie('return-to', { path: '/auth/' })
    return reply.signInMember(member, { backUrl: back.valid ? back.value ?? undefined : undefined, method: 'school-oauth' })
  })
  await app.ready()
  return { app, store }
}

t.test('@fastify/oauth2, its own callback, reply.signInMember: back on the page asked for, signed in', async (t) => {
  const { app, store } = await hostApp()
  t.teardown(() => app.close())
  const anonymous = await app.inject(MATHS)
  t.equal(anonymous.statusCode, 302)
  const start = await app.inject(anonymous.headers.location as string)
  t.equal(start.statusCode, 302)
  const back = await atProvider(start.headers.location as string, 'ada')
  t.equal(back.pathname, CALLBACK)
  const callback = await app.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: cookiesOf(start) } })
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${BASE_URL}${MATHS}`)
  t.equal(store.sessions.size, 1)
  const page = await app.inject({ url: MATHS, headers: { cookie: cookiesOf(callback) } })
  t.equal(page.statusCode, 200)
  t.match(page.body, 'Ada Lovelace')
})
