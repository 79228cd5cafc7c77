// The sign-in routes have a context of their own inside the section's: their error handler (the expired
// form, the busy 503) sees their errors only, and what it leaves goes on to the section's handlers.
import t from 'tap'
import { errorCodes, InMemoryCatalog, type Catalog } from '../../lib/index.js'
import { demoCatalog } from '../../examples/demo-catalog.js'
import { TEACHER, buildTestApp, openLoginForm, postLogin } from '../helpers/app.js'

/** An error with the code (and status) of one the sign-in handler answers. */
function signInLike (code: string, statusCode?: number): Error {
  return Object.assign(new Error(`thrown by the catalog with ${code}`), { code, ...(statusCode === undefined ? {} : { statusCode }), retryAfter: 7 })
}

/** A catalog whose index throws `error`. */
function failingCatalog (error: Error): Catalog {
  const inner = new InMemoryCatalog(demoCatalog)
  return { listCategories: async () => { throw error }, getCategory: (slug) => inner.getCategory(slug) }
}

t.test('a section route\'s error with a sign-in code is not answered by the sign-in handler', async (t) => {
  const csrf = await buildTestApp({ plugin: { catalog: failingCatalog(signInLike('FST_CSRF_INVALID_TOKEN', 403)) } })
  t.teardown(() => csrf.app.close())
  const forbidden = await csrf.app.inject('/schools/resources/')
  // A 4xx goes on to the host's handler (Fastify's own here), never the login form saying it expired.
  t.equal(forbidden.statusCode, 403)
  t.equal(forbidden.json().code, 'FST_CSRF_INVALID_TOKEN')
  t.notMatch(forbidden.body, 'This form has expired')
  t.notMatch(forbidden.body, 'name="_csrf"')

  const busy = await buildTestApp({ plugin: { catalog: failingCatalog(signInLike('FST_SR_SIGN_IN_BUSY')) } })
  t.teardown(() => busy.app.close())
  const failed = await busy.app.inject('/schools/resources/')
  // Not the busy 503 with the form: the section's 500 page.
  t.equal(failed.statusCode, 500)
  t.match(failed.body, 'Something went wrong')
  t.match(failed.body, 'Error code: FST_SR_SIGN_IN_BUSY')
  t.notOk('retry-after' in failed.headers)
  t.notMatch(failed.body, 'name="_csrf"')
})

t.test('a sign-in route\'s other errors go on to the section\'s handlers: the 503 and the 500', async (t) => {
  const down = await buildTestApp({ plugin: { authenticate: async () => { throw new errorCodes.FST_SR_STORE_UNAVAILABLE('the directory') } } })
  t.teardown(() => down.app.close())
  const outage = await postLogin(down.app, { email: TEACHER.email, password: TEACHER.password })
  t.equal(outage.statusCode, 503, 'the store error handler, inherited')
  t.ok(Number(outage.headers['retry-after']) > 0)
  t.notMatch(outage.body, 'name="_csrf"', 'not the login form')

  const broken = await buildTestApp({ plugin: { authenticate: async () => { throw new Error('directory down') } } })
  t.teardown(() => broken.app.close())
  const form = await openLoginForm(broken.app)
  const res = await postLogin(broken.app, { email: TEACHER.email, password: TEACHER.password }, { form })
  t.equal(res.statusCode, 500)
  t.match(res.body, 'Something went wrong', 'the section\'s 500 page')
  t.match(res.body, 'Error code: FST_SR_INTERNAL_ERROR')
  t.match(res.headers['content-security-policy'], /default-src 'none'/, 'with the section\'s headers')
})

t.test('the sign-in handler still answers its own routes\' CSRF errors, login and logout', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const form = await openLoginForm(app)
  const login = await postLogin(app, { email: TEACHER.email, password: TEACHER.password, _csrf: 'wrong' }, { form })
  t.equal(login.statusCode, 403)
  t.match(login.body, 'This form has expired')
  const logout = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: '_csrf=wrong' })
  t.equal(logout.statusCode, 403)
  t.match(logout.body, 'This form has expired')
})
