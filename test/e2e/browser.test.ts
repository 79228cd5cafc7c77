// End to end, in headless Chromium from Debian, driven by playwright-core: the journey a teacher
// takes through the example server, an axe-core check of every page, and a screenshot of each.
// Skipped (and says so) when Chromium is missing, except under CI=true, where that is a failure.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { EXAMPLE_SERVER, startExampleServer, type ExampleServer } from '../helpers/example-server.js'

const root = resolve(__dirname, '../..')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const IN_CI = process.env.CI === 'true' || process.env.CI === '1'
const ARTIFACTS = resolve(root, process.env.E2E_ARTIFACTS ?? 'e2e-artifacts')
const SCREENSHOTS = resolve(ARTIFACTS, 'screenshots')
const SERVER = EXAMPLE_SERVER

const EMAIL = 'teacher@example.org'
const PASSWORD = 'correct horse battery staple'
const MATHS = '/schools/resources/resources/maths/'
// The example's second demo member, a parent: not staff, so the staff-only category is closed to them.
const PARENT_EMAIL = 'parent@example.org'
const PARENT_PASSWORD = 'parents evening in the hall'
const STAFF_ROOM = '/schools/resources/resources/staff-room/'
const INDEX = '/schools/resources/'
const LOGIN_FOR_MATHS = '/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F'

const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'
]

/** The example server on a free port, as `npm start` runs it. */
async function startServer (settings: NodeJS.ProcessEnv = {}): Promise<ExampleServer> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SESSION_SECRET: 'e2e-'.repeat(10), ...settings }
  delete env.BASE_URL
  // The journey runs on the in-memory stores: with REDIS_URL the example server would share lockout
  // counts and sessions with earlier runs (test/redis/ covers the server on Redis).
  delete env.REDIS_URL
  return startExampleServer(env)
}

interface AxeSummary {
  page: string
  url: string
  counts: Record<'critical' | 'serious' | 'moderate' | 'minor', number>
  violations: Array<{ id: string, impact: string | null | undefined, help: string, nodes: number }>
  passes: number
}

