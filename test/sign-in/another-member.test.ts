import t, { type Test } from 'tap'
import { buildTestApp, openLoginForm, postLogin, sessionCookie, withCookies, type PluginOptions } from '../helpers/app.js'
import { authenticate, PEOPLE } from '../helpers/members.js'

// Issue 18, item 8: keepSessionData (the default) kept the host's session data through a sign-in over
// another member's live session, so member B read member A's draft. Now, as Django's login() flushes a
// session that belonged to someone else: a different member id under sessionKey starts a clean session.

declare module 'fastify' {
  interface Session {
    draft?: string
  }
}

const [PARENT, TEACHER] = ['parent@example.org', 'teacher@example.org'].map((email) => ({ email, password: PEOPLE[email].password }))

async function build (t: Test, plugin: PluginOptions = {}) {
  const { app, store } = await buildTestApp({
    plugin: { authenticate, ...plugin },
    extend: (app) => {
      app.put('/draft', { config: { membersOnly: true } }, async (request) => {
        request.session.set('draft', String((request.body as { text: string }).text))
        return 'saved'
      })
      app.get('/draft', { config: { membersOnly: true } }, async (request) => request.session.get('draft') ?? 'no draft')
    }
  })
  t.teardown(() => app.close())
  return { app, store }
}

/** Signs `who` in over `cookie` (a browser's cookie jar, maybe holding a session) and returns the new jar. */
async function signInOver (app: Awaited<ReturnType<typeof build>>['app'], who: { email: string, password: string }, cookie?: string) {
  // As a browser comes to it: from a page of the section, which gave the jar its CSRF cookie.
  const jar = cookie === undefined ? undefined : withCookies(cookie, await app.inject({ url: '/schools/resources/', headers: { cookie } }))
  const form = await openLoginForm(app, '/Security/login', jar)
  const res = await postLogin(app, who, { form })
  if (res.statusCode !== 303) throw new Error(`${who.email}: ${res.statusCode} ${res.body.slice(0, 300)}`)
  return withCookies(form.cookie, res)
}

async function writeDraft (app: Awaited<ReturnType<typeof build>>['app'], cookie: string, text: string) {
  const res = await app.inject({ method: 'PUT', url: '/draft', headers: { cookie }, payload: { text } })
  if (res.body !== 'saved') throw new Error(`draft not saved: ${res.statusCode}`)
}

t.test('the reproduction: B signing in over A\'s live session does not see A\'s draft', async (t) => {
  const { app, store } = await build(t)
  const asA = await signInOver(app, PARENT)
  await writeDraft(app, asA, 'A\'s report comments')
  t.equal((await app.inject({ url: '/draft', headers: { cookie: asA } })).body, 'A\'s report comments')
  const asB = await signInOver(app, TEACHER, asA)
  t.equal((await app.inject({ url: '/draft', headers: { cookie: asB } })).body, 'no draft', 'B starts clean')
  const sessions = [...store.sessions.values()].map((json) => JSON.parse(json))
  t.equal(sessions.length, 1, 'A\'s session is gone from the store')
  t.same(sessions[0].member.id, 't-1')
  t.equal(sessions[0].draft, undefined)
})

t.test('the same member signing in again keeps the data, as before', async (t) => {
  const { app } = await build(t)
  const first = await signInOver(app, PARENT)
  await writeDraft(app, first, 'my notes')
  const again = await signInOver(app, PARENT, first)
  t.equal((await app.inject({ url: '/draft', headers: { cookie: again } })).body, 'my notes')
})

t.test('the rule is the member id: a renamed member with the same id keeps it; a numeric id is not its string', async (t) => {
  let name = 'Sam Student'
  let id: string | number = 42
  const { app } = await build(t, { authenticate: async () => ({ id, name }) })
  const first = await signInOver(app, PARENT)
  await writeDraft(app, first, 'draft 1')
  name = 'Samuel Student'
  const renamed = await signInOver(app, PARENT, first)
  t.equal((await app.inject({ url: '/draft', headers: { cookie: renamed } })).body, 'draft 1', 'same id, new name: kept')
  id = '42'
  const other = await signInOver(app, PARENT, renamed)
  t.equal((await app.inject({ url: '/draft', headers: { cookie: other } })).body, 'no draft', '"42" is not 42: clean')
})

t.test('something under sessionKey that is not this member (no id at all) counts as someone else', async (t) => {
  const { app } = await buildTestApp({
    plugin: { authenticate },
    extend: (app) => {
      app.post('/plant', async (request) => {
        request.session.set('member', { name: 'no id' } as never)
        request.session.set('draft', 'planted')
        return 'ok'
      })
      app.get('/draft', { config: { membersOnly: true } }, async (request) => request.session.get('draft') ?? 'no draft')
    }
  })
  t.teardown(() => app.close())
  const planted = sessionCookie(await app.inject({ method: 'POST', url: '/plant' }))!
  const signedIn = await signInOver(app, TEACHER, planted)
  t.equal((await app.inject({ url: '/draft', headers: { cookie: signedIn } })).body, 'no draft')
})
