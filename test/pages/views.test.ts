import t from 'tap'
import { english } from '../helpers/page-language.js'
import { html, defaultViews, unsafeRaw, SafeHtml } from '../../lib/index.js'
import { buildTestApp, signIn } from '../helpers/app.js'

t.test('the section index lists every category with its link, for everyone', async (t) => {
  const { app, store } = await buildTestApp()
  t.teardown(() => app.close())
  for (const url of ['/schools/resources/', '/schools/resources']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200, url)
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
    t.equal(res.headers.vary, 'Accept, Accept-Language')
    t.match(res.body, /^<!doctype html>\n<html lang="en" dir="ltr">/)
    t.match(res.body, '<title>Resources | Schools resources</title>')
    for (const slug of ['maths', 'english', 'science', 'humanities', 'wellbeing', 'staff-room']) {
      t.match(res.body, `<a href="/schools/resources/resources/${slug}/">`)
    }
    t.match(res.body, 'Members sign in to open a category.')
    t.notMatch(res.body, 'class="locked"', 'a visitor is asked to sign in, not told what is restricted')
    t.match(res.body, '<a href="/Security/login">Sign in</a>')
  }
  t.equal(store.sessions.size, 0, 'browsing the index stores no session')
  const json = await app.inject({ url: '/schools/resources/', headers: { accept: 'application/json' } })
  const body = json.json()
  t.equal(body.categories.length, 6)
  t.same(body.categories.map((c: { locked: boolean }) => c.locked), Array(6).fill(false), 'nothing is marked for a visitor, the staff room included')
  t.same(body.categories[0], { slug: 'maths', title: 'Mathematics', description: 'Number, algebra, measurement, geometry and statistics from Foundation to Year 10.', url: '/schools/resources/resources/maths/', locked: false })
  const browser = await app.inject({ url: '/schools/resources/', headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } })
  t.match(browser.headers['content-type'], /text\/html/)
})

t.test('signed in, the index shows the member and a sign-out button', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const res = await app.inject({ url: '/schools/resources/', headers: { cookie } })
  t.match(res.body, 'Signed in as <strong>Ada Teacher</strong>')
  t.match(res.body, /<form method="post" action="\/Security\/logout"><input type="hidden" name="_csrf" value="[^"]+"><button type="submit">Sign out<\/button> <button type="submit" name="everywhere" value="1">Sign out on all devices<\/button><\/form>/)
  t.notMatch(res.body, 'Members sign in to open a category.')
})

t.test('empty catalog and empty category render a message, not an empty list', async (t) => {
  const ctx = { ...english, siteName: 'S', member: undefined, signIn: true, paths: { index: '/i/', login: '/l', logout: '/o', category: (s: string) => `/c/${s}/`, file: (s: string, r: { id: string }) => `/f/${s}/${r.id}` } }
  t.match(String(defaultViews.index({ categories: [] }, ctx).body), 'No categories have been published yet.')
  t.match(String(defaultViews.category({ category: { slug: 'a', title: 'A', description: 'd', resources: [] } }, ctx).body), 'No resources in this category yet.')
  t.equal(String(defaultViews.layout({ title: 'T', body: '<p>host string</p>' }, { ...ctx, signIn: false })).includes('<p>host string</p>'), true)
  // A host that owns sign-in (issue 20): its login page (loginPath) for visitors, its sign-out page (logoutUrl) for members.
  t.match(String(defaultViews.layout({ title: 'T', body: '' }, { ...ctx, signIn: false })), '<a href="/l">Sign in</a>', 'the host\'s login page, linked')
  const member = { id: 1, name: 'Ada' }
  t.match(String(defaultViews.layout({ title: 'T', body: '' }, { ...ctx, signIn: false, member, logoutUrl: '/out' })), '<a href="/out">Sign out</a>', 'the host\'s sign-out page, linked')
  t.notMatch(String(defaultViews.layout({ title: 'T', body: '' }, { ...ctx, signIn: false, member })), /Sign out|<form/, 'no sign-out without a logoutUrl')
})

t.test('the 403 view names what was refused, escapes it, and names the member only when there is one', async (t) => {
  const ctx = { ...english, siteName: 'S', member: undefined, signIn: true, csrfToken: 'tok', paths: { index: '/i/', login: '/l', logout: '/o', category: (s: string) => `/c/${s}/`, file: (s: string, r: { id: string }) => `/f/${s}/${r.id}` } }
  const page = defaultViews.forbidden({ title: 'Staff <room>', backUrl: '/c/staff/?a="b"' }, ctx)
  t.equal(page.title, "You don't have access to Staff <room>", 'the layout escapes the title')
  const body = String(page.body)
  t.match(body, '<h1>You don&#39;t have access to Staff &lt;room&gt;</h1>')
  t.notMatch(body, /signed in as/, 'a host view may call it without a member')
  t.match(body, '<input type="hidden" name="BackURL" value="/c/staff/?a=&quot;b&quot;">')
  t.match(body, '<input type="hidden" name="_csrf" value="tok">')
  const named = String(defaultViews.forbidden({ title: 'T', backUrl: '/x' }, { ...ctx, member: { id: 1, name: 'Pat <P>' } }).body)
  t.match(named, 'You are signed in as <strong>Pat &lt;P&gt;</strong>.')
})

