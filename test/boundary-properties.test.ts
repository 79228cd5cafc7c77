import t, { type Test } from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { defaultViews, InMemoryCatalog, REDIRECT_CONFLICT_WARNING, SafeHtml, type Catalog, type Views } from '../lib/index.js'
import { isMember } from '../lib/session/member.js'
import { buildTestApp, BASE_URL, postLogin, SECRET, sessionCookie, TEACHER } from './helpers/app.js'
import { capturedLog, ERROR, WARN, type LogLine } from './helpers/log-capture.js'
import { demoCatalog, demoFiles } from '../examples/demo-catalog.js'

// Issue 18: the host boundary as a property. Whatever wrong shape a host hands in (getMember, the
// catalog, the views, a route's config), no visitor is let in, no raw message reaches a client, no
// request is answered 5xx without an error line of its own, and a mistake repeated costs no second warn
// line. The getMember spread on its own is test/session/get-member-boundary.test.ts; here the boundaries
// fail together and one at a time. Bounded runs; fast-check prints the seed of a failing run.

const RUNS = 100
// Planted in every thrown message and every value the section must not pass on: it must never be sent.
const MARK = 'hunter2-boundary-mark'
const THROWN = `SQLITE_BUSY (password=${MARK})`

const inner = new InMemoryCatalog(demoCatalog)
const MEMBER = { id: 'm-1', name: 'Ada Member' }
const HOST_PAGE = 'members-only host content'

const MATHS = '/schools/resources/resources/maths/'
const FILE = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'
// The pages that ask who is signed in and answer members only.
const MEMBERS_ONLY = [MATHS, '/schools/resources/resources/no-such-category/', FILE, '/members', '/decorated']
const OPEN = ['/schools/resources/', '/schools/resources/nowhere']

/** A host value: as given, thrown, or a rejected promise (both carrying the mark). */
type Source = { kind: 'good' } | { kind: 'value', value: unknown } | { kind: 'throws' } | { kind: 'rejects' }

function produce (s: Source, good: () => unknown): unknown {
  if (s.kind === 'throws') throw new Error(THROWN)
  if (s.kind === 'rejects') return Promise.reject(new Error(THROWN))
  return s.kind === 'good' ? good() : s.value
}

function describe (s: Source): string {
  if (s.kind !== 'value') return s.kind
  try {
    return JSON.stringify(s.value) ?? String(s.value)
  } catch {
    return typeof s.value
  }
}

/** Wrong shapes, plus what the host may throw, plus (weight `good`) the right value. */
function sources (wrong: fc.Arbitrary<unknown>, good = 2): fc.Arbitrary<Source> {
  return fc.oneof(
    { weight: good, arbitrary: fc.constant<Source>({ kind: 'good' }) },
    { weight: 5, arbitrary: wrong.map((value): Source => ({ kind: 'value', value })) },
    { weight: 1, arbitrary: fc.constant<Source>({ kind: 'throws' }) },
    { weight: 1, arbitrary: fc.constant<Source>({ kind: 'rejects' }) }
  )
}

// getMember: falsy values (visitors) and truthy values that are not members (host user objects, partial
// objects, extra fields carrying the mark).
const falsyMember = fc.constantFrom<unknown>(null, undefined, false, 0, '', Number.NaN)
const notAMember = fc.oneof(
  fc.anything(),
  fc.record({ id: fc.anything(), name: fc.anything(), groups: fc.anything(), note: fc.constant(MARK) }, { requiredKeys: [] }),
  fc.record({ id: fc.oneof(fc.integer(), fc.string()), username: fc.constant(MARK), displayName: fc.string() }),
  fc.record({ id: fc.constant('m-2'), name: fc.constant(MARK), groups: fc.oneof(fc.constant(MARK), fc.array(fc.anything()), fc.constant([''])) })
).filter((value) => !isMember(value))

