import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import schoolsResources, { InMemoryCatalog, type Catalog, type CategoryWithResources, type CatalogData, type FastifySchoolsResourcesOptions, type Member } from '../../lib/index.js'
import { canSee } from '../../lib/access/audience.js'
import { authenticate, PEOPLE } from '../helpers/members.js'
import { BASE_URL, conflictWarnings, postLogin, postSignOutForm, SECRET, sessionCookie } from '../helpers/app.js'

// Categories open to every member, one for staff and one for staff or governors.
const CATALOG: CatalogData = {
  categories: [
    { slug: 'maths', title: 'Mathematics', description: 'Number and algebra.', resources: [] },
    {
      slug: 'staff-room',
      title: 'Staff room',
      description: 'Policies, planning templates and meeting notes.',
      audience: ['staff'],
      resources: [{ id: 'policy', title: 'Marking policy', summary: 'How we mark.', url: '/files/marking.pdf', subject: 'Policy', yearLevels: ['All'], format: 'Reading' }]
    },
    { slug: 'board', title: 'Board papers', description: 'Minutes of the board.', audience: ['governors', 'staff'], resources: [] }
  ]
}

async function build (t: Test, plugin: Partial<FastifySchoolsResourcesOptions> = {}, extend?: (app: FastifyInstance) => void) {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
  await app.register(schoolsResources, { catalog: new InMemoryCatalog(CATALOG), authenticate, baseUrl: BASE_URL, ...plugin } as FastifySchoolsResourcesOptions)
  extend?.(app)
  await app.ready()
  t.teardown(() => app.close())
  return app
}

async function signInAs (app: FastifyInstance, email: string, backUrl?: string) {
  const res = await postLogin(app, { email, password: PEOPLE[email].password, ...(backUrl === undefined ? {} : { BackURL: backUrl }) })
  t.equal(res.statusCode, 303, `${email} signs in`)
  return { res, cookie: sessionCookie(res)! }
}

const STAFF_ROOM = '/schools/resources/resources/staff-room/'
const loginFor = (path: string) => `${BASE_URL}/Security/login?BackURL=${encodeURIComponent(path)}`

t.test('canSee: no audience is every member; otherwise one shared group', async (t) => {
  const member = (groups?: unknown): Member => ({ id: 1, name: 'M', ...(groups === undefined ? {} : { groups: groups as string[] }) })
  t.ok(canSee(member(), undefined))
  t.ok(canSee(member([]), undefined))
  t.ok(canSee(member(['staff']), ['staff']))
  t.ok(canSee(member(['parents', 'governors']), ['governors', 'staff']))
  t.notOk(canSee(member(), ['staff']), 'no groups')
  t.notOk(canSee(member([]), ['staff']), 'empty groups')
  t.notOk(canSee(member(['Staff']), ['staff']), 'names are compared exactly')
  t.notOk(canSee(member('staff'), ['staff']), 'a string is not a list of groups')
  t.notOk(canSee(member([['staff']]), ['staff']), 'nor a nested list')
  // Every audience is checked where it enters (the catalog boundary, membersOnly's options); canSee still admits nobody to one of another shape.
  for (const audience of ['staff', null, [], [['staff']]]) t.notOk(canSee(member(['staff', 's']), audience as unknown as string[]), JSON.stringify(audience))
})

t.test('anonymous visitors get exactly the spec redirect, restricted category or not', async (t) => {
  const app = await build(t)
  for (const path of ['/schools/resources/resources/maths/', STAFF_ROOM, '/schools/resources/resources/no-such-category/']) {
    let res
    const warnings = await conflictWarnings(async () => { res = await app.inject(path) })
    t.equal(res!.statusCode, 302, path)
    t.equal(res!.headers.location, loginFor(path))
    t.equal(res!.headers['cache-control'], 'no-store')
    t.equal(res!.headers['set-cookie'], undefined, 'no session for a visitor')
    t.equal(warnings.length, 1)
    t.equal(warnings[0].message, `Already directed to ${loginFor(path)}; now trying to direct to /schools/resources/`)
  }
  // The restricted and the unknown category answer byte for byte alike (headers that vary per request aside).
  const strip = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => !['date', 'location'].includes(k)))
  const a = await app.inject(STAFF_ROOM)
  const b = await app.inject('/schools/resources/resources/nothing-here/')
  t.same(strip(a.headers), strip(b.headers))
  t.equal(a.body, b.body)
})