t.test('a host can replace the layout alone and keep our page bodies', async (t) => {
  const { app } = await buildTestApp({
    plugin: {
      siteName: 'Hillside <Primary>',
      views: {
        layout: (page, ctx) => html`<!doctype html><title>${page.title} - ${ctx.siteName}</title><link rel="stylesheet" href="${ctx.stylesheet}"><header>Hillside header</header>${page.body}<footer>Hillside footer</footer>`
      }
    }
  })
  t.teardown(() => app.close())
  const res = await app.inject('/schools/resources/')
  t.match(res.body, '<title>Resources - Hillside &lt;Primary&gt;</title>')
  t.match(res.body, '<header>Hillside header</header><h1>Resources</h1>')
  t.match(res.body, '<footer>Hillside footer</footer>')
  t.match(res.body, /<link rel="stylesheet" href="\/schools\/resources\/assets\/resources\.css\?v=[\w-]+">/, 'a host layout can link our stylesheet')
  const cookie = await signIn(app)
  const category = await app.inject({ url: '/schools/resources/resources/english/?year=Year+1', headers: { cookie } })
  t.match(category.body, /<title>English \(Year 1\) - Hillside &lt;Primary&gt;<\/title>.*<header>Hillside header<\/header><nav class="breadcrumbs"/s, 'category pages use the host layout too')
  t.match(category.body, 'Showing 1 of 3 resources for Year 1.')
  const missing = await app.inject('/schools/resources/nope')
  t.match(missing.body, '<header>Hillside header</header><h1>Page not found</h1>', 'and so does the 404 page')
})

t.test('a view may return a plain string, sent as written', async (t) => {
  const { app } = await buildTestApp({ plugin: { views: { index: () => ({ title: 'Ours', body: '<section id="host">host markup</section>' }) } } })
  t.teardown(() => app.close())
  const res = await app.inject('/schools/resources/')
  t.match(res.body, '<section id="host">host markup</section>')
  t.match(res.body, '<title>Ours | Schools resources</title>')
})

const MATHS = '/schools/resources/resources/maths/'

t.test('a category page lists title, summary, subject, year levels and format, with a filter form', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const res = await app.inject({ url: MATHS, headers: { cookie } })
  t.equal(res.statusCode, 200)
  t.match(res.body, '<h3><a href="https://www.example.org/files/maths/linear-equations.pptx">Solving linear equations</a></h3>\n<p>Five lessons that move from balance models to solving two-step equations.</p>')
  t.match(res.body, '<dt>Subject</dt><dd>Mathematics</dd>\n<dt>Year levels</dt><dd>Year 7, Year 8</dd>\n<dt>Format</dt><dd>Slides</dd>\n\n</dl>', 'a link elsewhere: no download line')
  // A file the site holds says it is a download, and which file.
  t.match(res.body, '<dt>Format</dt><dd>Worksheet</dd>\n<dt>Download</dt><dd>fraction-wall.pdf</dd>\n</dl>')
  t.match(res.body, `<form class="filters" method="get" action="${MATHS}">`)
  t.match(res.body, '<label for="filter-subject">Subject</label>\n<select id="filter-subject" name="subject"><option value="">All subjects</option><option>Mathematics</option></select>')
  t.match(res.body, '<label for="filter-year">Year level</label>\n<select id="filter-year" name="year"><option value="">All year levels</option><option>Year 3</option><option>Year 4</option><option>Year 5</option>')
  t.match(res.body, '<p class="result-count">4 resources.</p>')
  t.notMatch(res.body, 'Clear filters')
  t.equal((res.body.match(/<li class="resource">/g) ?? []).length, 4)
  t.match(res.body, /<h1>Mathematics<\/h1>[\s\S]*<h2 id="resources-heading">Resources<\/h2>[\s\S]*<h3>/, 'headings in order')
})