// Catalog records as an ORM might hand them in: wrong or missing fields, extra columns, off-site links.
const badResource = fc.record({
  id: fc.oneof(fc.constant('r-1'), fc.constant('r-2'), fc.anything()),
  title: fc.oneof(fc.constant('A title'), fc.anything()),
  summary: fc.oneof(fc.constant('A summary'), fc.anything()),
  url: fc.oneof(
    fc.constant('https://www.example.org/files/sheet.pdf'),
    fc.constant(`javascript:alert('${MARK}')`), fc.constant(`data:text/html,${MARK}`),
    fc.constant(`/\\evil.example/${MARK}`), fc.constant(`/\t/evil.example/${MARK}`), fc.constant(`//evil.example/${MARK}`),
    fc.anything()
  ),
  subject: fc.oneof(fc.constant('Maths'), fc.anything()),
  yearLevels: fc.oneof(fc.constant(['Year 7']), fc.anything()),
  format: fc.oneof(fc.constant('Worksheet'), fc.anything()),
  secretColumn: fc.constant(MARK)
}, { requiredKeys: ['secretColumn'] })
const badCategory = fc.oneof(
  fc.anything(),
  fc.record({
    slug: fc.oneof(fc.constant('maths'), fc.anything()),
    title: fc.oneof(fc.constant('Mathematics'), fc.anything()),
    description: fc.oneof(fc.constant('Number.'), fc.anything()),
    audience: fc.oneof(fc.constant(undefined), fc.constant(['staff']), fc.constant([MARK, '']), fc.anything()),
    resources: fc.oneof(fc.array(badResource, { maxLength: 3 }), fc.anything()),
    passwordHash: fc.constant(MARK)
  }, { requiredKeys: ['passwordHash'] })
)
const badList = fc.oneof(fc.anything(), fc.array(badCategory, { maxLength: 3 }))

// View answers: anything but a page ({ title: string, body: string | SafeHtml }) or, for the layout, markup.
function isPage (value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  const { title, body } = value as { title?: unknown, body?: unknown }
  return typeof title === 'string' && (typeof body === 'string' || body instanceof SafeHtml)
}
const notAPage = fc.oneof(
  fc.anything(),
  fc.record({ title: fc.anything(), body: fc.anything(), note: fc.constant(MARK) }, { requiredKeys: ['note'] })
).filter((value) => !isPage(value))
const notMarkup = fc.oneof(fc.anything(), fc.record({ html: fc.constant(MARK) })).filter((value) => typeof value !== 'string' && !(value instanceof SafeHtml))

type ViewName = 'category' | 'index' | 'notFound' | 'login' | 'layout'
const PAGE_VIEWS = ['category', 'index', 'notFound', 'login'] as const

interface Host {
  member: Source
  falsy: unknown
  getCategory: Source
  listCategories: Source
  view: { name: ViewName, answer: Source }
}

const hosts: fc.Arbitrary<Host> = fc.record({
  member: sources(notAMember, 3),
  falsy: falsyMember,
  getCategory: sources(fc.oneof(fc.constant(null), fc.constant(undefined), badCategory)),
  listCategories: sources(badList),
  view: fc.oneof(
    fc.record({ name: fc.constantFrom(...PAGE_VIEWS), answer: sources(notAPage) }),
    fc.record({ name: fc.constant('layout' as const), answer: sources(notMarkup) })
  )
})

interface Probe {
  app: FastifyInstance
  lines: LogLine[]
  use: (host: Host) => void
  /** Sends a request with its own id (so that its log lines can be found) and returns the answer. */
  request: (url: string, json: boolean) => Promise<LightMyRequestResponse & { id: string }>
}

