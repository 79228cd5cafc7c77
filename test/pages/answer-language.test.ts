import t, { type Test } from 'tap'
import Fastify, { type FastifyRequest } from 'fastify'
import { errorCodes, InMemoryCatalog, storeErrorHandler, type Catalog } from '../../lib/index.js'
import { demoCatalog } from '../../examples/demo-catalog.js'
import { AsyncStore } from '../helpers/async-store.js'
import { buildTestApp, formToken, openLoginForm, postLogin, signIn, TEACHER, withCookies, type PluginOptions } from '../helpers/app.js'
import fr from '../../lib/i18n/locales/fr.js'
import cy from '../../lib/i18n/locales/cy.js'

// Issue 40: what the routes say outside their views (a refused sign-in, a JSON answer's message, the 500
// and 503 pages) is in the language of the answer; codes, statuses and the shape of JSON answers are not.

const { FST_SR_STORE_UNAVAILABLE } = errorCodes
const WRONG = { email: TEACHER.email, password: 'not the password' }
const demo = new InMemoryCatalog(demoCatalog)
/** The demo catalog, with a category 'boom' whose read fails (the 500). */
const failing: Catalog = {
  listCategories: () => demo.listCategories(),
  getCategory: (slug) => slug === 'boom' ? Promise.reject(new Error('disk on fire')) : demo.getCategory(slug)
}

/** Reads fail while `down`, as a Redis that does not answer. */
class DownStore extends AsyncStore {
  down = false
  override get (sessionId: string, callback: (err: unknown, result?: any) => void): void {
    if (this.down) setImmediate(() => callback(new FST_SR_STORE_UNAVAILABLE('no answer (GET)')))
    else super.get(sessionId, callback)
  }
}

async function build (t: Test, plugin: PluginOptions = {}) {
  const store = new DownStore()
  const { app } = await buildTestApp({ session: { store }, plugin: { catalog: failing, ...plugin } })
  t.teardown(() => app.close())
  return { app, store }
}

/** The fields of a Vary header, lower-cased. */
function varies (header: unknown): string[] {
  return String(header ?? '').toLowerCase().split(/\s*,\s*/)
}