t.test('filters narrow the list, keep their choice selected, and ignore values the category lacks', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const filtered = await app.inject({ url: `${MATHS}?subject=Mathematics&year=Year+7`, headers: { cookie } })
  t.equal(filtered.statusCode, 200)
  t.equal((filtered.body.match(/<li class="resource">/g) ?? []).length, 1)
  t.match(filtered.body, 'Solving linear equations')
  t.notMatch(filtered.body, 'Fraction wall')
  t.match(filtered.body, '<option selected>Mathematics</option>')
  t.match(filtered.body, '<option selected>Year 7</option>')
  t.match(filtered.body, '<p class="result-count">Showing 1 of 4 resources for Mathematics, Year 7.</p>')
  t.match(filtered.body, `<a href="${MATHS}">Clear filters</a>`)
  t.match(filtered.body, '<title>Mathematics (Mathematics, Year 7) | Schools resources</title>')

  const none = await app.inject({ url: `${MATHS}?year=Year+8&subject=Mathematics`, headers: { cookie } })
  t.equal((none.body.match(/<li class="resource">/g) ?? []).length, 1, 'Year 8: the equations lessons')
  const empty = await app.inject({ url: '/schools/resources/resources/english/?year=Foundation&subject=English', headers: { cookie } })
  t.equal((empty.body.match(/<li class="resource">/g) ?? []).length, 1)
  const english = await app.inject({ url: '/schools/resources/resources/science/?year=Year+8', headers: { cookie } })
  t.match(english.body, 'Showing 2 of 3 resources for Year 8.')

  for (const query of ['?subject=Science&year=Year+12', '?subject=&year=', '?subject=a&subject=b', '?year=%3Cscript%3E', '?subject[x]=1']) {
    const res = await app.inject({ url: `${MATHS}${query}`, headers: { cookie } })
    t.equal(res.statusCode, 200, query)
    t.match(res.body, '<p class="result-count">4 resources.</p>', `${query}: all resources`)
    t.notMatch(res.body, '<script>', 'nothing echoed unescaped')
  }
})

t.test('a filter that matches nothing says so and links back to the whole list', async (t) => {
  const ctx = { ...english, siteName: 'S', member: undefined, signIn: true, paths: { index: '/i/', login: '/l', logout: '/o', category: (s: string) => `/c/${s}/`, file: (s: string, r: { id: string }) => `/f/${s}/${r.id}` } }
  const category = {
    slug: 'a',
    title: 'A & B',
    description: 'd',
    resources: [{ id: '1', title: 'One', summary: 's', url: '/one', subject: 'Art', yearLevels: ['Year 1'], format: 'Video' }]
  }
  const body = String(defaultViews.category({ category, resources: [], filter: { subject: 'Art', year: undefined, subjects: ['Art'], years: ['Year 1'] } }, ctx).body)
  t.match(body, '<p class="result-count">Showing 0 of 1 resource for Art.</p>')
  t.match(body, '<p>No resources match these filters. <a href="/c/a/">Show all resources in A &amp; B</a>.</p>')
  t.notMatch(body, '<ul class="resources"')
  const all = String(defaultViews.category({ category }, ctx).body)
  t.match(all, '<p class="result-count">1 resource.</p>', 'filters default to none when a caller passes only the category')
})

t.test('JSON clients get the filtered resources and the filter that was applied', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const res = await app.inject({ url: '/schools/resources/resources/humanities/?subject=Geography&year=Year+99', headers: { cookie, accept: 'application/json' } })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(body.resources.map((r: { id: string }) => r.id), ['hass-mapping-skills'])
  t.same(body.filter, { subject: 'Geography', year: null, subjects: ['Civics and citizenship', 'Geography', 'History'], years: ['Year 3', 'Year 4', 'Year 5', 'Year 6', 'Year 9', 'Year 10'] })
  t.equal(body.category.slug, 'humanities')
})

t.test('an anonymous filtered link keeps its query in the BackURL', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const res = await app.inject(`${MATHS}?subject=Mathematics&year=Year+7`)
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, 'https://www.example.org/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F%3Fsubject%3DMathematics%26year%3DYear%2B7')
})

t.test('the login form carries a CSRF token and shows the lockout message when given them', async (t) => {
  const ctx = { ...english, siteName: 'S', member: undefined, signIn: true, paths: { index: '/i/', login: '/l', logout: '/o', category: (s: string) => `/c/${s}/`, file: (s: string, r: { id: string }) => `/f/${s}/${r.id}` } }
  const plain = String(defaultViews.login({}, ctx).body)
  t.notMatch(plain, '_csrf')
  t.notMatch(plain, 'role="alert"')
  t.match(plain, '<form method="post" action="/l">')
  const withToken = String(defaultViews.login({ csrfToken: 'tok"en', backUrl: '/c/a/' }, ctx).body)
  t.match(withToken, '<input type="hidden" name="_csrf" value="tok&quot;en">\n<input type="hidden" name="BackURL" value="/c/a/">')
  t.match(withToken, 'Sign in and you will go straight to it.')

  const lockedUntil = new Date(Date.UTC(2026, 10, 22, 9, 5, 30))
  const locked = String(defaultViews.login({ lockedUntil, error: 'ignored when locked', email: 'a@b.c' }, ctx).body)
  t.match(locked, '<p class="error" role="alert" id="login-error">Too many failed sign-in attempts. Try again after 09:05 AM UTC.</p>')
  t.notMatch(locked, 'ignored when locked')
  t.match(locked, '<form method="post" action="/l" aria-describedby="login-error">')

  const member = { id: 'm', name: 'Mo' }
  const nav = String(defaultViews.layout({ title: 'T', body: '' }, { ...ctx, member, csrfToken: 'abc' }))
  t.match(nav, '<form method="post" action="/o"><input type="hidden" name="_csrf" value="abc"><button type="submit">Sign out</button></form>')
  t.notMatch(String(defaultViews.layout({ title: 'T', body: '' }, { ...ctx, member })), '_csrf')
})