/** A host as the README wires it, whose getMember, catalog and views answer as `use` last set. */
async function probe (t: Test): Promise<Probe> {
  const log = capturedLog()
  let host: Host | undefined
  const current = (): Host => host!
  const catalog: Catalog = {
    listCategories: async () => produce(current().listCategories, () => inner.listCategories()) as never,
    getCategory: async (slug) => produce(current().getCategory, () => inner.getCategory(slug)) as never
  }
  // Each view gives the built-in one's answer unless it is the one that goes wrong.
  const views: Partial<Views> = Object.fromEntries(([...PAGE_VIEWS, 'layout'] as const).map((name) => [
    name,
    (data: never, ctx: never) => {
      const { view } = current()
      const builtIn = (): unknown => (defaultViews[name] as (data: never, ctx: never) => unknown).call(defaultViews, data, ctx)
      return view.name === name ? produce(view.answer, builtIn) : builtIn()
    }
  ]))
  const { app } = await buildTestApp({
    fastify: { logger: log.logger, requestIdHeader: 'x-test-id' },
    plugin: {
      catalog,
      views,
      getMember: () => {
        const { member, falsy } = current()
        return produce(member.kind === 'value' && !(member.value as boolean) ? { kind: 'value', value: falsy } : member, () => MEMBER) as never
      }
    },
    extend (app) {
      app.get('/members', { config: { membersOnly: true } }, async () => HOST_PAGE)
      app.get('/decorated', { preHandler: app.membersOnly() }, async () => HOST_PAGE)
    }
  })
  t.teardown(() => app.close())
  let n = 0
  return {
    app,
    lines: log.lines,
    use (next) { host = next },
    async request (url, json) {
      const id = `probe-${++n}`
      const res = await app.inject({ url, headers: { 'x-test-id': id, accept: json ? 'application/json' : 'text/html' } })
      return Object.assign(res, { id })
    }
  }
}

/**
 * What holds for every answer: nothing of the host's raw text or refused values in the body or the
 * headers, and a 5xx only with an error line of its own request.
 */
function checkAnswer (lines: LogLine[], res: LightMyRequestResponse & { id: string }, what: string): void {
  if (res.body.includes(MARK) || res.body.includes('SQLITE_BUSY')) throw new Error(`${what}: the answer carries the host's raw text: ${res.body.slice(0, 300)}`)
  if (JSON.stringify(res.headers).includes(MARK)) throw new Error(`${what}: a header carries the host's raw text`)
  if (res.statusCode >= 500 && !lines.some((l) => l.reqId === res.id && l.level >= ERROR)) {
    throw new Error(`${what}: ${res.statusCode} without an error line of its own`)
  }
  if (/javascript:|data:text/i.test(res.body)) throw new Error(`${what}: an off-site scheme is in the answer`)
}

/** Warn lines about host mistakes: all but the spec's refused second redirect, which is logged per request by design. */
function mistakesSaid (lines: LogLine[]): number {
  return lines.filter((l) => l.level === WARN && l.code !== REDIRECT_CONFLICT_WARNING).length
}

/** The same request again writes no further warn line: a host mistake is said once, not per request. */
async function checkSaidOnce (p: Probe, url: string, json: boolean, what: string): Promise<void> {
  const before = mistakesSaid(p.lines)
  const again = await p.request(url, json)
  checkAnswer(p.lines, again, `${what} (again)`)
  const after = mistakesSaid(p.lines)
  if (after !== before) throw new Error(`${what}: the same mistake was warned about again`)
}

