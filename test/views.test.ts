import t from 'tap'
import { html, defaultViews } from '../lib/index.js'
import { buildTestApp, signIn } from './helpers/app.js'

t.test('the section index lists every category with its link, for everyone', async (t) => {
  const { app, store } = await buildTestApp()
  t.teardown(() => app.close())
  for (const url of ['/schools/resources/', '/schools/resources']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200, url)
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
    t.equal(res.headers.vary, 'Accept')
    t.match(res.body, /^<!doctype html>\n<html lang="en">/)
    t.match(res.body, '<title>Resources | Schools resources</title>')
    for (const slug of ['maths', 'english', 'science', 'humanities', 'wellbeing']) {
      t.match(res.body, `<a href="/schools/resources/resources/${slug}/">`)
    }
    t.match(res.body, 'Members sign in to open a category.')
    t.match(res.body, '<a href="/Security/login">Sign in</a>')
  }
  t.equal(store.sessions.size, 0, 'browsing the index stores no session')
  const json = await app.inject({ url: '/schools/resources/', headers: { accept: 'application/json' } })
  const body = json.json()
  t.equal(body.categories.length, 5)
  t.same(body.categories[0], { slug: 'maths', title: 'Mathematics', description: 'Number, algebra, measurement, geometry and statistics from Foundation to Year 10.', url: '/schools/resources/resources/maths/' })
  const browser = await app.inject({ url: '/schools/resources/', headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } })
  t.match(browser.headers['content-type'], /text\/html/)
})

t.test('signed in, the index shows the member and a sign-out button', async (t) => {
  const { app } = await buildTestApp()
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const res = await app.inject({ url: '/schools/resources/', headers: { cookie } })
  t.match(res.body, 'Signed in as <strong>Ada Teacher</strong>')
  t.match(res.body, /<form method="post" action="\/Security\/logout"><input type="hidden" name="_csrf" value="[^"]+"><button type="submit">Sign out<\/button><\/form>/)
  t.notMatch(res.body, 'Members sign in to open a category.')
})

t.test('empty catalog and empty category render a message, not an empty list', async (t) => {
  const ctx = { siteName: 'S', member: undefined, signIn: true, paths: { index: '/i/', login: '/l', logout: '/o', category: (s: string) => `/c/${s}/` } }
  t.match(String(defaultViews.index({ categories: [] }, ctx).body), 'No categories have been published yet.')
  t.match(String(defaultViews.category({ category: { slug: 'a', title: 'A', description: 'd', resources: [] } }, ctx).body), 'No resources in this category yet.')
  t.equal(String(defaultViews.layout({ title: 'T', body: '<p>host string</p>' }, { ...ctx, signIn: false })).includes('<p>host string</p>'), true)
  t.notMatch(String(defaultViews.layout({ title: 'T', body: '' }, { ...ctx, signIn: false })), /Sign in/, 'no sign-in link when the host owns sign-in')
})

t.test('a host can replace the layout alone and keep our page bodies', async (t) => {
  const { app } = await buildTestApp({
    plugin: {
      siteName: 'Hillside <Primary>',
      views: {
        layout: (page, ctx) => html`<!doctype html><title>${page.title} - ${ctx.siteName}</title><header>Hillside header</header>${page.body}<footer>Hillside footer</footer>`
      }
    }
  })
  t.teardown(() => app.close())
  const res = await app.inject('/schools/resources/')
  t.match(res.body, '<title>Resources - Hillside &lt;Primary&gt;</title><header>Hillside header</header><h1>Resources</h1>')
  t.match(res.body, '<footer>Hillside footer</footer>')
})

t.test('a view may return a plain string, sent as written', async (t) => {
  const { app } = await buildTestApp({ plugin: { views: { index: () => ({ title: 'Ours', body: '<section id="host">host markup</section>' }) } } })
  t.teardown(() => app.close())
  const res = await app.inject('/schools/resources/')
  t.match(res.body, '<section id="host">host markup</section>')
  t.match(res.body, '<title>Ours | Schools resources</title>')
})
