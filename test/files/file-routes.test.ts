import t, { type Test } from 'tap'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import fsPromises from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifyStatic from '@fastify/static'
import schoolsResources, {
  anonymousShortCircuit,
  errorCodes,
  InMemoryCatalog,
  type Catalog,
  type CatalogData,
  type CategoryWithResources,
  type FastifySchoolsResourcesOptions,
  type FileResource,
  type Member
} from '../../lib/index.js'
import { demoFiles } from '../../examples/demo-catalog.js'
import { BASE_URL, conflictWarnings, formToken, openLoginForm, postLogin, SECRET, sessionCookie, withCookies } from '../helpers/app.js'
import { AsyncStore } from '../helpers/async-store.js'
import { locationOf, rawRequest, statusOf } from '../helpers/raw-http.js'
import { fileAddress, optionalPeer } from '../../lib/files/file-routes.js'

// The protected files: served by @fastify/static to members who may see the category, the login
// redirect for everyone else, and never a byte from outside the files directory.

const PDF = readFileSync(join(demoFiles.root, 'maths', 'fraction-wall.pdf'))
const PNG = readFileSync(join(demoFiles.root, 'wellbeing', 'feelings-check-in.png'))
const SECRET_TEXT = 'TOP SECRET: outside the files directory'
const ODD_NAME = 'Année 7 – fractions #1 (50%) ?.pdf'

// A files directory of its own, with the traps a real one may hold: a symlink out, a symlink in, a
// folder, a file named with every awkward character.
const base = realpathSync(mkdtempSync(join(tmpdir(), 'schools-files-')))
const ROOT = join(base, 'root')
t.teardown(() => rmSync(base, { recursive: true, force: true }))
writeFileSync(join(base, 'outside-secret.txt'), SECRET_TEXT)
mkdirSync(join(ROOT, 'maths', 'folder'), { recursive: true })
mkdirSync(join(ROOT, 'staff'))
copyFileSync(join(demoFiles.root, 'maths', 'fraction-wall.pdf'), join(ROOT, 'maths', 'sheet.pdf'))
copyFileSync(join(demoFiles.root, 'wellbeing', 'feelings-check-in.png'), join(ROOT, 'maths', 'chart.png'))
copyFileSync(join(demoFiles.root, 'maths', 'fraction-wall.pdf'), join(ROOT, 'maths', ODD_NAME))
writeFileSync(join(ROOT, 'staff', 'plan.pdf'), '%PDF-1.4 staff plan')
symlinkSync(join(base, 'outside-secret.txt'), join(ROOT, 'maths', 'escape.pdf'))
symlinkSync(base, join(ROOT, 'maths', 'up'))
symlinkSync('sheet.pdf', join(ROOT, 'maths', 'inner-link.pdf'))
symlinkSync('loop.pdf', join(ROOT, 'maths', 'loop.pdf'))

function resource (id: string, file: string) {
  return { id, title: `Resource ${id}`, summary: 'A resource.', file, subject: 'Mathematics', yearLevels: ['Year 7'], format: 'Worksheet' }
}

const CATALOG: CatalogData = {
  categories: [
    {
      slug: 'maths',
      title: 'Mathematics',
      description: 'Number and algebra.',
      resources: [
        resource('sheet', 'maths/sheet.pdf'),
        resource('chart', 'maths/chart.png'),
        resource('odd', `maths/${ODD_NAME}`),
        // An id with a slash and a space: one path segment once encoded.
        resource('unit 1/sheet', 'maths/sheet.pdf'),
        resource('escape', 'maths/escape.pdf'),
        resource('up', 'maths/up/outside-secret.txt'),
        resource('inner', 'maths/inner-link.pdf'),
        resource('folder', 'maths/folder'),
        resource('missing', 'maths/missing.pdf'),
        resource('notdir', 'maths/sheet.pdf/inside.pdf'),
        resource('loop', 'maths/loop.pdf'),
        { id: 'web', title: 'On the web', summary: 'A link.', url: 'https://www.example.org/web.pdf', subject: 'Mathematics', yearLevels: ['Year 7'], format: 'Reading' }
      ]
    },
    { slug: 'staff-room', title: 'Staff room', description: 'For staff.', audience: ['staff'], resources: [resource('plan', 'staff/plan.pdf')] }
  ]
}

const PEOPLE: Record<string, Member & { password: string }> = {
  'teacher@example.org': { id: 't-1', name: 'Ada Teacher', password: 'teacher-password', groups: ['staff'] },
  'parent@example.org': { id: 'p-1', name: 'Pat Parent', password: 'parent-password', groups: ['parents'] }
}

async function authenticate ({ email, password }: { email: string, password: string }): Promise<Member | null> {
  const person = PEOPLE[email]
  if (person === undefined || person.password !== password) return null
  const { password: _password, ...member } = person
  return member
}

/** A catalog that counts its lookups, to prove which requests cost one. */
class CountingCatalog implements Catalog {
  constructor (readonly inner: Catalog, public lookups = 0) {}
  listCategories () { return this.inner.listCategories() }
  getCategory (slug: string) {
    this.lookups++
    return this.inner.getCategory(slug)
  }
}

interface Built {
  app: FastifyInstance
  catalog: CountingCatalog
  store: AsyncStore
  /** The warn-level log lines. */
  logs: Array<{ msg: string, resource?: string, category?: string, code?: string }>
}