t.test('getMember, catalog and views wrong together: nobody let in, no raw text, no silent 5xx, each mistake said once', async (t) => {
  const p = await probe(t)
  let granted = 0
  let refused = 0
  await fc.assert(fc.asyncProperty(hosts, fc.constantFrom(...MEMBERS_ONLY, ...OPEN), fc.boolean(), async (host, url, json) => {
    p.use(host)
    const res = await p.request(url, json)
    const what = `getMember → ${describe(host.member)}, getCategory → ${describe(host.getCategory)}, ` +
      `listCategories → ${describe(host.listCategories)}, views.${host.view.name} → ${describe(host.view.answer)}; ${json ? 'JSON' : 'HTML'} ${url}`
    checkAnswer(p.lines, res, what)
    const membersOnly = MEMBERS_ONLY.includes(url)
    const { member } = host
    if (member.kind !== 'good') {
      if (/Signed in as|Sign out/i.test(res.body)) throw new Error(`${what}: shows something that is not a member as signed in`)
      if (membersOnly && (res.statusCode < 300 || res.body.includes(HOST_PAGE))) throw new Error(`${what}: let in (${res.statusCode})`)
      const visitor = member.kind === 'value' && !(member.value as boolean)
      // A visitor gets the spec's login redirect, and no catalog or view is asked for it.
      if (visitor && membersOnly && (res.statusCode !== 302 || !String(res.headers.location).startsWith(`${BASE_URL}/Security/login?BackURL=`))) {
        throw new Error(`${what}: a visitor must get the login redirect, got ${res.statusCode}`)
      }
      // Anything else is never a visitor either: the section's 500, whatever the page.
      if (!visitor && res.statusCode !== 500) throw new Error(`${what}: not a member must get the 500 page, got ${res.statusCode}`)
      refused++
    } else if (url === '/members' || url === '/decorated') {
      // The member is let in where only the member matters: the host's route, with its own answer.
      if (res.statusCode !== 200 || res.body !== HOST_PAGE) throw new Error(`${what}: a member was refused (${res.statusCode})`)
      granted++
    }
    await checkSaidOnce(p, url, json, what)
  }), {
    numRuns: RUNS,
    examples: [
      // The reproductions: a host user object, a throwing getMember, a null category, a category without resources.
      [{ member: { kind: 'value', value: { id: 7, username: 'ann' } }, falsy: null, getCategory: { kind: 'good' }, listCategories: { kind: 'good' }, view: { name: 'category', answer: { kind: 'good' } } }, '/members', false],
      [{ member: { kind: 'throws' }, falsy: null, getCategory: { kind: 'good' }, listCategories: { kind: 'good' }, view: { name: 'category', answer: { kind: 'good' } } }, MATHS, true],
      [{ member: { kind: 'good' }, falsy: null, getCategory: { kind: 'value', value: null }, listCategories: { kind: 'good' }, view: { name: 'category', answer: { kind: 'good' } } }, FILE, false],
      [{ member: { kind: 'good' }, falsy: null, getCategory: { kind: 'value', value: { slug: 'maths', title: 'M', description: 'd', passwordHash: MARK } }, listCategories: { kind: 'good' }, view: { name: 'category', answer: { kind: 'good' } } }, MATHS, true],
      [{ member: { kind: 'good' }, falsy: null, getCategory: { kind: 'rejects' }, listCategories: { kind: 'rejects' }, view: { name: 'layout', answer: { kind: 'throws' } } }, '/schools/resources/', false],
      // A member where the member alone decides.
      [{ member: { kind: 'good' }, falsy: null, getCategory: { kind: 'throws' }, listCategories: { kind: 'good' }, view: { name: 'layout', answer: { kind: 'rejects' } } }, '/decorated', true]
    ]
  })
  t.ok(granted > 0 && refused > 0, `both sides of the door were tried (${granted} let in, ${refused} refused)`)
})

t.test('catalog records of every shape for a member: documented fields and on-site links only, a bad record the 500 or 404 with its line', async (t) => {
  const p = await probe(t)
  const statuses = new Set<number>()
  const record = fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom<Source>({ kind: 'value', value: null }, { kind: 'value', value: undefined }, { kind: 'rejects' }, { kind: 'throws' }) },
    { weight: 8, arbitrary: badCategory.map((value): Source => ({ kind: 'value', value })) }
  )
  await fc.assert(fc.asyncProperty(record, badList, fc.constantFrom(MATHS, FILE, '/schools/resources/'), fc.boolean(), async (getCategory, list, url, json) => {
    p.use({ member: { kind: 'good' }, falsy: null, getCategory, listCategories: { kind: 'value', value: list }, view: { name: 'category', answer: { kind: 'good' } } })
    const res = await p.request(url, json)
    const what = `getCategory → ${describe(getCategory)}, listCategories → ${describe({ kind: 'value', value: list })} on ${json ? 'JSON' : 'HTML'} ${url}`
    checkAnswer(p.lines, res, what)
    statuses.add(res.statusCode)
    if (![200, 302, 403, 404, 500].includes(res.statusCode)) throw new Error(`${what}: unexpected ${res.statusCode}`)
    // A record that is no category never gives a member its page: "not found" or the 500.
    if (url === MATHS && res.statusCode === 200 && getCategory.kind === 'value' && (getCategory.value as { slug?: unknown } | null)?.slug !== 'maths') {
      throw new Error(`${what}: served a record that is not the category asked for`)
    }
    await checkSaidOnce(p, url, json, what)
  }), {
    numRuns: RUNS,
    examples: [
      // A good category whose one resource is an off-site link, with an extra column: left out, the page served.
      [{ kind: 'value', value: { slug: 'maths', title: 'Mathematics', description: 'Number.', resources: [{ id: 'r-1', title: 'T', summary: 'S', url: `javascript:alert('${MARK}')`, secretColumn: MARK }], passwordHash: MARK } }, [], MATHS, true]
    ]
  })
  t.ok(statuses.has(200) && statuses.has(500), `good and bad records were both met (${[...statuses].join(', ')})`)
})