t.test('unknown paths under the section get the section\'s 404 page; the host keeps its own elsewhere', async (t) => {
  const { app, store } = await buildTestApp({ extend: (host) => host.get('/about', async () => 'about') })
  t.teardown(() => app.close())
  for (const url of ['/schools/resources/nope', '/schools/resources/assets/other.css', '/schools/resources/a/b/c?x=1']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
    t.match(res.body, '<title>Page not found | Schools resources</title>')
    t.match(res.body, '<h1>Page not found</h1>')
    t.match(res.body, '<a href="/schools/resources/">Go to all resources</a>')
    t.match(res.body, '<link rel="stylesheet" href="/schools/resources/assets/resources.css?v=')
  }
  const post = await app.inject({ method: 'POST', url: '/schools/resources/' })
  t.equal(post.statusCode, 404, 'a method the section does not serve')
  const json = await app.inject({ url: '/schools/resources/nope', headers: { accept: 'application/json' } })
  t.equal(json.statusCode, 404)
  t.same(json.json(), { statusCode: 404, error: 'Not Found', message: 'There is no page at this address in the resources section.' })
  t.equal(store.sessions.size, 0, 'no session for an anonymous 404')

  for (const url of ['/nope', '/schools/resourcesX', '/schools']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.match(res.headers['content-type'], /application\/json/, `${url}: Fastify's default 404`)
    t.notMatch(res.body, 'Page not found')
  }

  const cookie = await signIn(app)
  const signedIn = await app.inject({ url: '/schools/resources/nope', headers: { cookie } })
  t.equal(signedIn.statusCode, 404)
  t.match(signedIn.body, 'Signed in as <strong>Ada Teacher</strong>')
  const unknownCategory = await app.inject({ url: '/schools/resources/resources/nope/', headers: { cookie } })
  t.equal(unknownCategory.statusCode, 302, 'an unknown category still redirects to the index, as specified')
})

t.test('a host can replace the 404 view, and keep its own 404 handler outside the section', async (t) => {
  const { app } = await buildTestApp({
    plugin: { views: { notFound: () => ({ title: 'Lost', body: html`<h1>Lost?</h1>` }) } },
    extend: (host) => { host.setNotFoundHandler(async (_req, reply) => reply.code(404).type('text/plain').send('host 404')) }
  })
  t.teardown(() => app.close())
  const inside = await app.inject('/schools/resources/nope')
  t.equal(inside.statusCode, 404)
  t.match(inside.body, '<title>Lost | Schools resources</title>')
  t.match(inside.body, '<h1>Lost?</h1>')
  const outside = await app.inject('/elsewhere')
  t.equal(outside.body, 'host 404')
})

t.test('the default pages\' own markup is ASCII (the footer\'s middle dot is &middot;)', async (t) => {
  // A page with no other character above 127 goes out without a UTF-8 conversion of the whole document.
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  for (const url of ['/schools/resources/', '/schools/resources/resources/maths/', '/Security/login', '/schools/resources/nowhere']) {
    const res = await app.inject({ url, headers: { cookie } })
    // eslint-disable-next-line no-control-regex -- the whole ASCII range, controls included
    t.match(res.body, /^[\x00-\x7f]*$/, url)
  }
  t.match((await app.inject('/schools/resources/')).body, '<a href="/schools/resources/">All resources</a> &middot; Schools resources')
})

t.test('interpolations are escaped, nested html and arrays are not', async (t) => {
  const name = '<script>"x" & \'y\'</script>'
  const out = html`<p title="${name}">${name}</p>`
  t.ok(out instanceof SafeHtml)
  t.equal(String(out), '<p title="&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;">&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;</p>')
  t.equal(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.value, '<ul><li>a&lt;</li><li>b</li></ul>')
  t.equal(html`${null}${undefined}${false}${0}${''}`.value, '0')
  t.equal(html`<div>${unsafeRaw('<b>trusted</b>')}</div>`.value, '<div><b>trusted</b></div>')
})
