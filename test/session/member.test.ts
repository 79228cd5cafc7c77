import t, { type Test } from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { InMemoryCatalog, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'
import { buildTestApp, postLogin, SECRET, sessionCookie, TEACHER } from '../helpers/app.js'

// As a host with its own login declares what it keeps in the session.
declare module 'fastify' {
  interface Session {
    user?: { id: number, username: string, displayName: string }
  }
}

/** A host whose own login keeps its user under `user`, with one section per entry of `sections`. */
async function hostWithOwnLogin (t: Test, ...sections: Array<Partial<FastifySchoolsResourcesOptions>>) {
  const logs: Array<{ code?: string, msg: string }> = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  // The host's own login stores its user as its users table has it.
  app.post('/login', async (request) => {
    request.session.set('user', { id: 7, username: 'ada', displayName: 'Ada Teacher' })
    return 'ok'
  })
  for (const plugin of sections) {
    await app.register(schoolsResources, { catalog: new InMemoryCatalog(demoCatalog), files: demoFiles, signIn: false, sessionKey: 'user', ...plugin } as FastifySchoolsResourcesOptions)
  }
  t.teardown(() => app.close())
  const cookie = sessionCookie(await app.inject({ method: 'POST', url: '/login' }))!
  return { app, cookie, logs }
}

// Members as databases give them: numeric ids; and a host whose own login keeps its user under the
// section's sessionKey in another shape.

t.test('authenticate may resolve to a member with a numeric id: it type-checks, signs in and is kept as a number', async (t) => {
  // Typed as a host writes it, with no cast: this line is what `tsc --noEmit` checks.
  const authenticate: FastifySchoolsResourcesOptions['authenticate'] = async ({ email }) =>
    email === TEACHER.email ? { id: 42, name: 'Ada Teacher' } : null
  const { app, store } = await buildTestApp({ plugin: { authenticate } })
  t.teardown(() => app.close())
  const res = await postLogin(app, { email: TEACHER.email, password: TEACHER.password })
  t.equal(res.statusCode, 303)
  const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: sessionCookie(res)! } })
  t.equal(page.statusCode, 200)
  t.match(page.body, 'Ada Teacher')
  t.same([...store.sessions.values()].map((json) => JSON.parse(json).member), [{ id: 42, name: 'Ada Teacher' }])
  for (const bad of [Number.NaN, Infinity, '']) {
    const { app } = await buildTestApp({ plugin: { authenticate: async () => ({ id: bad, name: 'x' }) } })
    t.equal((await postLogin(app, { email: 'a@b.c', password: 'x' }, { headers: { accept: 'application/json' } })).json().code, 'FST_SR_INVALID_MEMBER', String(bad))
    await app.close()
  }
})

t.test('a session holding something else under sessionKey: a warning naming getMember, once; with getMember it works', async (t) => {
  const warnings: Array<Error & { code?: string }> = []
  const listener = (w: Error & { code?: string }) => { if (w.code === 'FST_SR_NOT_A_MEMBER') warnings.push(w) }
  process.on('warning', listener)
  t.teardown(() => { process.off('warning', listener) })

  const { app, cookie, logs } = await hostWithOwnLogin(t, {})
  for (let i = 0; i < 3; i++) {
    t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })).statusCode, 302, 'counted as signed out')
  }
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(warnings.length, 1, 'warned once')
  t.match(warnings[0], { name: 'UserWarning', message: /sessionKey "user" that is not a member .* getMember/ })
  t.equal(logs.filter((l) => l.code === 'FST_SR_NOT_A_MEMBER').length, 1, 'logged once')

  const fixed = await hostWithOwnLogin(t, {
    getMember: (request) => {
      const user = request.session.get('user')
      return user === undefined ? undefined : { id: user.id, name: user.displayName }
    }
  })
  const page = await fixed.app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: fixed.cookie } })
  t.equal(page.statusCode, 200, 'getMember maps the host\'s user to a member')
  t.match(page.body, 'Ada Teacher')
  t.equal(warnings.length, 1, 'and raises no warning')
})

t.test('the not-a-member warning is said once per app with its fix: two sections, 40 parallel requests, one line', async (t) => {
  // On f7fb6ba each section said it once: two lines (and two process warnings) for one mistake.
  const { app, cookie, logs } = await hostWithOwnLogin(t, {}, { prefix: '/staff/resources' })

  const warnings: Array<Error & { code?: string }> = []
  const listener = (w: Error & { code?: string }) => { if (w.code === 'FST_SR_NOT_A_MEMBER') warnings.push(w) }
  process.on('warning', listener)
  t.teardown(() => { process.off('warning', listener) })
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) =>
    app.inject({ url: `${i % 2 === 0 ? '/schools/resources' : '/staff/resources'}/resources/maths/`, headers: { cookie } })))
  await new Promise((resolve) => setImmediate(resolve))
  t.same(new Set(answers.map((r) => r.statusCode)), new Set([302]), 'every visit counts as signed out')
  const lines = logs.filter((l) => l.code === 'FST_SR_NOT_A_MEMBER')
  t.equal(lines.length, 1, 'one log line')
  t.match(lines[0].msg, /sessionKey "user" that is not a member .* give the section a getMember option that returns \{ id, name \}/)
  t.equal(warnings.length, 1, 'one process warning')
})