// The pages a member is shown, with the views that render each (and the layout around them all).
const PAGES: Array<{ url: string, view: ViewName, status: number }> = [
  { url: MATHS, view: 'category', status: 200 },
  { url: '/schools/resources/', view: 'index', status: 200 },
  { url: '/schools/resources/nowhere', view: 'notFound', status: 404 },
  { url: '/Security/login', view: 'login', status: 200 }
]

t.test('views: a view that throws, rejects or gives no page is the 500 page with its line, on every page it renders, and only there', async (t) => {
  const p = await probe(t)
  const view = fc.oneof(
    fc.record({ name: fc.constantFrom(...PAGE_VIEWS), answer: sources(notAPage, 1) }),
    fc.record({ name: fc.constant('layout' as const), answer: sources(notMarkup, 1) })
  )
  const failures = new Set<string>()
  await fc.assert(fc.asyncProperty(view, fc.constantFrom(...PAGES), async (view, page) => {
    p.use({ member: { kind: 'good' }, falsy: null, getCategory: { kind: 'good' }, listCategories: { kind: 'good' }, view })
    const res = await p.request(page.url, false)
    const what = `views.${view.name} → ${describe(view.answer)} on ${page.url}`
    checkAnswer(p.lines, res, what)
    const broken = view.answer.kind !== 'good' && (view.name === 'layout' || view.name === page.view)
    const expected = broken ? 500 : page.status
    if (res.statusCode !== expected) throw new Error(`${what}: expected ${expected}, got ${res.statusCode}`)
    if (broken) {
      if (!res.body.includes('<h1>Something went wrong</h1>') || !res.body.includes('FST_SR_INVALID_VIEW')) throw new Error(`${what}: not the section's own 500 page`)
      failures.add(view.name)
    }
    await checkSaidOnce(p, page.url, false, what)
  }), {
    numRuns: RUNS,
    // One broken view per page, and the layout, always tried: the random runs alone met only three of
    // them in some runs, and the check below must not depend on the draw.
    examples: [
      [{ name: 'login', answer: { kind: 'value', value: 'a string is no page' } }, PAGES[3]],
      [{ name: 'category', answer: { kind: 'throws' } }, PAGES[0]],
      [{ name: 'index', answer: { kind: 'rejects' } }, PAGES[1]],
      [{ name: 'notFound', answer: { kind: 'value', value: undefined } }, PAGES[2]],
      [{ name: 'layout', answer: { kind: 'value', value: 42 } }, PAGES[0]]
    ]
  })
  t.ok(failures.size >= 5, `views that failed: ${[...failures].join(', ')}`)
})

type Form = 'config-before' | 'config-after' | 'decorator'
type Place = 'root' | 'child' | 'sibling' | 'sibling-warn'
const QUERY = { querystring: { type: 'object', properties: { n: { type: 'integer' } } } }

