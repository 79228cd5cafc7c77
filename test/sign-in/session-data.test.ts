import t, { type Test } from 'tap'
import csrfProtection from '@fastify/csrf-protection'
import { buildTestApp, CSRF_COOKIE, formToken, sessionCookie, TEACHER, TEACHER_MEMBER, withCookies } from '../helpers/app.js'
import { keptAtSignIn, type KeepSessionData } from '../../lib/session/session-data.js'
import type { SessionHandle } from '../../lib/session/session-adapter.js'

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

t.test('keepSessionData: a list keeps only the keys it names', async (t) => {
  const { app, store } = await buildTestApp({
    plugin: { keepSessionData: ['language', 'basket'] },
    extend: (app) => {
      app.post('/choose', async (request) => {
        request.session.set('language', 'cy')
        request.session.set('draft', 'a note')
        return 'ok'
      })
    }
  })
  t.teardown(() => app.close())
  const before = sessionCookie(await app.inject({ method: 'POST', url: '/choose' }))!
  const form = await app.inject({ url: '/Security/login', headers: { cookie: before } })
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: withCookies(before, form) },
    payload: { _csrf: formToken(form.body), email: TEACHER.email, password: TEACHER.password }
  })
  t.equal(res.statusCode, 303)
  const [session] = [...store.sessions.values()].map((json) => JSON.parse(json) as Record<string, unknown>)
  t.equal(session.language, 'cy', 'a listed key is kept')
  t.equal(session.draft, undefined, 'an unlisted one is not')
  t.notOk('basket' in session, 'a listed key the session did not hold stays absent')
})

t.test('keepSessionData: anything but true, false or a list of keys fails start-up', async (t) => {
  for (const [value, message] of [
    ['yes', /must be true .*, false .*, or a list of session keys/],
    [['cart', 3], /or a list of session keys/],
    [['cart', ''], /or a list of session keys/],
    [['cart', '_csrf'], /must not list "_csrf": the CSRF secret is renewed with the session id/],
    [['member'], /must not list "member": the member is set again at sign-in/],
    [['cart', 'member.provider'], /must not list "member.provider": the OpenID provider is set again at sign-in/]
  ] as const) {
    await t.rejects(buildTestApp({ plugin: { keepSessionData: value as never } }), { code: 'FST_SR_INVALID_OPTION', message }, JSON.stringify(value))
  }
  await t.rejects(buildTestApp({ plugin: { sessionKey: 'who', keepSessionData: ['who.provider'] } }), { code: 'FST_SR_INVALID_OPTION', message: /must not list "who\.provider"/ }, 'beside its own sessionKey')
  const { app } = await buildTestApp({ plugin: { sessionKey: 'who', keepSessionData: ['member', 'member.provider'] } })
  t.teardown(() => app.close())
  t.pass('another sessionKey\'s names are the host\'s own keys')
})

t.test('keptAtSignIn: the section\'s own keys never cross sign-in, whichever form; another member\'s session keeps nothing', async (t) => {
  const held: Record<string, unknown> = { member: TEACHER_MEMBER, 'member.provider': 'school', _csrf: 'secret', language: 'cy', basket: ['x'] }
  // keptAtSignIn only reads: keys() and get().
  const session: SessionHandle = {
    keys: () => Object.keys(held),
    get: (key) => held[key],
    set: () => { throw new Error('not written') },
    renew: async () => { throw new Error('not renewed') },
    end: async () => { throw new Error('not ended') },
    secureCookie: undefined
  }
  const settings = (keepSessionData: KeepSessionData) => ({ sessionKey: 'member', keepSessionData })
  t.same(keptAtSignIn(session, TEACHER_MEMBER, settings(true)), ['language', 'basket'])
  // A list made without options.ts's check (the type allows it) is held to the same.
  t.same(keptAtSignIn(session, TEACHER_MEMBER, settings(['_csrf', 'member', 'member.provider', 'basket', 'absent'])), ['basket'])
  t.same(keptAtSignIn(session, TEACHER_MEMBER, settings(false)), [])
  t.same(keptAtSignIn(session, { id: 'someone-else', name: 'Bob' }, settings(true)), [], 'their data is theirs')
  t.same(keptAtSignIn(session, TEACHER_MEMBER, { sessionKey: 'who', keepSessionData: true }), ['member', 'member.provider', 'language', 'basket'], 'under another sessionKey, `member` is the host\'s own data')
})

/**
 * A host's own @fastify/csrf-protection, keeping its secret in the session under `csrfKey`: an attacker
 * opens the login form (a session and a token of their own), plants that session's cookie in the victim's
 * browser, the victim signs in, and the attacker's token is tried on the victim's signed-in session (a
 * cross-site post to the sign-out carries the victim's cookies). The answer to that post.
 */
async function plantedToken (t: Test, csrfKey: string, keepSessionData?: readonly string[] | boolean) {
  const { app } = await buildTestApp({
    plugin: keepSessionData === undefined ? {} : { keepSessionData },
    before: async (app) => { await app.register(csrfProtection, { sessionPlugin: '@fastify/session', sessionKey: csrfKey }) }
  })
  t.teardown(() => app.close())
  const attackersForm = await app.inject('/Security/login')
  const planted = sessionCookie(attackersForm)!
  const attackersToken = formToken(attackersForm.body)
  const victimsForm = await app.inject({ url: '/Security/login', headers: { cookie: planted } })
  const signedIn = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: planted },
    payload: { _csrf: formToken(victimsForm.body), email: TEACHER.email, password: TEACHER.password }
  })
  t.equal(signedIn.statusCode, 303, 'the victim signed in')
  const victim = sessionCookie(signedIn)!
  t.not(victim, planted, 'under a new session id')
  return (await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: victim }, payload: { _csrf: attackersToken } })).statusCode
}

t.test('a host\'s csrf-protection secret in the session: a planted token dies at sign-in unless kept', async (t) => {
  t.equal(await plantedToken(t, '_csrf'), 403, 'its default key: true drops it')
  t.equal(await plantedToken(t, '_csrf', ['language']), 403)
  t.equal(await plantedToken(t, 'hostCsrf', ['language']), 403, 'another key: a list without it drops it')
  t.equal(await plantedToken(t, 'hostCsrf', false), 403, 'false drops it')
  // What docs/sign-in.md warns of: with another key, true keeps the host's secret like any of its data.
  t.equal(await plantedToken(t, 'hostCsrf', true), 303, 'another key with true: the attacker\'s token works (the documented reason to list keys)')
})
