import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildViewEngineApp } from '../../examples/view-engine.js'
import { buildTestApp, formToken, postLogin, sessionCookie, signIn, TEACHER, withCookies } from '../helpers/app.js'

// Views may return promises: the section through @fastify/view with a real engine (Eta), as
// examples/view-engine.ts wires it, and async views of every kind.

const SECRET = 'a-test-secret-that-is-at-least-32-characters-long'

async function exampleSignIn (app: FastifyInstance) {
  const form = await app.inject('/Security/login')
  t.equal(form.statusCode, 200)
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: withCookies(undefined, form) },
    payload: { _csrf: formToken(form.body), email: TEACHER.email, password: TEACHER.password }
  })
  t.equal(res.statusCode, 303, 'the Eta login page\'s form signs in')
  return sessionCookie(res)!
}

t.test('the example renders every page in its Eta layout through @fastify/view, with the CSP its script needs', async (t) => {
  const app = await buildViewEngineApp({ sessionSecret: SECRET, demoEmail: TEACHER.email, demoPassword: TEACHER.password })
  t.teardown(() => app.close())
  const login = await app.inject('/Security/login')
  t.match(login.body, '<header class="school-header">', 'the login page is in the school\'s layout')
  t.notMatch(login.body, '[object Promise]')
  t.match(login.body, /<form method="post" action="\/Security\/login"/, 'with the section\'s form inside')
  t.match(login.headers['content-security-policy'], /script-src 'self'/)

  const cookie = await exampleSignIn(app)
  const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], 'text/html')
  t.match(page.body, /<title>Mathematics \| Riverside School<\/title>/)
  t.match(page.body, 'Signed in as <strong>Demo Teacher</strong>')
  t.match(page.body, /<h1>Mathematics<\/h1>/, 'the section\'s page body, unescaped once')
  t.notMatch(page.body, '&lt;h1&gt;')
  t.equal((await app.inject({ url: '/schools/resources/no/such/page', headers: { cookie } })).statusCode, 404)
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: withCookies(cookie, page) }, payload: { _csrf: formToken(page.body) } })
  t.equal(out.statusCode, 303, 'the layout\'s logout form works')
})

t.test('every view may return a promise', async (t) => {
  const later = <T> (value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 1))
  const { app } = await buildTestApp({
    plugin: {
      views: {
        layout: async (page) => later(`<!doctype html><title>${page.title}</title>${String(page.body)}`),
        index: async () => later({ title: 'Index', body: '<p>async index</p>' }),
        category: async ({ category }) => later({ title: category.title, body: `<p>async ${category.slug}</p>` }),
        login: async (data) => later({ title: 'Login', body: `<form method="post"><input name="_csrf" value="${data.csrfToken}"></form>` }),
        notFound: async () => later({ title: 'Missing', body: '<p>async 404</p>' })
      }
    }
  })
  t.teardown(() => app.close())
  t.match((await app.inject('/schools/resources/')).body, '<title>Index</title><p>async index</p>')
  t.match((await app.inject('/schools/resources/nope')).body, '<p>async 404</p>')
  const bad = await postLogin(app, { email: TEACHER.email, password: 'wrong' })
  t.equal(bad.statusCode, 401)
  t.match(bad.body, '<title>Login</title>')
  const cookie = await signIn(app)
  const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(page.body, '<!doctype html><title>Mathematics</title><p>async maths</p>')
})