async function build (t: Test, opts: { plugin?: Partial<FastifySchoolsResourcesOptions>, before?: (app: FastifyInstance) => Promise<void>, shortCircuit?: boolean } = {}): Promise<Built> {
  const logs: Built['logs'] = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  const store = new AsyncStore()
  await app.register(fastifyCookie)
  if (opts.shortCircuit === true) await app.register(anonymousShortCircuit)
  await app.register(fastifySession, { secret: SECRET, store, saveUninitialized: false, cookie: { secure: false } })
  await opts.before?.(app)
  const catalog = new CountingCatalog(new InMemoryCatalog(CATALOG))
  await app.register(schoolsResources, { catalog, authenticate, baseUrl: BASE_URL, files: { root: ROOT }, conflictLog: false, ...opts.plugin } as FastifySchoolsResourcesOptions)
  await app.ready()
  t.teardown(() => app.close())
  return { app, catalog, store, logs }
}

async function signInAs (app: FastifyInstance, email: string): Promise<string> {
  const res = await postLogin(app, { email, password: PEOPLE[email].password })
  if (res.statusCode !== 303) throw new Error(`sign-in failed: ${res.statusCode}`)
  return sessionCookie(res)!
}

const FILES = '/schools/resources/files'
const SHEET = `${FILES}/maths/sheet/sheet.pdf`
const loginFor = (path: string) => `${BASE_URL}/Security/login?BackURL=${encodeURIComponent(path)}`
const fileWarnings = (logs: Built['logs']) => logs.filter((l) => l.msg.includes('the file of resource'))

t.test('a member downloads a file: its bytes, type, file name, private no-cache and validators', async (t) => {
  const { app } = await build(t)
  const cookie = await signInAs(app, 'parent@example.org')
  const pdf = await app.inject({ url: SHEET, headers: { cookie } })
  t.equal(pdf.statusCode, 200)
  t.same(pdf.rawPayload, PDF, 'the bytes on disk')
  t.equal(pdf.headers['content-type'], 'application/pdf')
  t.equal(pdf.headers['content-length'], String(PDF.length))
  t.equal(pdf.headers['content-disposition'], 'attachment; filename=sheet.pdf')
  t.equal(pdf.headers['cache-control'], 'private, no-cache')
  t.equal(pdf.headers['accept-ranges'], 'bytes')
  t.match(pdf.headers.etag, /^W\/"/)
  t.ok(Date.parse(pdf.headers['last-modified'] as string) > 0, 'Last-Modified')
  t.equal(pdf.headers['x-content-type-options'], 'nosniff', 'the section\'s security headers too')

  const png = await app.inject({ url: `${FILES}/maths/chart/chart.png`, headers: { cookie } })
  t.equal(png.statusCode, 200)
  t.equal(png.headers['content-type'], 'image/png')
  t.equal(png.headers['content-disposition'], 'attachment; filename=chart.png')
  t.same(png.rawPayload, PNG)

  const inner = await app.inject({ url: `${FILES}/maths/inner/inner-link.pdf`, headers: { cookie } })
  t.equal(inner.statusCode, 200, 'a symlink that stays inside the files directory is followed')
  t.same(inner.rawPayload, PDF)
  t.equal(inner.headers['content-disposition'], 'attachment; filename=inner-link.pdf', 'named as the catalog names it')
})

t.test('revalidation answers 304, ranges 206 or 416, and HEAD has the headers without the body', async (t) => {
  const { app } = await build(t)
  const cookie = await signInAs(app, 'parent@example.org')
  const first = await app.inject({ url: SHEET, headers: { cookie } })
  const etag = first.headers.etag as string
  const lastModified = first.headers['last-modified'] as string

  const byTag = await app.inject({ url: SHEET, headers: { cookie, 'if-none-match': etag } })
  t.equal(byTag.statusCode, 304)
  t.equal(byTag.body, '')
  t.equal(byTag.headers['cache-control'], 'private, no-cache')
  t.equal(byTag.headers['content-disposition'], undefined, 'a 304 has no body to save')
  const byDate = await app.inject({ url: SHEET, headers: { cookie, 'if-modified-since': lastModified } })
  t.equal(byDate.statusCode, 304)
  const stale = await app.inject({ url: SHEET, headers: { cookie, 'if-none-match': 'W/"something-else"' } })
  t.equal(stale.statusCode, 200, 'another validator gets the file')

  const range = await app.inject({ url: SHEET, headers: { cookie, range: 'bytes=0-99' } })
  t.equal(range.statusCode, 206)
  t.equal(range.headers['content-range'], `bytes 0-99/${PDF.length}`)
  t.equal(range.headers['content-disposition'], 'attachment; filename=sheet.pdf', 'a part of the file keeps its name')
  t.same(range.rawPayload, PDF.subarray(0, 100))
  const tail = await app.inject({ url: SHEET, headers: { cookie, range: 'bytes=-10' } })
  t.equal(tail.statusCode, 206)
  t.same(tail.rawPayload, PDF.subarray(PDF.length - 10))
  const beyond = await app.inject({ url: SHEET, headers: { cookie, range: `bytes=${PDF.length + 10}-` } })
  t.equal(beyond.statusCode, 416)
  t.equal(beyond.headers['content-range'], `bytes */${PDF.length}`)
  const changed = await app.inject({ url: SHEET, headers: { cookie, range: 'bytes=0-9', 'if-range': 'W/"an-older-version"' } })
  t.equal(changed.statusCode, 200, 'If-Range with an old validator gets the whole file')
  t.equal(changed.rawPayload.length, PDF.length)

  const head = await app.inject({ method: 'HEAD', url: SHEET, headers: { cookie } })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['content-length'], String(PDF.length))
  t.equal(head.headers['content-disposition'], 'attachment; filename=sheet.pdf')
  t.equal(head.headers['cache-control'], 'private, no-cache')
})