t.test('a member outside the audience gets the 403 page; one inside gets the category', async (t) => {
  const app = await build(t)
  const parent = await signInAs(app, 'parent@example.org')
  const page = await app.inject({ url: STAFF_ROOM, headers: { cookie: parent.cookie } })
  t.equal(page.statusCode, 403)
  t.match(page.headers['content-type'], /text\/html/)
  t.equal(page.headers['cache-control'], 'private, no-store')
  t.match(page.body, /<h1>You don&#39;t have access to Staff room<\/h1>/)
  t.match(page.body, /You are signed in as <strong>Pat Parent<\/strong>/)
  t.match(page.body, /<button type="submit">Sign in as someone else<\/button>/)
  t.match(page.body, new RegExp(`name="BackURL" value="${STAFF_ROOM}"`))
  t.notMatch(page.body, /Marking policy/, 'nothing of the category leaks')

  const json = await app.inject({ url: STAFF_ROOM, headers: { cookie: parent.cookie, accept: 'application/json' } })
  t.equal(json.statusCode, 403)
  t.same(json.json(), { statusCode: 403, code: 'FST_SR_FORBIDDEN', error: 'Forbidden', message: "You don't have access to Staff room." })

  // A member of any one of the listed groups gets in.
  const teacher = await signInAs(app, 'teacher@example.org')
  for (const path of [STAFF_ROOM, '/schools/resources/resources/board/', '/schools/resources/resources/maths/']) {
    const res = await app.inject({ url: path, headers: { cookie: teacher.cookie } })
    t.equal(res.statusCode, 200, `staff: ${path}`)
  }
  t.match((await app.inject({ url: STAFF_ROOM, headers: { cookie: teacher.cookie } })).body, /Marking policy/)

  // A member with no groups (and a numeric id) sees the open categories only.
  const student = await signInAs(app, 'student@example.org')
  t.equal((await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: student.cookie } })).statusCode, 200)
  t.equal((await app.inject({ url: '/schools/resources/resources/board/', headers: { cookie: student.cookie } })).statusCode, 403)
  // An unknown category still takes a member to the index, restricted or not.
  const unknown = await app.inject({ url: '/schools/resources/resources/no-such/', headers: { cookie: parent.cookie } })
  t.equal(unknown.statusCode, 302)
  t.equal(unknown.headers.location, '/schools/resources/')
})

t.test('"sign in as someone else" signs out and comes back to the refused page as the new member', async (t) => {
  const app = await build(t)
  const parent = await signInAs(app, 'parent@example.org')
  const forbidden = await app.inject({ url: `${STAFF_ROOM}?year=7`, headers: { cookie: parent.cookie } })
  t.equal(forbidden.statusCode, 403)
  const out = await postSignOutForm(app, parent.cookie, forbidden, { BackURL: `${STAFF_ROOM}?year=7` })
  t.equal(out.statusCode, 303)
  t.equal(out.headers.location, loginFor(`${STAFF_ROOM}?year=7`))
  // The old session is gone.
  t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie: parent.cookie } })).statusCode, 302)

  const login = await app.inject({ url: out.headers.location!.slice(BASE_URL.length) })
  t.match(login.body, new RegExp(`name="BackURL" value="${STAFF_ROOM}\\?year=7"`))
  const teacher = await signInAs(app, 'teacher@example.org', `${STAFF_ROOM}?year=7`)
  t.equal(teacher.res.headers.location, `${BASE_URL}${STAFF_ROOM}?year=7`)
  t.equal((await app.inject({ url: `${STAFF_ROOM}?year=7`, headers: { cookie: teacher.cookie } })).statusCode, 200)

  // A BackURL off the site is ignored: the sign-out ends on the index, as any other.
  const again = await signInAs(app, 'parent@example.org')
  const page = await app.inject({ url: '/schools/resources/', headers: { cookie: again.cookie } })
  const offSite = await postSignOutForm(app, again.cookie, page, { BackURL: 'https://evil.example/' })
  t.equal(offSite.statusCode, 303)
  t.equal(offSite.headers.location, '/schools/resources/')
})