t.test('a refused sign-in in French: the page, its language said, the same status', async (t) => {
  const { app } = await build(t)
  const english = await postLogin(app, WRONG)
  const french = await postLogin(app, WRONG, { headers: { 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.5' } })
  t.equal(english.statusCode, 401)
  t.equal(french.statusCode, 401, 'the status does not change with the language')
  t.match(english.body, /role="alert"[^>]*>The email address or password is incorrect\.</)
  t.match(french.body, /role="alert"[^>]*>L’adresse e-mail ou le mot de passe est incorrect\.</)
  t.notMatch(french.body, 'The email address or password is incorrect')
  t.match(french.body, /<html lang="fr"/)
  t.equal(french.headers['content-language'], 'fr')
  t.ok(varies(french.headers.vary).includes('accept-language'), 'a cache keeps one answer per language')

  const missing = await postLogin(app, { email: '', password: '' }, { headers: { 'accept-language': 'de' } })
  t.equal(missing.statusCode, 400)
  t.match(missing.body, 'Geben Sie Ihre E-Mail-Adresse und Ihr Passwort ein.')

  const expired = await app.inject({ method: 'POST', url: '/Security/login', headers: { 'accept-language': 'es' }, payload: { email: TEACHER.email, password: 'x', _csrf: 'forged' } })
  t.equal(expired.statusCode, 403)
  t.match(expired.body, 'Este formulario ha caducado. Vuelva a intentarlo.')
})

t.test('a timeout\'s notice in Welsh and German, its duration said in the language', async (t) => {
  const { app } = await build(t)
  const welsh = await app.inject({ url: '/Security/login', headers: { cookie: 'sr_notice=idle', 'accept-language': 'cy' } })
  t.match(welsh.body, /role="status">Cawsoch chi eich allgofnodi ar ôl 60 munud heb weithgarwch\. Mewngofnodwch eto i barhau\.</)
  const german = await app.inject({ url: '/Security/login', headers: { cookie: 'sr_notice=absolute', 'accept-language': 'de' } })
  t.match(german.body, /role="status">Sie wurden 12 Stunden nach der Anmeldung abgemeldet\./)
})

t.test('a JSON refusal in French: the same code, status and error, the message translated', async (t) => {
  const { app } = await build(t)
  const json = { accept: 'application/json' }
  const english = await postLogin(app, WRONG, { headers: json })
  const french = await postLogin(app, WRONG, { headers: { ...json, 'accept-language': 'fr' } })
  t.same(english.json(), { statusCode: 401, code: 'FST_SR_INVALID_CREDENTIALS', error: 'Unauthorized', message: 'The email address or password is incorrect.' })
  t.same(french.json(), { statusCode: 401, code: 'FST_SR_INVALID_CREDENTIALS', error: 'Unauthorized', message: 'L’adresse e-mail ou le mot de passe est incorrect.' })
  t.equal(french.headers['content-language'], 'fr')
  t.equal(english.headers['content-language'], 'en')
  t.ok(varies(french.headers.vary).includes('accept-language'))

  // The section's 404 as JSON keeps its own shape (no code).
  const missing = await app.inject({ url: '/schools/resources/nope', headers: { ...json, 'accept-language': 'cy' } })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { statusCode: 404, error: 'Not Found', message: 'Does dim tudalen yn y cyfeiriad hwn yn yr adran adnoddau.' })
  t.equal(missing.headers['content-language'], 'cy')
  t.same(varies(missing.headers.vary), ['accept', 'accept-language'])
})

t.test('the host\'s locale option decides a JSON message too', async (t) => {
  const asked: FastifyRequest[] = []
  const { app } = await build(t, { locale: async (request) => { asked.push(request); return 'es' } })
  const refused = await postLogin(app, WRONG, { headers: { accept: 'application/json', 'accept-language': 'de' } })
  t.equal(refused.json().message, 'La dirección de correo electrónico o la contraseña no son correctas.')
  t.equal(refused.headers['content-language'], 'es')
  t.ok(asked.length > 0, 'its function was asked')
})

t.test('the 500 and 503 in German from Accept-Language; the host\'s locale function is not called for them', async (t) => {
  let calls = 0
  const { app, store } = await build(t, { locale: () => { calls++; return 'fr' } })
  const cookie = await signIn(app)
  calls = 0

  const page = await app.inject({ url: '/schools/resources/resources/boom/', headers: { cookie, 'accept-language': 'de-AT, en;q=0.5' } })
  t.equal(page.statusCode, 500)
  t.match(page.body, /^<!doctype html><html lang="de" dir="ltr">/)
  t.match(page.body, '<h1>Etwas ist schiefgelaufen</h1>')
  t.match(page.body, 'Bei uns ist etwas schiefgelaufen. Bitte versuchen Sie es später noch einmal.')
  t.match(page.body, 'Fehlercode: FST_SR_INTERNAL_ERROR')
  t.notMatch(page.body, 'disk on fire')
  t.equal(page.headers['content-language'], 'de')
  t.same(varies(page.headers.vary), ['accept', 'accept-language'])
  const json = await app.inject({ url: '/schools/resources/resources/boom/', headers: { cookie, accept: 'application/json', 'accept-language': 'de' } })
  t.same(json.json(), { statusCode: 500, code: 'FST_SR_INTERNAL_ERROR', error: 'Internal Server Error', message: 'Bei uns ist etwas schiefgelaufen. Bitte versuchen Sie es später noch einmal.' })
  t.equal(json.headers['content-language'], 'de')

  store.down = true
  const down = await app.inject({ url: '/schools/resources/', headers: { cookie, 'accept-language': 'de' } })
  t.equal(down.statusCode, 503)
  t.match(down.body, /^<!doctype html><html lang="de" dir="ltr">/)
  t.match(down.body, '<h1>Vorübergehend nicht verfügbar</h1>')
  t.match(down.body, 'Dieser Teil der Website ist vorübergehend nicht verfügbar.')
  t.equal(down.headers['content-language'], 'de')
  t.ok(varies(down.headers.vary).includes('accept-language'))
  t.equal(down.headers['content-length'], String(Buffer.byteLength(down.body)), 'the length of the translated page')
  const downJson = await app.inject({ url: '/schools/resources/', headers: { cookie, accept: 'application/json', 'accept-language': 'de' } })
  t.match(downJson.json(), { statusCode: 503, code: 'FST_SR_STORE_UNAVAILABLE', error: 'Service Unavailable', message: 'Dieser Teil der Website ist vorübergehend nicht verfügbar. Bitte versuchen Sie es gleich noch einmal.' })
  t.equal(calls, 0, 'the locale function was not called for the 500 or the 503')

  // Without Accept-Language: the default locale, still not the function's.
  const plain = await app.inject({ url: '/schools/resources/', headers: { cookie } })
  t.match(plain.body, '<html lang="en" dir="ltr">')
  t.equal(calls, 0)
  store.down = false
  await app.inject({ url: '/schools/resources/', headers: { cookie } })
  t.ok(calls > 0, 'a page that renders does ask it (the count could fail)')
})

t.test('a fixed locale: the 500 and 503 are in it too, whatever Accept-Language asks, and do not vary with it', async (t) => {
  const { app, store } = await build(t, { locale: 'cy' })
  const cookie = await signIn(app)
  const page = await app.inject({ url: '/schools/resources/resources/boom/', headers: { cookie, 'accept-language': 'en' } })
  t.equal(page.statusCode, 500)
  t.match(page.body, /^<!doctype html><html lang="cy" dir="ltr">/)
  t.match(page.body, `<h1>${cy['serverError.title']}</h1>`)
  t.equal(page.headers['content-language'], 'cy')
  t.same(varies(page.headers.vary), ['accept'], 'the page is the same whatever the header')

  store.down = true
  const down = await app.inject({ url: '/schools/resources/', headers: { cookie, 'accept-language': 'en' } })
  t.equal(down.statusCode, 503)
  t.match(down.body, /^<!doctype html><html lang="cy" dir="ltr">/)
  t.match(down.body, `<h1>${cy['unavailable.title']}</h1>`)
  t.equal(down.headers['content-language'], 'cy')
  t.notOk(varies(down.headers.vary).includes('accept-language'))
})

t.test('a sign-out during an outage says so in the browser\'s language', async (t) => {
  const { app, store } = await build(t)
  const cookie = await signIn(app)
  const page = await app.inject({ url: '/schools/resources/', headers: { cookie } })
  store.down = true
  const out = await app.inject({ method: 'POST', url: '/Security/logout', headers: { cookie: withCookies(cookie, page), 'accept-language': 'fr' }, payload: { _csrf: formToken(page.body) } })
  t.equal(out.statusCode, 503)
  t.match(out.body, `<h1>${fr['unavailable.signedOut.title']}</h1>`)
  t.match(out.headers['set-cookie'], /sessionId=;/, 'and this browser is signed out, as before')
  t.equal(out.headers['content-language'], 'fr')
})

t.test('storeErrorHandler outside any section: the shipped English, whatever the browser asks', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.setErrorHandler(storeErrorHandler)
  app.get('/down', async () => { throw new FST_SR_STORE_UNAVAILABLE('GET failed') })
  const down = await app.inject({ url: '/down', headers: { 'accept-language': 'de' } })
  t.equal(down.statusCode, 503)
  t.match(down.body, '<html lang="en" dir="ltr">')
  t.match(down.body, '<h1>Temporarily unavailable</h1>')
  t.equal(down.headers['content-language'], 'en')
  t.notOk(varies(down.headers.vary).includes('accept-language'), 'always English: it does not vary with the header')
})

t.test('parallel requests in two languages each get their own', async (t) => {
  const { app } = await build(t)
  const form = await openLoginForm(app)
  const languages = ['fr', 'de', 'fr', 'de', 'fr', 'de', 'fr', 'de']
  const answers = await Promise.all(languages.map((language, i) => postLogin(app, WRONG, {
    form,
    headers: { 'accept-language': language, ...(i % 4 < 2 ? {} : { accept: 'application/json' }) }
  })))
  const said = { fr: 'L’adresse e-mail ou le mot de passe est incorrect.', de: 'Die E-Mail-Adresse oder das Passwort ist falsch.' }
  answers.forEach((answer, i) => {
    const language = languages[i] as 'fr' | 'de'
    t.equal(answer.headers['content-language'], language, `answer ${i}: ${language}`)
    const message = i % 4 < 2 ? answer.body : answer.json().message
    t.match(message, said[language])
    t.notMatch(message, said[language === 'fr' ? 'de' : 'fr'])
  })
})