t.test('412 and 416 are error answers, not the file: no Content-Disposition, so a browser does not save them as it', async (t) => {
  const { app } = await build(t)
  const cookie = await signInAs(app, 'parent@example.org')
  const first = await app.inject({ url: SHEET, headers: { cookie } })
  const lastModified = new Date(first.headers['last-modified'] as string)
  const before = new Date(lastModified.getTime() - 60_000).toUTCString()
  const cases: Array<[string, Record<string, string>, number]> = [
    ['If-Match with another validator', { 'if-match': '"another-version"' }, 412],
    ['If-Unmodified-Since before the file changed', { 'if-unmodified-since': before }, 412],
    ['a range past the end', { range: `bytes=${PDF.length + 10}-` }, 416],
    ['a range past the end, If-Match met', { range: `bytes=${PDF.length}-${PDF.length + 5}`, 'if-match': first.headers.etag as string }, 416]
  ]
  for (const [what, headers, status] of cases) {
    for (const accept of ['text/html', 'application/json']) {
      const res = await app.inject({ url: SHEET, headers: { cookie, accept, ...headers } })
      t.equal(res.statusCode, status, what)
      t.equal(res.headers['content-disposition'], undefined, `${what}: no attachment`)
      t.not(res.rawPayload.subarray(0, 5).toString(), '%PDF-', `${what}: no byte of the file`)
    }
  }
  // The same validators, met, still download the file.
  const met = await app.inject({ url: SHEET, headers: { cookie, 'if-match': first.headers.etag as string, 'if-unmodified-since': lastModified.toUTCString() } })
  t.equal(met.statusCode, 200)
  t.equal(met.headers['content-disposition'], 'attachment; filename=sheet.pdf')
  t.same(met.rawPayload, PDF)
})

t.test('names and ids with spaces, slashes, UTF-8 and reserved characters: the page\'s link downloads the file', async (t) => {
  const { app } = await build(t)
  const cookie = await signInAs(app, 'parent@example.org')
  const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  const links = [...page.body.matchAll(/<h3><a href="([^"]+)">/g)].map((m) => m[1].replaceAll('&amp;', '&'))
  const odd = links.find((l) => l.includes('/odd/'))!
  t.equal(odd, `${FILES}/maths/odd/${encodeURIComponent(ODD_NAME)}`)
  const res = await app.inject({ url: odd, headers: { cookie } })
  t.equal(res.statusCode, 200)
  t.same(res.rawPayload, PDF)
  t.equal(res.headers['content-disposition'], 'attachment; filename="Ann?e 7 ? fractions #1 (50%) ?.pdf"; filename*=UTF-8\'\'Ann%C3%A9e%207%20%E2%80%93%20fractions%20%231%20%2850%25%29%20%3F.pdf')

  const slashId = links.find((l) => l.includes('unit'))!
  t.equal(slashId, `${FILES}/maths/unit%201%2Fsheet/sheet.pdf`, 'the id is one segment')
  t.equal((await app.inject({ url: slashId, headers: { cookie } })).statusCode, 200)
  t.equal((await app.inject({ url: `${FILES}/maths/unit%201/sheet/sheet.pdf`, headers: { cookie } })).statusCode, 404, 'split into two segments it is another address')
  t.ok(links.includes('https://www.example.org/web.pdf'), 'a url resource keeps its own address')
})

t.test('the category page as JSON gives a file resource its download address as url, not its path on disk', async (t) => {
  const { app } = await build(t)
  const cookie = await signInAs(app, 'parent@example.org')
  const json = (await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie, accept: 'application/json' } })).json()
  const sheet = json.resources.find((r: { id: string }) => r.id === 'sheet')
  t.equal(sheet.url, SHEET)
  t.notOk('file' in sheet)
  t.same(Object.keys(sheet).sort(), ['format', 'id', 'subject', 'summary', 'title', 'url', 'yearLevels'], 'the same keys as a url resource')
  t.equal(json.resources.find((r: { id: string }) => r.id === 'web').url, 'https://www.example.org/web.pdf')
})

t.test('anonymous visitors get the login redirect with the file\'s own address, before any lookup, and no session', async (t) => {
  const { app, catalog, store } = await build(t, { plugin: { conflictLog: 'each' } })
  const addresses = [SHEET, `${FILES}/staff-room/plan/plan.pdf`, `${FILES}/staff-room/nothing/here.pdf`, `${FILES}/nowhere/x/y.pdf`, `${FILES}/maths/sheet/sheet.pdf?download=1`, `${FILES}/a`]
  const warnings = await conflictWarnings(async () => {
    for (const url of addresses) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await app.inject({ method, url })
        t.equal(res.statusCode, 302, `${method} ${url}`)
        t.equal(res.headers.location, loginFor(url), 'the same redirect whether the file exists or is restricted')
        t.equal(res.headers['cache-control'], 'no-store')
        t.equal(res.headers['set-cookie'], undefined)
        t.equal(res.body, '')
      }
    }
  })
  t.equal(warnings.length, addresses.length * 2, 'the spec\'s refused second redirect, once per request')
  t.equal(catalog.lookups, 0, 'an anonymous request costs no catalog lookup')
  t.equal(store.sets, 0, 'nothing stored')
})

t.test('signing in from a file link comes back to the download (real sessions, the login form)', async (t) => {
  const { app } = await build(t)
  const first = await app.inject(SHEET)
  const login = new URL(first.headers.location as string)
  t.equal(login.searchParams.get('BackURL'), SHEET)
  // The login page the redirect points to, with its form (and CSRF cookie), as a browser opens it.
  const form = await app.inject({ url: login.pathname + login.search })
  t.equal(form.statusCode, 200)
  t.match(form.body, `<input type="hidden" name="BackURL" value="${SHEET}">`)
  const signedIn = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: withCookies(undefined, form), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: formToken(form.body), email: 'parent@example.org', password: 'parent-password', BackURL: SHEET }).toString()
  })
  t.equal(signedIn.statusCode, 303)
  t.equal(signedIn.headers.location, `${BASE_URL}${SHEET}`, 'back to the file')
  const back = await app.inject({ url: new URL(signedIn.headers.location as string).pathname, headers: { cookie: sessionCookie(signedIn)! } })
  t.equal(back.statusCode, 200)
  t.equal(back.headers['content-disposition'], 'attachment; filename=sheet.pdf')
  t.same(back.rawPayload, PDF)
})

