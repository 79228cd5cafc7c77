// "No English left" (issue #40): every page the section serves, and every JSON `message`, rendered in a
// pseudo-locale `en-XA` whose messages are English wrapped in ⟦…⟧ (given through the `messages` option,
// as a host gives a locale of its own). Any visible text outside the markers did not come from the
// catalogue: it is listed in the failing assertion, page by page. Host data (catalog fields, the member's
// name and email) is the host's and may appear as it is.
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { errorCodes, InMemoryCatalog, MemoryAttemptStore, type Member } from '../../lib/index.js'
import en from '../../lib/i18n/locales/en.js'
import { demoCatalog } from '../../examples/demo-catalog.js'
import { AsyncStore } from '../helpers/async-store.js'
import { BASE_URL, buildTestApp, SECRET, formToken, postLogin, signIn, TEACHER, TEACHER_MEMBER, withCookies, type PluginOptions } from '../helpers/app.js'

const { FST_SR_STORE_UNAVAILABLE } = errorCodes
const PSEUDO = 'en-XA'
const LANGUAGE = { 'accept-language': PSEUDO }
const JSON_ACCEPT = { ...LANGUAGE, accept: 'application/json' }
const INDEX = '/schools/resources/'
/** An OpenID provider's label: the host's words, shown in the section's "Sign in with …". */
const PROVIDER_LABEL = 'your school account'
const MATHS = '/schools/resources/resources/maths/'

/** Every message of en.ts, whole, between markers: still ICU (the markers are text to it). */
export const pseudoMessages: Record<string, string> = Object.fromEntries(Object.entries(en).map(([key, message]) => [key, `⟦${message}⟧`]))

/** Strings of the host's that a page shows as they are: catalog fields (not the formats, which are translated). */
const HOST_DATA: string[] = (() => {
  const strings = new Set<string>([TEACHER_MEMBER.name, TEACHER.email, PROVIDER_LABEL])
  const walk = (value: unknown, field = ''): void => {
    if (typeof value === 'string' && field !== 'format') strings.add(value)
    // A file resource shows its file's own name (maths/sheet.pdf → sheet.pdf).
    if (typeof value === 'string' && field === 'file') strings.add(value.slice(value.lastIndexOf('/') + 1))
    else if (Array.isArray(value)) for (const item of value) walk(item, field)
    else if (value !== null && typeof value === 'object') for (const [name, item] of Object.entries(value)) walk(item, name)
  }
  walk(demoCatalog)
  // Longest first, so that a title is taken out before a word of it.
  return [...strings].sort((a, b) => b.length - a.length)
})()

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'', nbsp: '\u00a0', middot: '·', rsquo: '’', lsquo: '‘', hellip: '…', ndash: '–', mdash: '—', times: '×', larr: '←', rarr: '→', laquo: '«', raquo: '»', copy: '©' }

function decode (text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') return String.fromCodePoint(name[1].toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10))
    return ENTITIES[name.toLowerCase()] ?? whole
  })
}

/** Attributes a person reads (or hears): their values are text of the page too. */
const READ_ATTRIBUTES = ['title', 'aria-label', 'alt', 'placeholder', 'aria-description', 'aria-placeholder', 'aria-roledescription']

/**
 * The visible text of a page: its text nodes in document order (script and style left out), and the
 * attributes people read; `value` of buttons and inputs that show it.
 */