t.test('route config: any membersOnly value fails start-up, guards the route, or is open only when false, absent or allowed at start-up', async (t) => {
  const value = fc.oneof(
    fc.anything(),
    fc.record({ groups: fc.oneof(fc.anything(), fc.constant(['staff']), fc.constant([]), fc.constant(['staff', ''])), title: fc.oneof(fc.anything(), fc.constant('Staff notices')), extra: fc.anything() }, { requiredKeys: [] })
  )
  const forms = fc.constantFrom<Form>('config-before', 'config-after', 'decorator')
  const places = fc.constantFrom<Place>('root', 'child', 'sibling', 'sibling-warn')
  const outcomes = { refusedAtStart: 0, guarded: 0, open: 0, failedClosed: 0, outsideRefused: 0, outsideSaid: 0 }
  let requests = 0
  await fc.assert(fc.asyncProperty(value, forms, places, async (membersOnly, form, chosen) => {
    // Outside the section's context app.membersOnly does not exist: the decorator form goes in a child.
    const place: Place = form === 'decorator' && chosen.startsWith('sibling') ? 'child' : chosen
    const outside = place.startsWith('sibling')
    const log = capturedLog()
    const app = Fastify({ logger: log.logger, requestIdHeader: 'x-test-id' })
    let served = 0
    const handler = async (): Promise<string> => { served++; return HOST_PAGE }
    const route = (i: FastifyInstance): void => {
      if (form === 'decorator') i.get('/page', { schema: QUERY, preHandler: i.membersOnly(membersOnly as never) }, handler)
      else i.get('/page', { schema: QUERY, config: { membersOnly: membersOnly as never } }, handler)
    }
    const withRoute = (i: FastifyInstance): void => {
      if (place === 'root') route(i)
      else i.register(async (child) => { route(child) })
    }
    const what = `${form} in ${place}, membersOnly: ${describe({ kind: 'value', value: membersOnly })}`
    try {
      await app.register(fastifyCookie)
      await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
      if (form === 'config-before') withRoute(app)
      const section = { catalog: inner, signIn: false as const, getMember: () => null, baseUrl: BASE_URL, files: demoFiles, ...(place === 'sibling-warn' ? { membersOnlyOutsideSection: 'warn' as const } : {}) }
      // An @fastify/autoload file without fastify-plugin: the section in an encapsulated plugin of its own.
      if (outside) app.register(async function sectionFile (i) { await i.register(schoolsResources, section) })
      else await app.register(schoolsResources, section)
      try {
        if (form !== 'config-before') withRoute(app)
        await app.ready()
      } catch (error) {
        // Start-up fails with the section's own error, never with a crash of another kind: inside an
        // encapsulated plugin whatever the route, else for a bad value on a route it sees.
        const code = (error as { code?: string }).code
        if (place === 'sibling' && code === 'FST_SR_SECTION_ENCAPSULATED') {
          outcomes.outsideRefused++
          return
        }
        if (code !== 'FST_SR_INVALID_OPTION') throw new Error(`${what}: start-up failed with ${String(error)}`)
        if (form === 'config-before' || outside) throw new Error(`${what}: the section cannot see this route at start-up`)
        outcomes.refusedAtStart++
        return
      }
      const said = log.lines.some((l) => l.level === WARN && l.code === 'FST_SR_SECTION_ENCAPSULATED')
      if (place === 'sibling') throw new Error(`${what}: the section inside an encapsulated plugin started`)
      if (outside && !said) throw new Error(`${what}: the section inside an encapsulated plugin said nothing at start-up`)
      if (!outside && said) throw new Error(`${what}: warned about encapsulation where the section is in the app's own context`)
      const open = outside || (form !== 'decorator' && (membersOnly === false || membersOnly === undefined))
      for (const url of ['/page', '/page?n=not-a-number']) {
        for (const accept of ['text/html', 'application/json']) {
          const id = `r-${++requests}`
          const res = await app.inject({ url, headers: { accept, 'x-test-id': id } })
          if (res.statusCode >= 500 && !log.lines.some((l) => l.level >= ERROR && l.reqId === id)) throw new Error(`${what}: ${res.statusCode} without an error line`)
          const valid = url === '/page'
          if (open) {
            if (res.statusCode !== (valid ? 200 : 400)) throw new Error(`${what}: an open route got ${res.statusCode} on ${url}`)
            continue
          }
          if (res.body.includes(HOST_PAGE)) throw new Error(`${what}: served to a visitor`)
          if (res.statusCode === 302) {
            if (!String(res.headers.location).startsWith(`${BASE_URL}/Security/login?BackURL=`)) throw new Error(`${what}: redirected elsewhere`)
            continue
          }
          // Routes registered before the section are validated first, as Fastify does (docs/host-routes.md)...
          if (form === 'config-before' && !valid && res.statusCode === 400) continue
          // ...and only they, which the section could not check at start-up, fail closed on their requests.
          if (form !== 'config-before' || res.statusCode !== 500 || (res.json() as { code?: string }).code !== 'FST_SR_INVALID_OPTION') {
            throw new Error(`${what}: a visitor got ${res.statusCode} on ${url}`)
          }
        }
      }
      if (outside) outcomes.outsideSaid++
      else if (open) outcomes.open++
      else if (log.lines.some((l) => l.level >= ERROR)) outcomes.failedClosed++
      else outcomes.guarded++
      if (!open && served !== 0) throw new Error(`${what}: the handler ran for a visitor`)
    } finally {
      await app.close()
    }
  }), {
    numRuns: 60,
    examples: [
      [{ groups: [] }, 'config-before', 'root'], [{ group: ['staff'] }, 'config-after', 'child'], [false, 'config-after', 'root'],
      [{ groups: ['staff'] }, 'decorator', 'root'], [null, 'decorator', 'child'], [true, 'config-after', 'sibling'], [true, 'config-after', 'sibling-warn']
    ]
  })
  t.ok(Object.values(outcomes).every((n) => n > 0), `every outcome was met: ${JSON.stringify(outcomes)}`)
})