t.test('the index marks the categories a member cannot open, or hides them', async (t) => {
  const marked = await build(t)
  const parent = await signInAs(marked, 'parent@example.org')
  const page = await marked.inject({ url: '/schools/resources/', headers: { cookie: parent.cookie } })
  t.match(page.body, /<li class="locked"><h2><a href="\/schools\/resources\/resources\/staff-room\/" aria-describedby="locked-staff-room">Staff room<\/a>/)
  t.match(page.body, /id="locked-staff-room">You don&#39;t have access to this category.<\/p>/)
  t.notMatch(page.body, /locked-maths/)
  const json = await marked.inject({ url: '/schools/resources/', headers: { cookie: parent.cookie, accept: 'application/json' } })
  t.same(json.json().categories.map((c: { slug: string, locked: boolean }) => [c.slug, c.locked]), [['maths', false], ['staff-room', true], ['board', true]])
  // A visitor is asked to sign in first: nothing is marked.
  const visitor = await marked.inject('/schools/resources/')
  t.notMatch(visitor.body, /class="locked"/)
  t.match(visitor.body, /Staff room/)

  const hidden = await build(t, { restrictedCategories: 'hide' })
  const slugs = async (cookie?: string) => (await hidden.inject({ url: '/schools/resources/', headers: { accept: 'application/json', ...(cookie === undefined ? {} : { cookie }) } })).json().categories.map((c: { slug: string }) => c.slug)
  t.same(await slugs(), ['maths'], 'visitors see only the open categories')
  t.same(await slugs((await signInAs(hidden, 'parent@example.org')).cookie), ['maths'])
  t.same(await slugs((await signInAs(hidden, 'teacher@example.org')).cookie), ['maths', 'staff-room', 'board'])
  const html = await hidden.inject('/schools/resources/')
  t.notMatch(html.body, /Staff room|Board papers/)
  // A visitor still gets the login redirect at the address, as for any category.
  t.equal((await hidden.inject(STAFF_ROOM)).headers.location, loginFor(STAFF_ROOM))
})

t.test('every hook the host registered runs before the 403', async (t) => {
  const seen: string[] = []
  const app = await build(t, {}, (host) => {
    host.addHook('preHandler', async function suspensionCheck (request, reply) {
      seen.push(request.url)
      // A suspended account is the host's answer, even for a page the member could not open anyway.
      if (request.session.get('member')?.name === 'Pat Parent' && request.headers['x-suspended'] === '1') {
        return reply.code(423).send('suspended')
      }
    })
  })
  const parent = await signInAs(app, 'parent@example.org')
  const suspended = await app.inject({ url: STAFF_ROOM, headers: { cookie: parent.cookie, 'x-suspended': '1' } })
  t.equal(suspended.statusCode, 423)
  t.equal(suspended.body, 'suspended')
  const refused = await app.inject({ url: STAFF_ROOM, headers: { cookie: parent.cookie } })
  t.equal(refused.statusCode, 403)
  t.equal(seen.filter((u) => u === STAFF_ROOM).length, 2)
})

t.test('members inside and outside the audience, in parallel, each get their own answer', async (t) => {
  const app = await build(t)
  const parent = await signInAs(app, 'parent@example.org')
  const teacher = await signInAs(app, 'teacher@example.org')
  const asks = Array.from({ length: 60 }, (_, i) => (['parent', 'teacher', 'visitor'] as const)[i % 3])
  const answers = await Promise.all(asks.map((who) => app.inject({
    url: STAFF_ROOM,
    headers: who === 'visitor' ? {} : { cookie: who === 'parent' ? parent.cookie : teacher.cookie }
  })))
  const expected = { parent: 403, teacher: 200, visitor: 302 }
  t.same(answers.map((r) => r.statusCode), asks.map((who) => expected[who]))
})

t.test('groups must be a list of names: authenticate, the session and getMember are all checked', async (t) => {
  const bad = await build(t, { authenticate: async () => ({ id: 1, name: 'Bad', groups: 'staff' as unknown as string[] }) })
  const res = await postLogin(bad, { email: 'x@example.org', password: 'x' }, { headers: { accept: 'application/json' } })
  t.equal(res.statusCode, 500)
  t.equal(res.json().code, 'FST_SR_INVALID_MEMBER')

  // A host's getMember with groups of the wrong shape gives no member at all (issue 18): nobody is let in,
  // restricted or not, and the open pages answer the 500 page too, rather than guess who it is.
  const host = await build(t, { signIn: false, getMember: () => ({ id: 7, name: 'Host user', groups: 'staff' as unknown as string[] }) })
  t.equal((await host.inject(STAFF_ROOM)).statusCode, 500)
  t.equal((await host.inject('/schools/resources/resources/maths/')).statusCode, 500)
  t.equal((await host.inject('/schools/resources/')).statusCode, 500)
  // Without sign-in routes the 403 page offers no sign-out form.
  const staff = await build(t, { signIn: false, getMember: () => ({ id: 7, name: 'Host user', groups: ['parents'] }) })
  const refused = await staff.inject(STAFF_ROOM)
  t.equal(refused.statusCode, 403)
  t.notMatch(refused.body, /Sign in as someone else/)
})

t.test('InMemoryCatalog checks audiences at construction', async (t) => {
  const category = (audience: unknown) => ({ categories: [{ slug: 'a', title: 'A', description: 'A.', resources: [], audience }] }) as unknown as CatalogData
  t.throws(() => new InMemoryCatalog(category([])), { code: 'FST_SR_INVALID_CATALOG', message: /categories\[0\]\.audience must be a non-empty array of group names/ })
  t.throws(() => new InMemoryCatalog(category('staff')), { message: /categories\[0\]\.audience must be a non-empty array/ })
  t.throws(() => new InMemoryCatalog(category(['staff', ''])), { message: /categories\[0\]\.audience\[1\] must be a non-empty string/ })
  t.throws(() => new InMemoryCatalog(category([7])), { message: /categories\[0\]\.audience\[0\] must be a non-empty string/ })
  const catalog = new InMemoryCatalog(category(['staff']))
  const found = await catalog.getCategory('a')
  t.same(found?.audience, ['staff'])
  t.ok(Object.isFrozen(found?.audience), 'frozen, as every record')
  t.same((await catalog.listCategories())[0], { slug: 'a', title: 'A', description: 'A.', audience: ['staff'] })
  t.notOk('audience' in (await new InMemoryCatalog(category(undefined)).listCategories())[0], 'absent stays absent')
})

t.test('restrictedCategories is checked', async (t) => {
  const app = Fastify()
  await app.register(fastifyCookie)
  await app.register(fastifySession, { secret: SECRET })
  app.register(schoolsResources, { catalog: new InMemoryCatalog(CATALOG), authenticate, restrictedCategories: 'shade' as 'mark' })
  await t.rejects(async () => app.ready(), { code: 'FST_SR_INVALID_OPTION', message: /"restrictedCategories": must be "mark" or "hide"/ })
})

t.test('a host may replace the 403 view (async, as a template engine renders)', async (t) => {
  const app = await build(t, {
    views: { forbidden: async ({ title, backUrl }, ctx) => ({ title: 'Members only', body: `<p class="host">${title} is not for ${ctx.member?.name ?? 'you'} (${backUrl})</p>` }) }
  })
  const parent = await signInAs(app, 'parent@example.org')
  const res = await app.inject({ url: STAFF_ROOM, headers: { cookie: parent.cookie } })
  t.equal(res.statusCode, 403)
  t.match(res.body, `<p class="host">Staff room is not for Pat Parent (${STAFF_ROOM})</p>`)
  t.match(res.body, '<title>Members only | Schools resources</title>')
})

t.test('hidden means unknown: with \'hide\' a member outside the audience gets exactly what an unknown slug gets', async (t) => {
  const app = await build(t, { restrictedCategories: 'hide' })
  const parent = await signInAs(app, 'parent@example.org')
  const withoutDate = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'date'))
  for (const accept of ['text/html', 'application/json']) {
    const headers = { cookie: parent.cookie, accept }
    const hidden = await app.inject({ url: STAFF_ROOM, headers })
    const unknown = await app.inject({ url: '/schools/resources/resources/no-such-category/', headers })
    t.equal(hidden.statusCode, 302, `${accept}: the redirect to the section index, as for an unknown slug`)
    t.equal(hidden.headers.location, '/schools/resources/')
    t.same(withoutDate(hidden.headers), withoutDate(unknown.headers), `${accept}: the same headers`)
    t.equal(hidden.body, unknown.body, `${accept}: the same body`)
    t.notMatch(hidden.body + JSON.stringify(hidden.headers), /Staff room|FST_SR_FORBIDDEN/, 'the title is never named')
  }
  // Hidden from the members outside the audience only: the staff open it.
  const teacher = await signInAs(app, 'teacher@example.org')
  const page = await app.inject({ url: STAFF_ROOM, headers: { cookie: teacher.cookie } })
  t.equal(page.statusCode, 200)
  t.match(page.body, /Marking policy/)
  // 'mark' keeps the 403 that names it.
  const marked = await build(t)
  const refused = await marked.inject({ url: STAFF_ROOM, headers: { cookie: (await signInAs(marked, 'parent@example.org')).cookie } })
  t.equal(refused.statusCode, 403)
  t.match(refused.body, 'You don&#39;t have access to Staff room')
})