t.test('a member outside the category\'s audience gets the 403, for any address in it; a member inside gets the file', async (t) => {
  const { app } = await build(t)
  const parent = await signInAs(app, 'parent@example.org')
  for (const url of [`${FILES}/staff-room/plan/plan.pdf`, `${FILES}/staff-room/no-such-resource/x.pdf`, `${FILES}/staff-room/plan/wrong-name.pdf`]) {
    const page = await app.inject({ url, headers: { cookie: parent } })
    t.equal(page.statusCode, 403, url)
    t.match(page.body, 'You don&#39;t have access to Staff room')
    t.equal(page.headers['content-disposition'], undefined)
    t.notMatch(page.body, 'staff plan')
    const json = await app.inject({ url, headers: { cookie: parent, accept: 'application/json' } })
    t.equal(json.statusCode, 403)
    t.same(json.json(), { statusCode: 403, code: 'FST_SR_FORBIDDEN', error: 'Forbidden', message: 'You don\'t have access to Staff room.' })
  }
  const teacher = await signInAs(app, 'teacher@example.org')
  const plan = await app.inject({ url: `${FILES}/staff-room/plan/plan.pdf`, headers: { cookie: teacher } })
  t.equal(plan.statusCode, 200)
  t.equal(plan.body, '%PDF-1.4 staff plan')
  t.equal((await app.inject({ url: `${FILES}/staff-room/no-such-resource/x.pdf`, headers: { cookie: teacher } })).statusCode, 404, 'inside the audience, a missing resource is a 404')
})

t.test('with restrictedCategories \'hide\', every address in a hidden category is answered as an unknown file: the same 404', async (t) => {
  const { app } = await build(t, { plugin: { restrictedCategories: 'hide' } })
  // As a browser keeps it: the session and the CSRF cookie the first page sets, so no answer sets a new one.
  const signedIn = await signInAs(app, 'parent@example.org')
  const parent = withCookies(signedIn, await app.inject({ url: '/schools/resources/', headers: { cookie: signedIn } }))
  const withoutDate = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'date'))
  // The logout form's token is left out of the comparison: every page makes a new one (session/csrf.ts).
  const body = (res: { body: string }) => res.body.replace(/name="_csrf" value="[^"]+"/, 'name="_csrf" value="TOKEN"')
  for (const accept of ['text/html', 'application/json']) {
    const headers = { cookie: parent, accept }
    // Unknown: a category that does not exist, and a resource that does not exist in an open one.
    const unknown = await app.inject({ url: `${FILES}/no-such-category/plan/plan.pdf`, headers })
    const missing = await app.inject({ url: `${FILES}/maths/no-such-resource/x.pdf`, headers })
    t.equal(unknown.statusCode, 404)
    for (const url of [`${FILES}/staff-room/plan/plan.pdf`, `${FILES}/staff-room/no-such-resource/x.pdf`]) {
      const hidden = await app.inject({ url, headers })
      t.equal(hidden.statusCode, 404, `${accept}: ${url}`)
      t.same(withoutDate(hidden.headers), withoutDate(unknown.headers), `${accept}: the same headers`)
      t.equal(body(hidden), body(unknown), `${accept}: the same body`)
      t.equal(body(hidden), body(missing))
      t.notMatch(hidden.body, /Staff room|staff plan|FST_SR_FORBIDDEN/)
    }
  }
  const teacher = await signInAs(app, 'teacher@example.org')
  const plan = await app.inject({ url: `${FILES}/staff-room/plan/plan.pdf`, headers: { cookie: teacher } })
  t.equal(plan.statusCode, 200, 'the audience still gets the file')
  t.equal(plan.body, '%PDF-1.4 staff plan')
})