t.test('sign-in wiring: a session cookie, proxy and baseUrl of any kind never give a login loop or a silent 5xx', async (t) => {
  const wiring = fc.record({
    secure: fc.constantFrom<boolean | 'auto' | undefined>(true, false, 'auto', undefined),
    trustProxy: fc.constantFrom<boolean | string | undefined>(undefined, '127.0.0.1', true),
    proto: fc.constantFrom<string | undefined>(undefined, 'https', 'http', 'javascript'),
    baseUrl: fc.constantFrom<string | undefined>(BASE_URL, 'http://school.test', undefined),
    json: fc.boolean()
  })
  const answers = new Set<number>()
  let requests = 0
  await fc.assert(fc.asyncProperty(wiring, async ({ secure, trustProxy, proto, baseUrl, json }) => {
    const log = capturedLog()
    const { app } = await buildTestApp({
      fastify: { logger: log.logger, requestIdHeader: 'x-test-id', ...(trustProxy === undefined ? {} : { trustProxy }) },
      session: { cookie: secure === undefined ? {} : { secure } },
      plugin: { baseUrl }
    })
    try {
      const what = `cookie.secure ${String(secure)}, trustProxy ${String(trustProxy)}, X-Forwarded-Proto ${String(proto)}, baseUrl ${String(baseUrl)}`
      // Twice: a mistake said once in the log must still leave a line for every 5xx.
      for (let i = 0; i < 2; i++) {
        const id = `sign-in-${++requests}`
        const headers: Record<string, string> = { 'x-test-id': id, accept: json ? 'application/json' : 'text/html' }
        if (proto !== undefined) headers['x-forwarded-proto'] = proto
        const res = Object.assign(await postLogin(app, { email: TEACHER.email, password: TEACHER.password }, { headers }), { id })
        checkAnswer(log.lines, res, what)
        answers.add(res.statusCode)
        // "Signed in" only with the session cookie that keeps the member signed in.
        if (res.statusCode === 303 && sessionCookie(res) === undefined) throw new Error(`${what}: a 303 with no session cookie, a login loop`)
        if (![303, 400, 500].includes(res.statusCode)) throw new Error(`${what}: unexpected ${res.statusCode}`)
      }
    } finally {
      await app.close()
    }
  }), {
    numRuns: 40,
    examples: [
      // Found by this property (seed -1471142219): the refused sign-in's 500 had no line of its own request,
      // only the warn line said once per app.
      [{ secure: true, trustProxy: undefined, proto: undefined, baseUrl: BASE_URL, json: false }],
      [{ secure: undefined, trustProxy: undefined, proto: 'https', baseUrl: BASE_URL, json: true }]
    ]
  })
  t.ok(answers.has(303) && answers.has(500), `sign-ins went through and were refused (${[...answers].join(', ')})`)
})