export function visibleText (document: string): { text: string[], attributes: string[] } {
  const source = document.replace(/<!--[\s\S]*?-->|<!doctype[^>]*>/gi, '').replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
  const text: string[] = []
  const attributes: string[] = []
  const tag = /<\/?([a-zA-Z][\w-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*\/?>/g
  let last = 0
  for (let m = tag.exec(source); m !== null; m = tag.exec(source)) {
    text.push(decode(source.slice(last, m.index)))
    last = tag.lastIndex
    const attrs = new Map<string, string>()
    for (const a of m[2].matchAll(/([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g)) attrs.set(a[1].toLowerCase(), decode(a[2] ?? a[3] ?? a[4] ?? ''))
    for (const name of READ_ATTRIBUTES) if (attrs.has(name)) attributes.push(attrs.get(name)!)
    const element = m[1].toLowerCase()
    if (element === 'input' && ['submit', 'button', 'reset'].includes(attrs.get('type') ?? '') && attrs.has('value')) attributes.push(attrs.get('value')!)
  }
  text.push(decode(source.slice(last)))
  return { text, attributes }
}

/** What is left of `text` once every marked message and every host string are taken out: words there are leaks. */
function unmarked (text: string): string {
  let rest = text
  // Innermost marked messages first: a page title inside the layout's title is a message in a message.
  for (let before = ''; before !== rest;) {
    before = rest
    rest = rest.replace(/⟦[^⟦⟧]*⟧/g, ' ')
  }
  for (const data of HOST_DATA) rest = rest.split(data).join(' ')
  return rest
}

const SEPARATOR = '\u0001'

/** The strings of a page a person reads that came from no message: empty when everything is translated. */
export function leftOver (document: string): string[] {
  const { text, attributes } = visibleText(document)
  // Text nodes as one stream: a message with a tag (`⟦Signed in as <strong>{name}</strong>⟧`) spans nodes.
  const leaks = unmarked(text.join(SEPARATOR)).split(SEPARATOR)
  for (const value of attributes) leaks.push(unmarked(value))
  return leaks.map((leak) => leak.replace(/\s+/g, ' ').trim()).filter((leak) => /\p{L}/u.test(leak))
}

/** The same for a JSON answer's `message`. */
function jsonLeftOver (res: LightMyRequestResponse): string[] {
  const body = res.json() as { message?: unknown }
  if (typeof body.message !== 'string') return [`no message in ${res.body}`]
  const rest = unmarked(body.message).trim()
  return /\p{L}/u.test(rest) ? [rest] : []
}

t.test('the harness itself: it finds text outside markers, and only that', async (t) => {
  t.same(leftOver('<html><head><title>⟦⟦Sign in⟧ | ⟦Schools⟧⟧</title><style>p{}</style></head><body><p>⟦Signed in as <strong>Ada Teacher</strong>⟧</p></body></html>'), [])
  t.same(leftOver('<p>⟦Page⟧ Next page</p><img alt="A chart"><input type="submit" value="Go"><a title="⟦ok⟧" aria-label="Menu">1</a>'), ['Next page', 'A chart', 'Go', 'Menu'])
  t.same(leftOver('<!doctype html><!-- a note --><p>&laquo; 2 / 3 &middot; 4</p><script>var x = "English"</script>'), [], 'numbers and symbols are not words; scripts are not read')
  t.same(leftOver(`<p>Mathematics</p><p>${TEACHER.email}</p>`), [], 'host data as it is')
})

/** A session store whose destroy fails while `failing`: the store is down when the member signs out. */
class DestroyFailsStore extends AsyncStore {
  failing = false
  override destroy (sessionId: string, callback: (err?: unknown) => void): void {
    if (!this.failing) return super.destroy(sessionId, callback)
    setImmediate(() => callback(new FST_SR_STORE_UNAVAILABLE('DEL failed')))
  }

  readsFail = false
  override get (sessionId: string, callback: (err: unknown, result?: any) => void): void {
    if (!this.readsFail) return super.get(sessionId, callback)
    setImmediate(() => callback(new FST_SR_STORE_UNAVAILABLE('GET failed')))
  }

  override set (sessionId: string, session: unknown, callback: (err?: unknown) => void): void {
    if (!this.failing) return super.set(sessionId, session, callback)
    setImmediate(() => callback(new FST_SR_STORE_UNAVAILABLE('SET failed')))
  }
}

/** An attempt store that fails every call while `failing` (sign-out everywhere keeps its counts there). */
function failingAttemptStore (): { store: MemoryAttemptStore, fail: (on: boolean) => void } {
  const inner = new MemoryAttemptStore()
  let failing = false
  const store = new Proxy(inner, {
    get (target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => failing ? Promise.reject(new FST_SR_STORE_UNAVAILABLE('attempt store down')) : (value as (...a: unknown[]) => unknown).apply(target, args)
    }
  })
  return { store, fail: (on) => { failing = on } }
}

/** The demo catalog, with a category whose reading fails (the 500 page). */
class BrokenCategoryCatalog extends InMemoryCatalog {
  override async getCategory (slug: string) {
    if (slug === 'broken') throw new Error('database down')
    return super.getCategory(slug)
  }

  override async getCategoryPage (...args: Parameters<InMemoryCatalog['getCategoryPage']>) {
    if (args[0] === 'broken') throw new Error('database down')
    return super.getCategoryPage(...args)
  }
}

async function pseudoApp (t: Test, { cookie, ...plugin }: PluginOptions & { cookie?: boolean } = {}, store?: AsyncStore): Promise<FastifyInstance> {
  const { app } = await buildTestApp({
    // OpenID signs its state cookie with @fastify/cookie's secret.
    ...(cookie === true ? { cookie: { secret: SECRET } } : {}),
    ...(store === undefined ? {} : { session: { store } }),
    plugin: {
      locale: PSEUDO,
      messages: { [PSEUDO]: pseudoMessages },
      catalog: new BrokenCategoryCatalog(demoCatalog),
      ...plugin
    }
  })
  t.teardown(() => app.close())
  return app
}

/** One page's assertion: the page is in en-XA, and what is left over is listed. */
function checkPage (t: Test, name: string, res: LightMyRequestResponse, status: number, opts: { todo?: string, langTodo?: string } = {}): void {
  t.equal(res.statusCode, status, `${name}: status`)
  t.match(res.body, /<html lang="en-XA"/, `${name}: in en-XA`, opts.langTodo === undefined ? {} : { todo: opts.langTodo })
  // The strings left are the diagnostic's `found` (shown for a todo too).
  t.same(leftOver(res.body), [], `${name}: no text outside the catalogue`, { diagnostic: true, ...(opts.todo === undefined ? {} : { todo: opts.todo }) })
}

function checkJson (t: Test, name: string, res: LightMyRequestResponse, status: number, opts: { todo?: string } = {}): void {
  t.equal(res.statusCode, status, `${name}: status`)
  t.same(jsonLeftOver(res), [], `${name}: the JSON message is from the catalogue`, { diagnostic: true, ...opts })
}

t.test('the pseudo-locale is a valid host catalogue: every key, ICU kept', async (t) => {
  const app = await pseudoApp(t)
  const res = await app.inject({ url: '/Security/login', headers: LANGUAGE })
  t.equal(res.headers['content-language'], PSEUDO)
  t.equal(Object.keys(pseudoMessages).length, Object.keys(en).length)
})

t.test('the pages of a member: index, category with filters and pagination, 404, 403', async (t) => {
  const app = await pseudoApp(t, { pageSize: 1 })
  const cookie = await signIn(app)
  const headers = { ...LANGUAGE, cookie }
  checkPage(t, 'index', await app.inject({ url: INDEX, headers }), 200)
  checkPage(t, 'index, page 2', await app.inject({ url: `${INDEX}?start=1`, headers }), 200)
  checkPage(t, 'category', await app.inject({ url: MATHS, headers }), 200)
  checkPage(t, 'category, page 2', await app.inject({ url: `${MATHS}?start=1`, headers }), 200)
  checkPage(t, 'category, filtered', await app.inject({ url: `${MATHS}?subject=Mathematics&year=Year%203`, headers }), 200)
  checkPage(t, 'category, filtered to nothing', await app.inject({ url: `${MATHS}?year=Year%2012`, headers }), 200)
  checkPage(t, '404', await app.inject({ url: `${INDEX}no-such-page`, headers }), 404)
  checkPage(t, '403', await app.inject({ url: `${INDEX}resources/staff-room/`, headers }), 403)
  checkJson(t, '404 JSON', await app.inject({ url: `${INDEX}no-such-page`, headers: { ...JSON_ACCEPT, cookie } }), 404)
  checkJson(t, '403 JSON', await app.inject({ url: `${INDEX}resources/staff-room/`, headers: { ...JSON_ACCEPT, cookie } }), 403)
  // The 500 page (and JSON) use Accept-Language only.
  checkPage(t, '500', await app.inject({ url: `${INDEX}resources/broken/`, headers }), 500)
  checkJson(t, '500 JSON', await app.inject({ url: `${INDEX}resources/broken/`, headers: { ...JSON_ACCEPT, cookie } }), 500)
})

t.test('the login page: plain, with providers and the remember box, a refusal, a lockout, rate limited', async (t) => {
  const app = await pseudoApp(t, {
    cookie: true,
    lockout: { maxPerUsername: 2 },
    loginRateLimit: { max: 4 },
    oidc: { providers: [{ id: 'school', label: PROVIDER_LABEL, issuer: 'https://idp.example.org', clientId: 'c', clientSecret: 's' }], resolveMember: async () => null }
  })
  checkPage(t, 'login', await app.inject({ url: '/Security/login', headers: LANGUAGE }), 200)
  const wrong = { email: TEACHER.email, password: 'wrong' }
  checkPage(t, 'login, refused', await postLogin(app, wrong, { headers: LANGUAGE }), 401)
  checkJson(t, '401 JSON', await postLogin(app, { ...wrong, email: 'someone@example.org' }, { headers: JSON_ACCEPT }), 401)
  await postLogin(app, wrong, { headers: LANGUAGE })
  checkPage(t, 'login, locked out', await postLogin(app, wrong, { headers: LANGUAGE }), 429)
  // Past the address's limit (other usernames: no lockout), every sign-in is refused at once.
  let limited = await postLogin(app, { email: 'other@example.org', password: 'x' }, { headers: JSON_ACCEPT })
  for (let i = 0; i < 10 && limited.statusCode !== 429; i++) limited = await postLogin(app, { email: `other${i}@example.org`, password: 'x' }, { headers: JSON_ACCEPT })
  checkJson(t, '429 JSON', limited, 429)
  checkPage(t, 'login, rate limited', await postLogin(app, { email: 'other@example.org', password: 'x' }, { headers: LANGUAGE }), 429)
})

t.test('lost password and change password', async (t) => {
  const sent: string[] = []
  const app = await pseudoApp(t, {
    passwordReset: {
      findMemberByEmail: async (email: string) => email === TEACHER.email ? TEACHER_MEMBER : null,
      setPassword: async (_member: Member, _password: string) => {},
      sendResetEmail: async ({ url }: { url: string }) => { sent.push(url) }
    }
  })
  const lost = await app.inject({ url: '/Security/lostpassword', headers: LANGUAGE })
  checkPage(t, 'lost password', lost, 200)
  const asked = await app.inject({
    method: 'POST',
    url: '/Security/lostpassword',
    headers: { ...LANGUAGE, 'content-type': 'application/x-www-form-urlencoded', cookie: withCookies(undefined, lost) },
    payload: new URLSearchParams({ _csrf: formToken(lost.body), email: TEACHER.email }).toString()
  })
  checkPage(t, 'lost password, sent', asked, 200)
  checkPage(t, 'change password, no link', await app.inject({ url: '/Security/changepassword', headers: LANGUAGE }), 400)
  // The link sent is made after the answer.
  for (let i = 0; i < 200 && sent.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5))
  t.equal(sent.length, 1, 'a link was sent')
  const first = await app.inject({ url: sent[0].slice(BASE_URL.length), headers: LANGUAGE })
  const form = await app.inject({ url: '/Security/changepassword', headers: { ...LANGUAGE, cookie: withCookies(undefined, first) } })
  checkPage(t, 'change password, the form', form, 200)
  const short = await app.inject({
    method: 'POST',
    url: '/Security/changepassword',
    headers: { ...LANGUAGE, 'content-type': 'application/x-www-form-urlencoded', cookie: withCookies(withCookies(undefined, first), form) },
    payload: new URLSearchParams({ _csrf: formToken(form.body), password: 'short', confirm: 'short' }).toString()
  })
  // A password too short: the form again, with what is wrong.
  checkPage(t, 'change password, refused', short, 400)
  t.match(short.body, 'name="confirm"', 'with the form again, not a refused form token')
})

t.test('the 503 pages: unavailable, signed out on this browser, signed out here only', async (t) => {
  const store = new DestroyFailsStore()
  const everywhere = failingAttemptStore()
  const app = await pseudoApp(t, { signOutEverywhere: { store: everywhere.store } }, store)
  const cookie = await signIn(app)
  const page = await app.inject({ url: INDEX, headers: { ...LANGUAGE, cookie } })
  const token = formToken(page.body)
  const signOut = (fields: Record<string, string>, headers: Record<string, string> = LANGUAGE) => app.inject({
    method: 'POST',
    url: '/Security/logout',
    headers: { ...headers, cookie: withCookies(cookie, page), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: token, ...fields }).toString()
  })
  everywhere.fail(true)
  checkPage(t, '503, signed out here only', await signOut({ everywhere: '1' }), 503)
  store.failing = true
  checkPage(t, '503, signed out on this browser', await signOut({}), 503)
  checkJson(t, '503 JSON, signed out', await signOut({}, JSON_ACCEPT), 503)
  store.failing = false
  everywhere.fail(false)
  // The plain 503: a member's page while the session cannot be read.
  const second = await signIn(app)
  store.readsFail = true
  checkPage(t, '503', await app.inject({ url: INDEX, headers: { ...LANGUAGE, cookie: second } }), 503)
  checkJson(t, '503 JSON', await app.inject({ url: INDEX, headers: { ...JSON_ACCEPT, cookie: second } }), 503)
})
