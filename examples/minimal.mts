// The smallest host app: the wiring the README documents, one category, one demo member.
// Build and run: npm run build && node dist/examples/minimal.mjs
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { InMemoryCatalog, type Member } from 'fastify-schools-resources'

const app = Fastify({ logger: true })
await app.register(fastifyCookie)
await app.register(fastifySession, {
  secret: process.env.SESSION_SECRET ?? randomBytes(32).toString('hex'),
  // Visitors who are only redirected leave nothing in the store.
  saveUninitialized: false,
  cookie: { secure: 'auto', httpOnly: true, sameSite: 'lax' }
})
await app.register(schoolsResources, {
  catalog: new InMemoryCatalog({
    categories: [{
      slug: 'science',
      title: 'Science',
      description: 'Experiments and investigations.',
      resources: [{
        id: 'plant-growth',
        title: 'Plant growth investigation',
        summary: 'A four-week investigation with a results table.',
        url: '/files/plant-growth.pdf',
        subject: 'Science',
        yearLevels: ['Year 5'],
        format: 'Worksheet'
      }]
    }]
  }),
  async authenticate ({ email, password }): Promise<Member | null> {
    // A real site looks the user up and checks a password hash.
    return email === 'teacher@example.org' && password === 'correct horse battery staple'
      ? { id: 'teacher-1', name: 'Demo Teacher', email }
      : null
  }
})
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