// Changed on purpose (#18): a malformed audience was a silent 403 for everyone; it is now the section's 500
// and a warn line naming the field (test/section/host-catalog.test.ts), and the index leaves it out.
t.test('a host catalog\'s audience of the wrong shape admits nobody (no substring match): the 500, left out of the index', async (t) => {
  const categories = [
    { slug: 'admin', title: 'Admin', description: 'd', audience: 'teachers-admin', resources: [] },
    { slug: 'nulled', title: 'Nulled', description: 'd', audience: null, resources: [] },
    { slug: 'empty', title: 'Empty', description: 'd', audience: [], resources: [] },
    { slug: 'open', title: 'Open', description: 'd', resources: [] }
  ] as unknown as CategoryWithResources[]
  const catalog: Catalog = { listCategories: async () => categories, getCategory: async (slug) => categories.find((c) => c.slug === slug) }
  for (const restrictedCategories of ['mark', 'hide'] as const) {
    const app = await build(t, { catalog, restrictedCategories, getMember: (request) => ({ id: 1, name: 'T', groups: [String(request.headers['x-group'] ?? 'teachers')] }), signIn: false })
    for (const group of ['teachers', 'teachers-admin', 's', 'staff']) {
      for (const slug of ['admin', 'nulled', 'empty']) {
        t.equal((await app.inject({ url: `/schools/resources/resources/${slug}/`, headers: { 'x-group': group } })).statusCode, 500, `${restrictedCategories}: ${group} in ${slug}`)
      }
      t.equal((await app.inject({ url: '/schools/resources/resources/open/', headers: { 'x-group': group } })).statusCode, 200)
    }
    const index = await app.inject({ url: '/schools/resources/', headers: { accept: 'application/json' } })
    t.equal(index.statusCode, 200)
    const listed = index.json().categories.map((c: { slug: string, locked: boolean }) => `${c.slug}:${c.locked}`)
    t.same(listed, ['open:false'])
  }
})
