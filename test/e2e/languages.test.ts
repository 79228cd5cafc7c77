// End to end, in headless Chromium: every page of the section in two languages, French (shipped) and
// Arabic (right to left, from a host's `messages`), chosen by the browser's Accept-Language. Each page:
// axe finds nothing, `<html lang>` and `dir` are right, and a phone's width needs no horizontal scroll.
// With SCREENSHOTS=1 each page is also saved to docs/screenshots/ (docs/languages.md shows them).
// Skipped (and says so) when Chromium is missing, except under CI=true, where that is a failure.
import t, { type Test } from 'tap'
import { mkdirSync } from 'node:fs'
import { createServer } from 'node:net'
import { once } from 'node:events'
import { resolve } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import { chromium, type Browser, type Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import schoolsResources, { InMemoryCatalog, errorCodes, type Catalog, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { demoCatalog } from '../../examples/demo-catalog.js'
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/chromium.js'
import { SECRET, TEACHER, teacherOnly } from '../helpers/app.js'
import { arabic } from '../fixtures/messages-ar.js'
import { pageLanguage } from '../helpers/page-language.js'
import type { MessageKey } from '../../lib/i18n/locales/en.js'

const SCREENSHOTS = process.env.SCREENSHOTS === '1' ? resolve(__dirname, '../../docs/screenshots') : undefined
const MATHS = '/schools/resources/resources/maths/'
const PHONE = { width: 390, height: 844 }

/** A catalog with two categories that fail: one as a broken database (500), one as a store that is down (503). */
class FailingCatalog implements Catalog {
  readonly #inner = new InMemoryCatalog(demoCatalog)
  listCategories () {
    return this.#inner.listCategories()
  }

  getCategory (slug: string) {
    if (slug === 'broken') throw new Error('the catalog database refused the query')
    if (slug === 'offline') throw new errorCodes.FST_SR_STORE_UNAVAILABLE('the catalog database is down')
    return this.#inner.getCategory(slug)
  }
}

/** A port nobody listens on now, so that baseUrl (the reset link's origin) can name it before the app listens. */
async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

if (chromiumPresent('language browser tests')) {
  t.setTimeout(300_000)
  let browser: Browser | undefined
  let app: FastifyInstance | undefined
  let origin = ''
  const links: string[] = []

  t.before(async () => {
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    app = Fastify()
    await app.register(fastifyCookie)
    await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
    const options: FastifySchoolsResourcesOptions = {
      catalog: new FailingCatalog(),
      authenticate: teacherOnly,
      baseUrl: origin,
      siteName: 'Riverside School',
      messages: { ar: arabic },
      passwordReset: {
        findMemberByEmail: (email) => email === TEACHER.email ? { id: 't-1', name: 'Ada Teacher', email } : null,
        sendResetEmail: ({ url }) => { links.push(url) },
        setPassword: () => {}
      }
    }
    await app.register(schoolsResources, options)
    await app.listen({ port, host: '127.0.0.1' })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  })

  t.teardown(async () => {
    await browser?.close()
    await app?.close()
  })

  /**
   * Checks the page in `locale` (`dir`): its heading is the catalogue's (`heading`: a key, or the host's
   * own words such as a category's title), language, direction, axe, width; saves its screenshot when asked.
   */
  async function check (t: Test, page: Page, name: string, locale: string, dir: 'ltr' | 'rtl', heading: MessageKey | { text: string }): Promise<void> {
    const expected = typeof heading === 'string' ? pageLanguage(locale, { ar: arabic }).t(heading) : heading.text
    t.equal((await page.locator('h1').textContent())?.trim(), expected, `${name}: the heading in ${locale}`)
    t.equal(await page.getAttribute('html', 'lang'), locale, `${name}: <html lang="${locale}">`)
    t.equal(await page.getAttribute('html', 'dir'), dir, `${name}: <html dir="${dir}">`)
    const results = await new AxeBuilder({ page }).analyze()
    t.same(results.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [], `${name}: axe finds nothing`)
    t.ok(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${name}: no horizontal scroll at ${PHONE.width}px`)
    if (SCREENSHOTS !== undefined) {
      mkdirSync(SCREENSHOTS, { recursive: true })
      await page.screenshot({ path: resolve(SCREENSHOTS, `${locale}-${name}.png`), fullPage: true })
    }
  }

  for (const { locale, accept, dir } of [
    { locale: 'fr', accept: 'fr-FR', dir: 'ltr' as const },
    { locale: 'ar', accept: 'ar', dir: 'rtl' as const }
  ]) {
    t.test(`every page in ${locale} (${dir})`, async (t) => {
      const context = await browser!.newContext({ viewport: PHONE, locale: accept })
      context.setDefaultTimeout(15_000)
      t.teardown(() => context.close())
      const page = await context.newPage()

      await page.goto(`${origin}/schools/resources/`)
      await check(t, page, 'index', locale, dir, 'index.title')

      // The spec's redirect is the same in every language: the login page, carrying the address.
      const [redirect] = await Promise.all([page.waitForResponse(`${origin}${MATHS}`), page.goto(`${origin}${MATHS}`)])
      t.equal(redirect.status(), 302, 'the members-only page answers 302')
      t.equal(await redirect.headerValue('location'), `${origin}/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F`, 'Location byte for byte')
      await check(t, page, 'login', locale, dir, 'login.title')

      await page.locator('#email').fill(TEACHER.email)
      await page.locator('#password').fill('not the password')
      await page.locator('form[method=post] button[type=submit]').last().click()
      await page.waitForSelector('[role=alert]')
      await check(t, page, 'login-refused', locale, dir, 'login.title')

      await page.locator('#password').fill(TEACHER.password)
      await Promise.all([page.waitForURL(`${origin}${MATHS}`), page.locator('form[method=post] button[type=submit]').last().click()])
      await check(t, page, 'category', locale, dir, { text: 'Mathematics' })

      await page.locator('#filter-subject').selectOption({ index: 1 })
      await Promise.all([page.waitForURL(/subject=/), page.locator('.filters button[type=submit]').click()])
      await check(t, page, 'category-filtered', locale, dir, { text: 'Mathematics' })

      await page.goto(`${origin}/schools/resources/resources/staff-room/`)
      await check(t, page, 'forbidden', locale, dir, { text: pageLanguage(locale, { ar: arabic }).t('forbidden.title', { title: 'Staff room' }) })

      await page.goto(`${origin}/schools/resources/no-such-page`)
      await check(t, page, 'not-found', locale, dir, 'notFound.title')

      await page.goto(`${origin}/schools/resources/resources/broken/`)
      await check(t, page, 'server-error', locale, dir, 'serverError.title')

      await page.goto(`${origin}/schools/resources/resources/offline/`)
      await check(t, page, 'unavailable', locale, dir, 'unavailable.title')

      // Signed out (a new browser), the way back in: the lost-password page, its answer, the reset link's page.
      const visitor = await (await browser!.newContext({ viewport: PHONE, locale: accept })).newPage()
      t.teardown(() => visitor.context().close())
      await visitor.goto(`${origin}/Security/lostpassword`)
      await check(t, visitor, 'lost-password', locale, dir, 'lostPassword.title')
      const before = links.length
      await visitor.locator('input[type=email]').fill(TEACHER.email)
      await visitor.locator('form[method=post] button[type=submit]').click()
      await visitor.waitForSelector('[role=status]')
      await check(t, visitor, 'lost-password-sent', locale, dir, 'lostPassword.sentTitle')
      for (let i = 0; i < 100 && links.length === before; i++) await new Promise((resolve) => setTimeout(resolve, 50))
      t.equal(links.length, before + 1, 'a reset link was sent')
      await visitor.goto(links.at(-1)!)
      await check(t, visitor, 'change-password', locale, dir, 'changePassword.title')
    })
  }
}