t.test('traversal, encoded slashes, NUL, backslashes, absolute paths: raw on the wire, a 404 or the login redirect, never a byte from outside', async (t) => {
  const { app, catalog } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const cookie = await signInAs(app, 'teacher@example.org')
  const HOSTILE = [
    'maths/sheet/../../../../outside-secret.txt', '../../outside-secret.txt', 'maths/../../../outside-secret.txt',
    'maths/sheet/..%2F..%2F..%2Foutside-secret.txt', '%2e%2e/%2e%2e/outside-secret.txt', 'maths/sheet/%2e%2e%2f%2e%2e%2foutside-secret.txt',
    'maths%2Fsheet%2Fsheet.pdf', 'maths/sheet%2Fsheet.pdf', 'maths/sheet/sheet.pdf%2F..%2F..%2Fescape.pdf',
    'maths/sheet/%252e%252e%252f%252e%252e%252foutside-secret.txt', 'maths/%252e%252e/sheet.pdf', 'maths/sheet/sheet%252Epdf',
    'maths/sheet/..%5C..%5Coutside-secret.txt', 'maths\\sheet\\sheet.pdf', 'maths/sheet/sheet.pdf%5C',
    'maths/sheet/sheet.pdf%00', 'maths/sheet/sheet.pdf%00.png', 'maths/%00/sheet.pdf',
    '/etc/passwd', 'maths/sheet//etc/passwd', 'maths/sheet/%2Fetc%2Fpasswd', 'maths/sheet/C:%5Cwindows%5Cwin.ini',
    'maths/escape/escape.pdf', 'maths/up/outside-secret.txt', 'maths/folder/folder', 'maths/sheet/folder', 'maths/sheet/maths',
    'maths/sheet/sheet.PDF', 'MATHS/sheet/sheet.pdf', 'maths/sheet/sheet.pdf/', 'maths/sheet/./sheet.pdf', 'maths/./sheet/sheet.pdf',
    'maths/sheet/%zz', 'maths/sheet/%C0%AE%C0%AE', '%E0%A4/sheet/sheet.pdf', 'nowhere/sheet/sheet.pdf', 'maths/sheet', 'maths', '', `maths/sheet/${'a'.repeat(1200)}.pdf`, 'maths/web/web.pdf'
  ]
  const outcomes: Record<string, number> = {}
  for (const rest of HOSTILE) {
    const path = `${FILES}/${rest}`
    const anonymous = await rawRequest(port, path)
    const member = await rawRequest(port, path, cookie)
    for (const [who, raw] of [['anonymous', anonymous], ['member', member]] as const) {
      const status = statusOf(raw)
      outcomes[`${who} ${status}`] = (outcomes[`${who} ${status}`] ?? 0) + 1
      t.notMatch(raw, SECRET_TEXT, `${who} ${rest.slice(0, 60)}: nothing from outside`)
      t.notMatch(raw, /root:x:0/, 'nor /etc/passwd')
      t.notMatch(raw, /%PDF/, 'nor a file under another address')
      t.ok(status < 500, `${who} ${rest.slice(0, 60)}: no 5xx (${status})`)
      if (who === 'anonymous' && status === 302) t.match(locationOf(raw), /^https:\/\/www\.example\.org\/Security\/login\?BackURL=%2Fschools%2Fresources%2Ffiles%2F/)
    }
    // A member never gets a redirect here: a 404 (the page), or 400/414 for what Node or the section refuse.
    t.ok([400, 404, 414].includes(statusOf(member)), `member ${rest.slice(0, 60)}: ${statusOf(member)}`)
  }
  t.comment(`file addresses: ${HOSTILE.length}; outcomes ${JSON.stringify(outcomes)}`)
  t.ok(outcomes['member 404'] >= HOSTILE.length - 4, 'nearly all are the 404 page')
  t.ok(outcomes['anonymous 302'] >= HOSTILE.length - 4, 'and the login redirect for a visitor')
  t.ok(catalog.lookups < HOSTILE.length, `malformed addresses cost no lookup (${catalog.lookups} for ${HOSTILE.length})`)
  t.equal(statusOf(await rawRequest(port, SHEET, cookie)), 200, 'the real file is still served')
  t.equal(statusOf(await rawRequest(port, `${SHEET}?v=2&x=..%2F..%2F`, cookie)), 200, 'a query string is no part of the address')
})

t.test('fileAddress reads three segments of the address as sent, each decoded once', async (t) => {
  t.same(fileAddress('/s/files/maths/unit%201%2Fsheet/a%20b.pdf?x=1', 'maths/unit 1/sheet/a b.pdf'), { slug: 'maths', id: 'unit 1/sheet', name: 'a b.pdf' })
  t.equal(fileAddress('/s/files/maths/sheet/extra/sheet.pdf', 'maths/sheet/extra/sheet.pdf'), undefined, 'four segments')
  t.equal(fileAddress('/s/files/sheet/sheet.pdf', 'sheet/sheet.pdf'), undefined, 'two segments')
  t.same(fileAddress('/s/files/maths/%252e%252e/x', 'maths/%2e%2e/x'), { slug: 'maths', id: '%2e%2e', name: 'x' }, 'decoded once, never twice')
  t.equal(fileAddress('/s/files/maths/sheet/%C0%AE', 'maths/sheet/%C0%AE'), undefined, 'a malformed escape is no address (the router already refuses it)')
})

t.test('a symlink out of the directory, a folder and a missing file: the 404 page (JSON 404), one warning each', async (t) => {
  const { app, logs } = await build(t)
  const cookie = await signInAs(app, 'parent@example.org')
  for (const [id, file] of [['escape', 'escape.pdf'], ['up', 'outside-secret.txt'], ['folder', 'folder'], ['missing', 'missing.pdf'], ['notdir', 'inside.pdf'], ['loop', 'loop.pdf']]) {
    const url = `${FILES}/maths/${id}/${file}`
    for (let i = 0; i < 3; i++) {
      const page = await app.inject({ url, headers: { cookie } })
      t.equal(page.statusCode, 404, url)
      t.match(page.body, /<h1>Page not found<\/h1>/, 'the section\'s 404 page')
      t.equal(page.headers['cache-control'], 'private, no-store')
      t.notMatch(page.body, SECRET_TEXT)
    }
    const json = await app.inject({ url, headers: { cookie, accept: 'application/json' } })
    t.equal(json.statusCode, 404)
    t.same(json.json(), { statusCode: 404, error: 'Not Found', message: 'There is no page at this address in the resources section.' })
  }
  const warned = fileWarnings(logs)
  t.same(warned.map((l) => l.resource), ['escape', 'up', 'folder', 'missing', 'notdir', 'loop'], 'one warning per resource, with its id')
  t.ok(warned.every((l) => l.code === 'FST_SR_FILE_UNAVAILABLE'), 'each with its code')
  t.match(warned[0].msg, `"maths/escape.pdf" leads outside the files directory (a symlink to ${join(base, 'outside-secret.txt')})`)
  t.match(warned[2].msg, '"maths/folder" is not a file')
  t.match(warned[3].msg, `"maths/missing.pdf" is missing from ${ROOT}`)
  t.match(warned[4].msg, '"maths/sheet.pdf/inside.pdf" cannot be opened (ENOTDIR)')
  t.match(warned[5].msg, '"maths/loop.pdf" cannot be opened (ELOOP)')

  // The file arrives: served. It goes again: a new warning, so that the site owner hears of it again.
  writeFileSync(join(ROOT, 'maths', 'missing.pdf'), '%PDF-1.4 late')
  t.teardown(() => rmSync(join(ROOT, 'maths', 'missing.pdf'), { force: true }))
  t.equal((await app.inject({ url: `${FILES}/maths/missing/missing.pdf`, headers: { cookie } })).body, '%PDF-1.4 late')
  rmSync(join(ROOT, 'maths', 'missing.pdf'))
  t.equal((await app.inject({ url: `${FILES}/maths/missing/missing.pdf`, headers: { cookie } })).statusCode, 404)
  t.equal(fileWarnings(logs).length, 7)
})

