import t from 'tap'
import { buildTestApp, CSRF_COOKIE, formToken, sessionCookie, TEACHER, withCookies } from '../helpers/app.js'

// Sign-in keeps what the host stored in the session (a language choice), under a new session id and
// with a new CSRF secret, as Django's login() does; keepSessionData: false starts a clean session.

declare module 'fastify' {
  interface Session {
    language?: string
  }
}

async function signInAfterChoosingLanguage (keepSessionData?: boolean) {
  const { app, store } = await buildTestApp({
    plugin: keepSessionData === undefined ? {} : { keepSessionData },
    extend: (app) => {
      app.post('/language', async (request) => {
        request.session.set('language', 'cy')
        return 'ok'
      })
    }
  })
  t.teardown(() => app.close())
  const before = sessionCookie(await app.inject({ method: 'POST', url: '/language' }))!
  const form = await app.inject({ url: '/Security/login', headers: { cookie: before } })
  // The form's CSRF secret is a cookie of its own, beside the session cookie.
  const formCookie = withCookies(before, form)
  const stored = () => [...store.sessions.entries()].map(([id, json]) => ({ id, ...JSON.parse(json) }))
  const [old] = stored()
  t.equal(old.language, 'cy', 'the host stored a language before sign-in')
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: formCookie },
    payload: { _csrf: formToken(form.body), email: TEACHER.email, password: TEACHER.password }
  })
  t.equal(res.statusCode, 303)
  const after = stored()
  t.equal(after.length, 1, 'the old session is gone')
  t.not(after[0].id, old.id, 'a new session id')
  t.not(sessionCookie(res), sessionCookie(form) ?? before, 'a new session cookie')
  t.equal(res.cookies.find((c) => c.name === CSRF_COOKIE)?.value, '', 'the CSRF secret is not carried over: its cookie is dropped')
  t.same(after[0].member, { id: 't-1', name: 'Ada Teacher', email: TEACHER.email })
  return { app, session: after[0], cookie: sessionCookie(res)! }
}

t.test('sign-in keeps the host\'s session data under a new id, with a new CSRF secret', async (t) => {
  const { app, session, cookie } = await signInAfterChoosingLanguage()
  t.equal(session.language, 'cy', 'the language choice survives sign-in')
  const page = await app.inject({ url: '/schools/resources/', headers: { cookie } })
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: withCookies(cookie, page) }, payload: { _csrf: formToken(page.body) } })
  t.equal(out.statusCode, 303, 'the renewed secret signs the logout form')
})

t.test('keepSessionData: false starts a clean session', async (t) => {
  const { session } = await signInAfterChoosingLanguage(false)
  t.equal(session.language, undefined)
})