if (!existsSync(CHROMIUM)) {
  const why = `Chromium not found at ${CHROMIUM} (install it with "apt-get install chromium", or set CHROMIUM_PATH)`
  if (IN_CI) {
    t.fail(`browser tests must run under CI=true: ${why}`)
  } else {
    process.stderr.write(`\n*** SKIPPED the end-to-end browser tests: ${why} ***\n\n`)
    t.plan(0, `end-to-end browser tests skipped: ${why}`)
  }
} else {
  // The longest file: its journeys took 190 s under CI on a slower machine (four files at once on two
  // cores). A bound for a hung browser, not a speed target.
  t.setTimeout(420_000)
  let server: ExampleServer['child'] | undefined
  let browser: Browser | undefined
  let base = ''
  const axeResults: AxeSummary[] = []

  t.before(async () => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first (npm run test:all does)`)
    // Start empty, so that every file there comes from this run.
    rmSync(ARTIFACTS, { recursive: true, force: true })
    mkdirSync(SCREENSHOTS, { recursive: true })
    const started = await startServer()
    server = started.child
    base = started.address
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  })

  t.teardown(async () => {
    await browser?.close()
    if (server !== undefined && server.exitCode === null) {
      server.kill('SIGTERM')
      await once(server, 'exit')
    }
    if (axeResults.length > 0) writeFileSync(resolve(ARTIFACTS, 'axe-report.json'), JSON.stringify(axeResults, null, 2) + '\n')
  })

  /** A page in a browser context of its own (its own cookies), closed when the test `t` ends. */
  async function newPage (t: Test, options: { javaScriptEnabled: boolean }): Promise<Page> {
    const context = await browser!.newContext({
      javaScriptEnabled: options.javaScriptEnabled,
      viewport: { width: 1024, height: 768 },
      locale: 'en-AU'
    })
    context.setDefaultTimeout(15_000)
    t.teardown(() => context.close())
    return context.newPage()
  }

  async function takeScreenshot (page: Page, name: string, fullPage = true): Promise<void> {
    await page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage })
  }
  const screenshot = takeScreenshot

  /**
   * The accessible description Chromium computes for the first element matching `selector` (from its
   * accessibility tree, over the DevTools protocol): what a screen reader announces after the name.
   */
  async function accessibleDescription (page: Page, selector: string): Promise<string> {
    const cdp = await page.context().newCDPSession(page)
    try {
      const { root } = await cdp.send('DOM.getDocument', { depth: 0 })
      const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector })
      if (nodeId === 0) throw new Error(`no element matches ${selector}`)
      const { nodes } = await cdp.send('Accessibility.getPartialAXTree', { nodeId, fetchRelatives: false })
      return String(nodes[0]?.description?.value ?? '')
    } finally {
      await cdp.detach()
    }
  }

  /** The part of the URL after the origin, as the address bar shows it. */
  function address (page: Page): string {
    return page.url().slice(base.length)
  }

  /**
   * Runs axe-core on the page, records the affected elements by impact, and fails on serious or critical
   * findings; with `strict`, on any finding at all (the pages built with this rule in place).
   */
  async function axeCheck (t: Test, page: Page, name: string, strict = false): Promise<void> {
    const results = await new AxeBuilder({ page }).analyze()
    const counts = { critical: 0, serious: 0, moderate: 0, minor: 0 }
    for (const v of results.violations) counts[(v.impact ?? 'minor') as keyof typeof counts] += v.nodes.length
    const summary: AxeSummary = {
      page: name,
      url: address(page),
      counts,
      violations: results.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })),
      passes: results.passes.length
    }
    axeResults.push(summary)
    t.comment(`axe ${name} (${summary.url}): critical ${counts.critical}, serious ${counts.serious}, moderate ${counts.moderate}, minor ${counts.minor}; ${summary.passes} rules passed`)
    const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    const failing = strict ? results.violations : serious
    t.same(failing.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [], `${name}: no ${strict ? '' : 'serious or critical '}violations`)
    t.ok(summary.passes > 10, `${name}: axe really ran`)
  }

  /** Where a journey runs: the example server of this file, or one started with another session plugin. */
  interface Site { label: string, base: () => string, screenshots: boolean }
  const defaultSite: Site = { label: '', base: () => base, screenshots: true }
  const noScreenshot = async () => {}

  const journey = (parent: Test, site: Site) => parent.test(`the journey without JavaScript${site.label}: category → login → wrong password → sign in → filter → sign out`, async (t) => {
    const base = site.base()
    const address = (page: Page) => page.url().slice(base.length)
    const screenshot = site.screenshots ? takeScreenshot : noScreenshot
    // JavaScript off: the pages must work as plain HTML forms and links.
    const page = await newPage(t, { javaScriptEnabled: false })

    await t.test('1. a category page opened signed out ends on the login page with its BackURL', async (t) => {
      const res = await page.goto(`${base}${MATHS}`)
      t.equal(address(page), LOGIN_FOR_MATHS, 'the address bar holds the login URL with BackURL')
      const redirect = res!.request().redirectedFrom()
      t.equal(redirect?.url(), `${base}${MATHS}`, 'the browser was redirected from the category page')
      t.equal((await redirect!.response())!.status(), 302)
      t.equal(res!.status(), 200)
      t.equal(await page.locator('h1').textContent(), 'Sign in')
      t.equal(await page.locator('input[name="BackURL"]').inputValue(), MATHS, 'the form carries the return address')
      t.equal(await page.title(), 'Sign in | Riverside School')
      await screenshot(page, 'login')
    })

    await t.test('2. wrong credentials: the message shows and the password field is empty', async (t) => {
      await page.getByLabel('Email').fill(EMAIL)
      await page.getByLabel('Password').fill('not the password')
      const [res] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Sign in' }).click()])
      t.equal(res.status(), 401)
      await page.waitForLoadState()
      t.equal((await page.getByRole('alert').textContent())?.trim(), 'The email address or password is incorrect.')
      t.equal(await page.getByLabel('Password').inputValue(), '', 'the password is not echoed')
      t.equal(await page.getByLabel('Email').inputValue(), EMAIL, 'the email is kept')
      t.equal(await page.locator('input[name="BackURL"]').inputValue(), MATHS, 'the return address survives the retry')
      await screenshot(page, 'login-error')
    })

    await t.test('3. signing in lands on the category page first asked for, with its resources', async (t) => {
      await page.getByLabel('Password').fill(PASSWORD)
      await Promise.all([page.waitForURL(`${base}${MATHS}`), page.getByRole('button', { name: 'Sign in' }).click()])
      t.equal(address(page), MATHS)
      t.equal(await page.locator('h1').textContent(), 'Mathematics')
      t.same(await page.locator('.resource h3').allTextContents(), [
        'Fraction wall', 'Solving linear equations', 'Statistical investigation: how we travel to school', 'Right-angled trigonometry check-in'
      ])
      const first = page.locator('.resource').first()
      t.match(await first.textContent(), /A printable fraction wall[\s\S]*Subject\s*Mathematics[\s\S]*Year levels\s*Year 3, Year 4[\s\S]*Format\s*Worksheet/)
      t.equal((await page.locator('.signed-in').textContent())?.trim(), 'Signed in as Demo Teacher', 'who is signed in')
      t.equal(await page.getByRole('button', { name: 'Sign out', exact: true }).count(), 1, 'a sign-out button')
      await screenshot(page, 'category')
    })

    await t.test('4. filter the list, sign out, and the category page asks for sign-in again', async (t) => {
      await page.getByLabel('Year level').selectOption('Year 7')
      await Promise.all([page.waitForURL(/year=Year\+7/), page.getByRole('button', { name: 'Show resources' }).click()])
      t.equal(address(page), `${MATHS}?subject=&year=Year+7`, 'plain GET query parameters')
      t.same(await page.locator('.resource h3').allTextContents(), ['Solving linear equations'])
      t.equal(await page.locator('.result-count').textContent(), 'Showing 1 of 4 resources for Year 7.')
      t.equal(await page.getByLabel('Year level').inputValue(), 'Year 7', 'the choice stays selected')
      await screenshot(page, 'category-filtered')

      await page.getByRole('link', { name: 'Clear filters' }).click()
      await page.waitForURL(`${base}${MATHS}`)
      t.equal(await page.locator('.resource').count(), 4, 'clearing the filters shows every resource again')

      await Promise.all([page.waitForURL(`${base}/schools/resources/`), page.getByRole('button', { name: 'Sign out', exact: true }).click()])
      t.equal(address(page), '/schools/resources/', 'signing out lands on the section index')
      t.equal(await page.getByRole('link', { name: 'Sign in' }).count(), 1, 'the header offers sign-in again')
      t.equal(await page.locator('.signed-in').count(), 0)
      await screenshot(page, 'index')

      await page.goto(`${base}${MATHS}`)
      t.equal(address(page), LOGIN_FOR_MATHS, 'the category page asks for sign-in again')
    })

    await t.test('an unknown address in the section gets the section\'s 404 page', async (t) => {
      const res = await page.goto(`${base}/schools/resources/no-such-page`)
      t.equal(res!.status(), 404)
      t.equal(await page.locator('h1').textContent(), 'Page not found')
      await page.getByRole('link', { name: 'Go to all resources' }).click()
      await page.waitForURL(`${base}/schools/resources/`)
      t.equal(await page.locator('h1').textContent(), 'Resources', 'its link leads back to the index')
      await page.goto(`${base}/schools/resources/no-such-page`)
      await screenshot(page, 'not-found')
    })
  })
  journey(t, defaultSite)

  t.test('accessibility: axe-core finds no serious or critical violations on any page', async (t) => {
    const page = await newPage(t, { javaScriptEnabled: true })
    // The plugin sends a strict Content-Security-Policy with its pages: any inline style or script in them
    // would be refused and show up as a console error below. Every document must carry it.
    const withoutPolicy: string[] = []
    page.on('response', (r) => {
      // A redirect has no document to protect; the example's anonymousFastPath answers those before the
      // section's security headers run (see the README). Every page that is rendered must carry the policy.
      if (r.request().resourceType() !== 'document' || (r.status() >= 300 && r.status() < 400)) return
      const policy = r.headers()['content-security-policy'] ?? ''
      if (!policy.includes("default-src 'none'") || !policy.includes("style-src 'self'") || policy.includes('unsafe-inline')) {
        withoutPolicy.push(`${r.status()} ${r.url()}: ${policy}`)
      }
    })
    // The pages carry no script of their own, so any console error or failed request is ours to fix.
    const problems: string[] = []
    page.on('console', (m) => {
      // Chromium logs every 4xx document (the 401 login retry, the 404 page) as a failed resource;
      // subresources are checked through their responses below.
      if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 40[14]/.test(m.text())) problems.push(`console: ${m.text()}`)
    })
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`))
    page.on('response', (r) => {
      if (r.status() >= 400 && r.request().resourceType() !== 'document' && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()}: ${r.url()}`)
    })

    // Expressions rather than functions: the test is type-checked without the DOM library.
    function inPage (expression: string): Promise<unknown> {
      return page.evaluate(expression)
    }

    const check = (name: string) => axeCheck(t, page, name)

    // The check can fail: a page with an unlabelled field and no language is flagged.
    const control = await page.context().newPage()
    await control.setContent('<!doctype html><html><head><title>x</title></head><body><main><input type="text"></main></body></html>')
    const flagged = (await new AxeBuilder({ page: control }).analyze()).violations.map((v) => `${v.id}:${v.impact}`)
    t.ok(flagged.includes('label:critical') && flagged.includes('html-has-lang:serious'), `axe flags a broken page (${flagged.join(', ')})`)
    await control.close()

    await page.goto(`${base}/schools/resources/`)
    await check('index, signed out')
    const headerBackground = 'getComputedStyle(document.querySelector(".site-header")).backgroundColor'
    t.equal(await inPage(headerBackground), 'rgb(243, 245, 247)', 'the stylesheet is applied under the policy')
    // Control: the policy is really enforced, an inline style is refused.
    const seen = problems.length
    await page.addStyleTag({ content: '.site-header { background: rgb(255, 0, 0) }' }).catch(() => undefined)
    t.equal(await inPage(headerBackground), 'rgb(243, 245, 247)', 'an inline style is refused')
    t.match(problems.slice(seen).join('\n'), /Content Security Policy/, 'and reported')
    problems.splice(seen)

    // Keyboard: the first Tab shows the skip link, with a visible focus outline.
    await page.keyboard.press('Tab')
    const focus = await inPage(`(() => {
      const el = document.activeElement
      const style = getComputedStyle(el)
      return { text: el.textContent, outline: style.outlineStyle, width: style.outlineWidth, top: el.getBoundingClientRect().top }
    })()`) as { text: string, outline: string, width: string, top: number }
    t.same({ text: focus.text, outline: focus.outline, width: focus.width }, { text: 'Skip to content', outline: 'solid', width: '3px' }, 'focus is visible')
    t.ok(focus.top >= 0, 'the focused skip link is on screen')
    await page.keyboard.press('Enter')
    t.equal(await inPage('document.activeElement.id'), 'main', 'the skip link moves focus to the content')

    await page.goto(`${base}${MATHS}`)
    await check('login')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill('wrong')
    await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Sign in' }).click()])
    await page.waitForLoadState()
    await check('login, wrong password')
    await page.getByLabel('Password').fill(PASSWORD)
    await Promise.all([page.waitForURL(`${base}${MATHS}`), page.getByRole('button', { name: 'Sign in' }).click()])
    await check('category')
    // A category with a protected file (docs/files.md): its link is the section's download address, the
    // other an address of its own; the page passes axe with no violation at all.
    await page.goto(`${base}/schools/resources/resources/wellbeing/`)
    t.same(await page.locator('.resource h3 a').evaluateAll((links) => links.map((a) => a.getAttribute('href'))), [
      'https://www.example.org/files/wellbeing/online-safety.pdf',
      '/schools/resources/files/wellbeing/wellbeing-feelings-check-in/feelings-check-in.png'
    ], 'the file resource links the section\'s download address')
    await axeCheck(t, page, 'category with a file link', true)
    await screenshot(page, 'category-files')
    await page.goto(`${base}/schools/resources/resources/humanities/?subject=Geography&year=Year+5`)
    t.equal(await page.locator('.resource').count(), 1)
    await check('category, filtered')
    await page.goto(`${base}/schools/resources/resources/humanities/?subject=History&year=Year+9`)
    t.match(await page.locator('main').textContent(), 'No resources match these filters.')
    await check('category, no matches')
    await page.goto(`${base}/schools/resources/`)
    await check('index, signed in')
    await page.goto(`${base}/Security/login`)
    t.match(await page.locator('main').textContent(), 'You are signed in as Demo Teacher.')
    await check('login, signed in')
    await page.goto(`${base}/schools/resources/no-such-page`)
    await check('not found')

    // On a phone: no sideways scrolling, and the same checks hold.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`${base}${MATHS}?year=Year+3`)
    t.ok(await inPage('document.documentElement.scrollWidth <= window.innerWidth'), 'no horizontal scroll at 390px')
    await check('category, phone')
    await screenshot(page, 'category-phone')
    await page.goto(`${base}/schools/resources/`)
    t.ok(await inPage('document.documentElement.scrollWidth <= window.innerWidth'), 'index: no horizontal scroll at 390px')
    await screenshot(page, 'index-phone')

    t.same(problems, [], 'no console errors or failed requests')
    t.same(withoutPolicy, [], 'every page came with the strict Content-Security-Policy')
  })

  const audiences = (parent: Test, site: Site) => parent.test(`audiences${site.label}: a parent opens the staff room from the index, gets the 403 page, and signs in as the teacher from it by keyboard`, async (t) => {
    const base = site.base()
    const address = (page: Page) => page.url().slice(base.length)
    const screenshot = site.screenshots ? takeScreenshot : noScreenshot
    // JavaScript off: the refusal and the way out of it are plain HTML links and forms.
    const page = await newPage(t, { javaScriptEnabled: false })

    await t.test('1. signed in as the parent, the index marks the staff room in words tied to its link', async (t) => {
      await page.goto(`${base}/Security/login`)
      await page.getByLabel('Email').fill(PARENT_EMAIL)
      await page.getByLabel('Password').fill(PARENT_PASSWORD)
      await Promise.all([page.waitForURL(`${base}${INDEX}`), page.getByRole('button', { name: 'Sign in' }).click()])
      t.equal((await page.locator('.signed-in').textContent())?.trim(), 'Signed in as Demo Parent')
      t.same(await page.locator('.categories li.locked h2').allTextContents(), ['Staff room'], 'only the staff room is marked')
      const link = page.getByRole('link', { name: 'Staff room', exact: true })
      const described = await link.getAttribute('aria-describedby')
      t.equal(described, 'locked-staff-room')
      const note = page.locator(`#${described}`)
      t.equal(await note.textContent(), 'You don\'t have access to this category.')
      t.ok(await note.isVisible(), 'the mark is shown as text, not only as a colour')
      t.equal(await accessibleDescription(page, 'a[aria-describedby="locked-staff-room"]'), 'You don\'t have access to this category.', 'Chromium\'s accessibility tree gives the link the note as its description')
      t.equal(await accessibleDescription(page, `a[href="${MATHS}"]`), '', 'an open category has none')
      await screenshot(page, 'index-locked')
    })

    await t.test('2. the marked link leads to the 403 page naming the category', async (t) => {
      const [res] = await Promise.all([page.waitForResponse(`${base}${STAFF_ROOM}`), page.getByRole('link', { name: 'Staff room', exact: true }).click()])
      t.equal(res.status(), 403)
      await page.waitForLoadState()
      t.equal(address(page), STAFF_ROOM, 'the address stays the one refused')
      t.equal(await page.title(), 'You don\'t have access to Staff room | Riverside School')
      t.equal(await page.locator('h1').textContent(), 'You don\'t have access to Staff room')
      t.match(await page.locator('main').textContent(), 'You are signed in as Demo Parent.')
      t.equal(await page.locator('.resource').count(), 0, 'none of its resources are shown')
      await screenshot(page, 'forbidden')
    })

    await t.test('3. "Sign in as someone else" is reached and pressed by keyboard; it signs out and asks for sign-in with the refused page as BackURL', async (t) => {
      const focused: string[] = []
      for (let i = 0; i < 10 && focused.at(-1) !== 'Sign in as someone else'; i++) {
        await page.keyboard.press('Tab')
        focused.push(await page.evaluate('document.activeElement.textContent.trim()') as string)
      }
      t.same(focused, ['Skip to content', 'Riverside School', 'Sign out', 'Sign out on all devices', 'Sign in as someone else'], 'the fifth Tab reaches the button, after the header and its two sign-outs')
      const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')
      t.equal(outline, 'solid', 'with a visible focus outline')
      const [out] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.keyboard.press('Enter')])
      t.equal(out.status(), 303)
      t.equal(out.url(), `${base}/Security/logout`)
      await page.waitForURL(`${base}/Security/login?**`)
      t.equal(address(page), `/Security/login?BackURL=${encodeURIComponent(STAFF_ROOM)}`)
      t.equal(await page.locator('input[name="BackURL"]').inputValue(), STAFF_ROOM, 'the form carries the refused page')
      t.equal(await page.getByRole('link', { name: 'Sign in' }).count(), 1, 'signed out: the header offers sign-in')
    })

    await t.test('4. signing in as the teacher (staff) lands on the staff room', async (t) => {
      await page.getByLabel('Email').fill(EMAIL)
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByLabel('Password').press('Enter')
      await page.waitForURL(`${base}${STAFF_ROOM}`)
      t.equal(address(page), STAFF_ROOM)
      t.equal(await page.locator('h1').textContent(), 'Staff room')
      t.equal((await page.locator('.signed-in').textContent())?.trim(), 'Signed in as Demo Teacher')
      t.same(await page.locator('.resource h3').allTextContents(), [
        'Unit planning template', 'Writing moderation samples', 'Semester reporting guide', 'Excursion risk assessment'
      ])
      await page.goto(`${base}${INDEX}`)
      t.equal(await page.locator('.categories li.locked').count(), 0, 'nothing is marked for staff')
    })
  })
  audiences(t, defaultSite)

  t.test('accessibility of the audience pages: no axe violations at all on the marked index and the 403 page, on a desktop and a phone', async (t) => {
    const page = await newPage(t, { javaScriptEnabled: true })
    const consoleErrors: string[] = []
    page.on('console', (m) => {
      // Chromium logs the 403 document itself as a failed resource; anything else is ours to fix.
      if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 403/.test(m.text())) consoleErrors.push(m.text())
    })
    await page.goto(`${base}/Security/login`)
    await page.getByLabel('Email').fill(PARENT_EMAIL)
    await page.getByLabel('Password').fill(PARENT_PASSWORD)
    await Promise.all([page.waitForURL(`${base}${INDEX}`), page.getByRole('button', { name: 'Sign in' }).click()])

    for (const [width, height, where] of [[1024, 768, ''], [390, 844, ', phone']] as const) {
      await page.setViewportSize({ width, height })
      await page.goto(`${base}${INDEX}`)
      t.equal(await page.locator('.categories li.locked').count(), 1)
      await axeCheck(t, page, `index with a locked category${where}`, true)
      t.ok(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `index${where}: no horizontal scroll`)
      const res = await page.goto(`${base}${STAFF_ROOM}`)
      t.equal(res!.status(), 403)
      await axeCheck(t, page, `403 page${where}`, true)
      t.ok(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `403 page${where}: no horizontal scroll`)
    }
    await screenshot(page, 'forbidden-phone')
    // The mark's own look, as the stylesheet sets it: text in the muted colour on the shaded card.
    await page.goto(`${base}${INDEX}`)
    const look = await page.evaluate(`(() => {
      const note = getComputedStyle(document.querySelector('.access-note'))
      const card = getComputedStyle(document.querySelector('.categories li.locked'))
      return { color: note.color, weight: note.fontWeight, card: card.backgroundColor, border: card.borderTopStyle }
    })()`)
    t.same(look, { color: 'rgb(74, 85, 96)', weight: '600', card: 'rgb(243, 245, 247)', border: 'dashed' }, 'the locked card is styled by the stylesheet')
    // axe really measured the contrast of the new parts: the note on its shaded card, and the 403 page's panel.
    const contrast = async (selector: string) => {
      const r = await new AxeBuilder({ page }).include(selector).withRules(['color-contrast']).analyze()
      return { passed: r.passes.flatMap((p) => p.nodes).length, failed: r.violations.length }
    }
    const note = await contrast('.categories li.locked')
    t.ok(note.passed >= 3 && note.failed === 0, `the locked card's link, description and note pass color-contrast (${note.passed} elements)`)
    await page.goto(`${base}${STAFF_ROOM}`)
    const panel = await contrast('.switch-account')
    t.ok(panel.passed >= 2 && panel.failed === 0, `the 403 page's panel text and button pass color-contrast (${panel.passed} elements)`)
    t.same(consoleErrors, [], 'no console errors (a CSP refusal included)')
  })

  t.test('lockout: the tenth wrong password for an address shows when to try again', async (t) => {
    const page = await newPage(t, { javaScriptEnabled: true })
    // An address of its own, so the demo member stays usable; the example keeps the default of 10.
    const email = 'locked.out@example.org'
    await page.goto(`${base}/Security/login`)
    const statuses: number[] = []
    for (let i = 1; i <= 10; i++) {
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Password').fill(`wrong ${i}`)
      const [res] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Sign in' }).click()])
      statuses.push(res.status())
      await page.waitForLoadState()
    }
    t.same(statuses, [...Array(9).fill(401), 429], 'nine refusals, then the lock')
    const alert = page.getByRole('alert')
    t.match((await alert.textContent())?.trim(), /^Too many failed sign-in attempts\. Try again after \d\d:\d\d [AP]M UTC\.$/)
    t.equal(await page.locator('form[method="post"][action="/Security/login"]').getAttribute('aria-describedby'), 'login-error', 'the message is tied to the form')
    t.equal(await page.getByLabel('Email').inputValue(), email)
    t.equal(await page.getByLabel('Password').inputValue(), '')
    await axeCheck(t, page, 'login, locked out')
    await screenshot(page, 'login-locked')
  })

  // The same journeys on the example server with SESSION_PLUGIN=secure-session: the session is an
  // encrypted cookie, and sign-out clears it (docs/session-wiring.md).
  t.test('with @fastify/secure-session', async (t) => {
    const started = await startServer({ SESSION_PLUGIN: 'secure-session' })
    t.teardown(async () => {
      if (started.child.exitCode !== null) return
      started.child.kill('SIGTERM')
      await once(started.child, 'exit')
    })
    const site: Site = { label: ' (secure-session)', base: () => started.address, screenshots: false }
    journey(t, site)
    audiences(t, site)
    t.test('the session is secure-session\'s cookie, and sign-out clears it', async (t) => {
      const page = await newPage(t, { javaScriptEnabled: false })
      await page.goto(`${started.address}/Security/login`)
      await page.getByLabel('Email').fill(PARENT_EMAIL)
      await page.getByLabel('Password').fill(PARENT_PASSWORD)
      await Promise.all([page.waitForURL(`${started.address}${INDEX}`), page.getByRole('button', { name: 'Sign in' }).click()])
      const names = async () => (await page.context().cookies()).map((c) => c.name).filter((name) => name.startsWith('session'))
      t.same(await names(), ['session'], 'the encrypted session cookie, no sessionId')
      await Promise.all([page.waitForURL(`${started.address}${INDEX}`), page.getByRole('button', { name: 'Sign out', exact: true }).click()])
      t.same(await names(), [], 'gone after sign-out')
    })
  })
}