t.test('a catalog of the host\'s own is checked where it enters: unsafe paths and a missing files option get the 404', async (t) => {
  const sheet = (await new InMemoryCatalog(CATALOG).getCategory('maths'))!.resources[0] as FileResource
  const hostile = ['../outside-secret.txt', '/etc/passwd', 'maths/../../outside-secret.txt', 'maths\\sheet.pdf', 'maths/sheet.pdf\u0000', 'maths//sheet.pdf', 'C:/x.pdf']
  const category: CategoryWithResources = {
    slug: 'maths',
    title: 'Mathematics',
    description: 'Unchecked.',
    resources: [...hostile.map((file, i) => ({ ...sheet, id: `h${i}`, file })), { ...sheet, id: 'ok' }]
  }
  const own: Catalog = { listCategories: async () => [category], getCategory: async (slug) => slug === 'maths' ? category : undefined }
  const { app, logs } = await build(t, { plugin: { catalog: own } })
  const cookie = await signInAs(app, 'parent@example.org')
  for (const [i, file] of hostile.entries()) {
    const name = encodeURIComponent(file.slice(file.lastIndexOf('/') + 1))
    const res = await app.inject({ url: `${FILES}/maths/h${i}/${name}`, headers: { cookie } })
    t.equal(res.statusCode, 404, JSON.stringify(file))
    t.notMatch(res.body, SECRET_TEXT)
  }
  // Left out of the category where the record entered (lib/section/catalog.ts), so there is no file to serve.
  const refused = logs.filter((l) => l.code === 'FST_SR_INVALID_CATALOG_RECORD')
  t.equal(refused.length, hostile.length, 'each one named for the site owner')
  t.match(refused[0].msg, 'getCategory("maths").resources[0].file must not contain a ".." segment, got "../outside-secret.txt"')
  t.same(fileWarnings(logs), [], 'never reaches the disk')
  t.equal((await app.inject({ url: `${FILES}/maths/ok/sheet.pdf`, headers: { cookie } })).statusCode, 200, 'a sound one is served')

  const noFiles = await build(t, { plugin: { catalog: own, files: undefined } })
  const member = await signInAs(noFiles.app, 'parent@example.org')
  t.equal((await noFiles.app.inject({ url: `${FILES}/maths/ok/sheet.pdf`, headers: { cookie: member } })).statusCode, 404)
  t.match(fileWarnings(noFiles.logs)[0].msg, 'cannot be served: the section has no files option')
  t.notOk(noFiles.app.hasReplyDecorator('sendFile'), 'without files, @fastify/static is not registered at all')
})

