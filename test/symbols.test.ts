import t from 'tap'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { buildTestApp, CSRF_COOKIE, formToken, signIn } from './helpers/app.js'

// The state this package keeps per request (a guard's grant, a page's form token) is its own: the keys in
// symbols.ts are Symbol.for, for state every copy shares, and nothing of a member's request is reachable
// from host code. Here a host hook, on a host registered before the section, tries everything it can
// reach: every symbol on the request and reply, a copy of a real member's, and `new value.constructor(...)`
// of each object it finds there (how a grant was once forged).

type Keyed = Record<symbol, unknown>

/** The symbols under which host code finds something on a request or reply, except the ones all copies share. */
function privateKeys (owner: object): symbol[] {
  return Object.getOwnPropertySymbols(owner).filter((key) => Symbol.keyFor(key) === undefined && key.description?.startsWith('fastify-schools-resources') === true)
}

const FORGED = { member: { id: 't-1', name: 'Ada Teacher', email: 'teacher@example.org' }, target: { title: 'Early' }, approved: [] }
// What a host could try to plant, besides whatever it finds: a grant under the name the package once used.
const MADE_UP = [Symbol('fastify-schools-resources.grant'), Symbol.for('fastify-schools-resources.grant')]
const GUARDED = ['/members', '/early', '/early-child', '/later', '/later-child', '/decorated', '/scoped', '/scoped/', '/scoped/minutes']

async function page (request: FastifyRequest) {
  return `page ${request.url} for ${request.schoolsMember?.name}`
}

t.test('a host hook registered before the section cannot read, copy or forge a grant', async (t) => {
  const seen: Array<{ key: symbol, value: unknown }> = []
  const makers: Array<{ key: symbol, Maker: new (owner: object, value: unknown) => unknown }> = []
  let forging = false

  function plant (owner: FastifyRequest | FastifyReply) {
    for (const key of MADE_UP) (owner as unknown as Keyed)[key] = FORGED
    for (const { key, value } of seen) (owner as unknown as Keyed)[key] = value
    for (const { key, Maker } of makers) {
      try {
        (owner as unknown as Keyed)[key] = new Maker(owner, FORGED)
      } catch {}
    }
  }

  const { app } = await buildTestApp({
    async before (app: FastifyInstance) {
      app.addHook('onRequest', async (request, reply) => {
        if (!forging) return
        plant(request)
        plant(reply)
      })
      app.addHook('onResponse', async (request, reply) => {
        if (forging) return
        for (const owner of [request, reply]) {
          for (const key of privateKeys(owner)) {
            const value = (owner as unknown as Keyed)[key]
            seen.push({ key, value })
            if (typeof value === 'object' && value !== null && value.constructor !== Object) makers.push({ key, Maker: value.constructor as new (owner: object, value: unknown) => unknown })
          }
        }
      })
      app.get('/early', { config: { membersOnly: { title: 'Early' } } }, page)
      app.register(async function earlyChild (child) {
        child.get('/early-child', { config: { membersOnly: true } }, page)
      })
    },
    extend (app) {
      app.get('/members', { config: { membersOnly: true } }, page)
      app.get('/later', { config: { membersOnly: { title: 'Later' } } }, page)
      app.get('/decorated', { preHandler: app.membersOnly() }, page)
      app.register(async function laterChild (child) {
        child.get('/later-child', { config: { membersOnly: true } }, page)
      })
      app.register(async function scoped (scoped) {
        scoped.get('/', { config: { membersOnly: true } }, page)
        scoped.get('/minutes', { preHandler: scoped.membersOnly({ title: 'Minutes' }) }, page)
      }, { prefix: '/scoped' })
      app.get('/who', async (request) => String(request.schoolsMember?.name))
    }
  })
  t.teardown(() => app.close())

  // A member's real requests: the host hook looks at what is on them.
  const cookie = await signIn(app)
  for (const path of ['/early', '/members', '/schools/resources/']) {
    const res = await app.inject({ url: path, headers: { cookie } })
    t.equal(res.statusCode, 200, `the teacher sees ${path}`)
  }
  const index = await app.inject({ url: '/schools/resources/', headers: { cookie } })
  t.ok(formToken(index.body).length > 0, 'the page has a form token')
  t.same(seen, [], 'nothing of the package\'s own is on a member\'s request or reply: no grant, no form token')
  t.notOk(index.body.includes(CSRF_COOKIE), 'nor does the page quote its CSRF cookie')

  forging = true
  // Whatever was found (nothing, here) and a made-up grant, planted on every visitor's request and reply.
  for (const path of GUARDED) {
    const res = await app.inject(path)
    t.equal(res.statusCode, 302, `a visitor at ${path} still goes to the login page`)
    t.match(res.headers.location, /\/Security\/login\?BackURL=/)
  }
  t.equal((await app.inject('/who')).body, 'undefined', 'request.schoolsMember names nobody')
  // The same on truly parallel requests, beside the teacher's own.
  const all = await Promise.all([...GUARDED.map((path) => app.inject(path)), app.inject({ url: '/members', headers: { cookie } })])
  t.same(all.map((res) => res.statusCode), [...GUARDED.map(() => 302), 200])
})
