// A host site whose own layout is an Eta template rendered through @fastify/view: the section's page
// bodies inside the school's header and footer. @fastify/view renders asynchronously, so the layout
// returns a promise, which the section awaits. The layout loads a script and images of the host's, so
// the section's Content-Security-Policy is widened for them (docs/pages-and-views.md).
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifyView from '@fastify/view'
import { Eta } from 'eta'
import schoolsResources, { CONTENT_SECURITY_POLICY, InMemoryCatalog } from 'fastify-schools-resources'
import { demoCatalog, demoFiles } from './demo-catalog.js'
import { demoDirectory } from './demo-member.js'

export interface ViewEngineConfig {
  sessionSecret: string
  demoEmail: string
  demoPassword: string
  baseUrl?: string
  /** Where the Eta templates are (default: examples/views next to this file). */
  templates?: string
}

export async function buildViewEngineApp (config: ViewEngineConfig): Promise<FastifyInstance> {
  const app = Fastify()
  const { authenticate } = await demoDirectory({ email: config.demoEmail, password: config.demoPassword })
  await app.register(fastifyCookie)
  await app.register(fastifySession, {
    secret: config.sessionSecret,
    saveUninitialized: false,
    cookie: { secure: 'auto', httpOnly: true, sameSite: 'lax' }
  })
  await app.register(fastifyView, { engine: { eta: new Eta() }, root: config.templates ?? join(__dirname, 'views') })

  // The host's own assets, which its layout loads on the section's pages too.
  app.get('/site/school.js', async (_request, reply) => reply.type('text/javascript').send('document.documentElement.classList.add("js")\n'))
  app.get('/site/school.css', async (_request, reply) => reply.type('text/css').send('.school-header { display: flex; gap: 1rem }\n'))
  app.get('/site/crest.svg', async (_request, reply) => reply.type('image/svg+xml').send('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>'))

  const { directives } = CONTENT_SECURITY_POLICY
  await app.register(schoolsResources, {
    catalog: new InMemoryCatalog(demoCatalog),
    files: demoFiles,
    authenticate,
    baseUrl: config.baseUrl,
    siteName: 'Riverside School',
    views: {
      // Eta escapes <%= %>; the page body is the section's own escaped markup, so it goes in raw (<%~ %>).
      layout: (page, ctx) => app.view('layout', { page, ctx, body: String(page.body) })
    },
    // The default policy has no script-src at all (default-src 'none'): the school's script needs 'self'.
    // Its images and stylesheet are on this site, which img-src and style-src already allow.
    helmet: { contentSecurityPolicy: { ...CONTENT_SECURITY_POLICY, directives: { ...directives, scriptSrc: ["'self'"] } } }
  })
  return app
}