t.test('the files option is checked at start-up', async (t) => {
  const file = join(ROOT, 'maths', 'sheet.pdf')
  const bad: Array<[unknown, RegExp]> = [
    [null, /invalid option "files": must be \{ root: '<directory>' \}/],
    ['/srv/files', /invalid option "files": must be \{ root/],
    [{}, /invalid option "files": must be \{ root/],
    [{ root: '' }, /invalid option "files": must be \{ root/],
    [{ root: join(base, 'no-such-dir') }, new RegExp(`invalid option "files.root": must be an existing directory; ${join(base, 'no-such-dir')} cannot be opened \\(ENOENT\\)`)],
    [{ root: file }, new RegExp(`invalid option "files.root": must be a directory; ${file} is a file`)]
  ]
  for (const [files, message] of bad) {
    const app = Fastify()
    await app.register(fastifyCookie)
    await app.register(fastifySession, { secret: SECRET })
    app.register(schoolsResources, { catalog: new InMemoryCatalog(CATALOG), authenticate, files } as FastifySchoolsResourcesOptions)
    await t.rejects(async () => { await app.ready() }, { code: 'FST_SR_INVALID_OPTION', message }, JSON.stringify(files))
    await app.close()
  }

  const none = Fastify()
  await none.register(fastifyCookie)
  await none.register(fastifySession, { secret: SECRET })
  none.register(schoolsResources, { catalog: new InMemoryCatalog(CATALOG), authenticate })
  await t.rejects(async () => { await none.ready() }, {
    code: 'FST_SR_INVALID_OPTION',
    message: 'fastify-schools-resources: invalid option "files": is required: the catalog names a file (categories[0].resources[0].file "maths/sheet.pdf"), so set files: { root: \'<the directory that holds it>\' }'
  }, 'an InMemoryCatalog that names files needs the option')
  await none.close()

  // A relative root is taken from the working directory.
  const cwd = process.cwd()
  t.teardown(() => process.chdir(cwd))
  process.chdir(base)
  const { app } = await build(t, { plugin: { files: { root: 'root' } } })
  const cookie = await signInAs(app, 'parent@example.org')
  t.equal((await app.inject({ url: SHEET, headers: { cookie } })).statusCode, 200)
})

t.test('a host that registered @fastify/static itself: its decorator is reused, its settings change nothing here', async (t) => {
  const hostRoot = join(base, 'host-public')
  mkdirSync(hostRoot, { recursive: true })
  writeFileSync(join(hostRoot, 'site.css'), 'body { color: black }')
  writeFileSync(join(hostRoot, 'sheet.pdf'), 'the host\'s own sheet.pdf')
  const { app } = await build(t, {
    before: async (app) => {
      await app.register(fastifyStatic, {
        root: hostRoot,
        prefix: '/public/',
        maxAge: '1d',
        immutable: true,
        dotfiles: 'deny',
        index: ['index.html'],
        // A host caching its public assets hard: never for the section's files.
        setHeaders: (reply) => { reply.header('cache-control', 'public, max-age=31536000, immutable') }
      })
    }
  })
  const cookie = await signInAs(app, 'parent@example.org')
  const res = await app.inject({ url: SHEET, headers: { cookie } })
  t.equal(res.statusCode, 200)
  t.same(res.rawPayload, PDF, 'from the files directory, not the host\'s root')
  t.equal(res.headers['cache-control'], 'private, no-cache', 'not the host\'s public caching')
  t.equal(res.headers['content-disposition'], 'attachment; filename=sheet.pdf')
  const asset = await app.inject('/public/site.css')
  t.equal(asset.statusCode, 200, 'the host\'s static files still work')
  t.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable')
  const anonymous = await app.inject(SHEET)
  t.equal(anonymous.statusCode, 302)
  t.equal(anonymous.headers['cache-control'], 'no-store', 'the redirect keeps its own header')
})

t.test('a host that registers @fastify/static after the section: both work', async (t) => {
  const { app } = await build(t)
  t.notOk(app.hasReplyDecorator('sendFile'), 'the section\'s decorator stays in its own context')
  const later = Fastify()
  await later.register(fastifyCookie)
  await later.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  await later.register(schoolsResources, { catalog: new InMemoryCatalog(CATALOG), authenticate, baseUrl: BASE_URL, files: { root: ROOT } })
  await later.register(fastifyStatic, { root: ROOT, prefix: '/all/', serve: false })
  later.get('/host-download', (_request, reply) => reply.sendFile('maths/chart.png'))
  await later.ready()
  t.teardown(() => later.close())
  t.equal((await later.inject('/host-download')).statusCode, 200)
  const cookie = await signInAs(later, 'parent@example.org')
  t.same((await later.inject({ url: SHEET, headers: { cookie } })).rawPayload, PDF)
})

t.test('the anonymous short-circuit answers file addresses too; with getMember there is no mark and the guard answers', async (t) => {
  let later = 0
  const { app } = await build(t, { shortCircuit: true, before: async (app) => { app.addHook('onRequest', async () => { later++ }) } })
  const res = await app.inject(SHEET)
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, loginFor(SHEET))
  t.equal(later, 0, 'answered before the hooks registered after it')
  await app.inject({ url: SHEET, headers: { cookie: 'sessionId=x' } })
  t.equal(later, 1, 'a request with a session cookie takes the normal path')

  const host = await build(t, {
    plugin: {
      signIn: false,
      authenticate: undefined,
      getMember: (request) => request.headers['x-member'] === 'staff' ? { id: 's', name: 'Staff', groups: ['staff'] } : null
    }
  })
  t.equal((await host.app.inject(`${FILES}/staff-room/plan/plan.pdf`)).statusCode, 302)
  const plan = await host.app.inject({ url: `${FILES}/staff-room/plan/plan.pdf`, headers: { 'x-member': 'staff' } })
  t.equal(plan.statusCode, 200)
  t.equal(plan.body, '%PDF-1.4 staff plan')
})

t.test('the files path itself, other methods and an empty address get the section\'s 404 page', async (t) => {
  const { app } = await build(t)
  const cookie = await signInAs(app, 'parent@example.org')
  for (const [method, url] of [['GET', FILES], ['POST', SHEET], ['DELETE', SHEET], ['GET', `${FILES}/`]] as const) {
    const res = await app.inject({ method, url, headers: { cookie } })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.match(res.body, /<h1>Page not found<\/h1>/)
  }
})

t.test('many members downloading at once, over real sockets, each get their own bytes', async (t) => {
  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const parent = await signInAs(app, 'parent@example.org')
  const teacher = await signInAs(app, 'teacher@example.org')
  const jobs = Array.from({ length: 40 }, (_, i) => {
    const start = (i * 97) % (PDF.length - 200)
    switch (i % 4) {
      case 0: return { cookie: parent, url: SHEET, range: `bytes=${start}-${start + 199}`, status: 206, bytes: PDF.subarray(start, start + 200) }
      case 1: return { cookie: teacher, url: `${FILES}/maths/chart/chart.png`, status: 200, bytes: PNG }
      case 2: return { cookie: teacher, url: `${FILES}/staff-room/plan/plan.pdf`, status: 200, bytes: Buffer.from('%PDF-1.4 staff plan') }
      default: return { cookie: parent, url: `${FILES}/staff-room/plan/plan.pdf`, status: 403, bytes: undefined }
    }
  })
  const results = await Promise.all(jobs.map(async (job) => {
    const res = await fetch(origin + job.url, { headers: { cookie: job.cookie, ...(job.range === undefined ? {} : { range: job.range }) } })
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()) }
  }))
  results.forEach((res, i) => {
    t.equal(res.status, jobs[i].status, `request ${i}`)
    if (jobs[i].bytes !== undefined) t.same(res.body, jobs[i].bytes, `request ${i}: its bytes`)
  })
})

t.test('sign-in from a file link keeps working with a session cookie of a visitor who had one', async (t) => {
  // A visitor whose session holds something else (say a cart) is still anonymous: the redirect, then
  // back to the file after sign-in, with the session data kept.
  const { app } = await build(t, {
    before: async (app) => {
      app.get('/cart', async (request) => {
        request.session.set('cart' as 'member', ['a book'] as never)
        return 'ok'
      })
    }
  })
  const cart = await app.inject('/cart')
  const cookie = sessionCookie(cart)!
  const res = await app.inject({ url: SHEET, headers: { cookie } })
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, loginFor(SHEET))
  const form = await openLoginForm(app, '/Security/login', cookie)
  const signedIn = await postLogin(app, { email: 'teacher@example.org', password: 'teacher-password', BackURL: SHEET }, { form })
  t.equal(signedIn.headers.location, `${BASE_URL}${SHEET}`)
  t.same((await app.inject({ url: SHEET, headers: { cookie: sessionCookie(signedIn)! } })).rawPayload, PDF)
})

t.test('a host catalog\'s link resource with file: null (a nullable column) is a link, not a 500', async (t) => {
  const sheet = (await new InMemoryCatalog(CATALOG).getCategory('maths'))!.resources[0] as FileResource
  const link = { ...sheet, id: 'link', file: null, url: 'https://www.example.org/elsewhere.pdf' } as unknown as FileResource
  const category: CategoryWithResources = { slug: 'maths', title: 'Mathematics', description: 'Unchecked.', resources: [link, { ...sheet, id: 'ok' }] }
  const own: Catalog = { listCategories: async () => [category], getCategory: async (slug) => slug === 'maths' ? category : undefined }
  const { app } = await build(t, { plugin: { catalog: own } })
  const cookie = await signInAs(app, 'parent@example.org')
  const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
  t.equal(page.statusCode, 200)
  t.match(page.body, '<a href="https://www.example.org/elsewhere.pdf">')
  const json = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie, accept: 'application/json' } })
  t.equal(json.statusCode, 200)
  t.equal(json.json().resources[0].url, 'https://www.example.org/elsewhere.pdf')
  t.equal(json.json().resources[1].url, `${FILES}/maths/ok/sheet.pdf`)
  t.equal((await app.inject({ url: `${FILES}/maths/link/elsewhere.pdf`, headers: { cookie } })).statusCode, 404, 'no file to serve')
  t.equal((await app.inject({ url: `${FILES}/maths/ok/sheet.pdf`, headers: { cookie } })).statusCode, 200)
})

t.test('a file removed between the check and its opening: the 404 page, without the download\'s headers', async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'schools-vanish-')))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'maths'))
  const path = join(dir, 'maths', 'sheet.pdf')
  writeFileSync(path, '%PDF-1.4 soon gone')
  const { app } = await build(t, { plugin: { files: { root: dir } } })
  const cookie = await signInAs(app, 'parent@example.org')
  t.equal((await app.inject({ url: SHEET, headers: { cookie } })).statusCode, 200)
  // The race (a deploy cleaning the folder) cannot be timed from outside: the file goes right after the
  // section's own access check, before @fastify/static opens it.
  const access = fsPromises.access
  fsPromises.access = async (...args: Parameters<typeof access>) => {
    await access(...args)
    rmSync(path)
  }
  t.teardown(() => { fsPromises.access = access })
  const res = await app.inject({ url: SHEET, headers: { cookie } })
  t.equal(res.statusCode, 404)
  t.match(res.headers['content-type'], /text\/html/)
  t.equal(res.headers['content-disposition'], undefined, 'a browser must not save the page as sheet.pdf')
  t.equal(res.headers['cache-control'], 'private, no-store', 'the 404 page\'s own')
  t.match(res.body, 'Page not found')
})

t.test('a file address a member gets the 404 for costs one member lookup, as a download does', async (t) => {
  let lookups = 0
  const { app } = await build(t, {
    plugin: {
      signIn: false,
      getMember: () => { lookups++; return { id: 'p-1', name: 'Pat Parent', groups: ['parents'] } }
    }
  })
  for (const url of [`${FILES}/maths/no-such-resource/sheet.pdf`, `${FILES}/maths/sheet/other-name.pdf`, `${FILES}/maths/escape/escape.pdf`, SHEET]) {
    lookups = 0
    const res = await app.inject(url)
    t.equal(res.statusCode, url === SHEET ? 200 : 404, url)
    t.equal(lookups, 1, `one lookup: ${url}`)
  }
})

// The optional peers missing altogether, in a host without them: optional-peers.test.ts (full tier).
t.test('a package that is there but fails to load is not reported as missing', async (t) => {
  const broken = Object.assign(new Error("Cannot find module 'glob' imported from @fastify/static"), { code: 'ERR_MODULE_NOT_FOUND' })
  await t.rejects(optionalPeer('@fastify/static', () => Promise.reject(broken)), broken, 'another package missing: its own error')
  const syntax = new SyntaxError('Unexpected token')
  await t.rejects(optionalPeer('@fastify/static', () => Promise.reject(syntax)), syntax)
  const missing = Object.assign(new Error("Cannot find package '@fastify/static' imported from /app/x.js"), { code: 'ERR_MODULE_NOT_FOUND' })
  await t.rejects(optionalPeer('@fastify/static', () => Promise.reject(missing)), new errorCodes.FST_SR_MISSING_PACKAGE('files', '@fastify/static', '@fastify/static content-disposition'))
  const required = Object.assign(new Error("Cannot find module 'content-disposition'\nRequire stack:\n- /app/x.js"), { code: 'MODULE_NOT_FOUND' })
  await t.rejects(optionalPeer('content-disposition', () => Promise.reject(required)), new errorCodes.FST_SR_MISSING_PACKAGE('files', 'content-disposition', '@fastify/static content-disposition'), 'missing, as require says it')
  t.equal(await optionalPeer('x', async () => 42), 42)
})
