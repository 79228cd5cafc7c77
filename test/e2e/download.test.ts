// End to end, in headless Chromium: a protected file of the example server, opened from a link while
// signed out, downloads once the visitor has signed in on the login page it was sent to.
// Skipped (and says so) when Chromium is missing, except under CI=true, where that is a failure.
import t from 'tap'
import { once } from 'node:events'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { EXAMPLE_SERVER, startExampleServer, type ExampleServer } from '../helpers/example-server.js'

const root = resolve(__dirname, '../..')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const IN_CI = process.env.CI === 'true' || process.env.CI === '1'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']

const EMAIL = 'teacher@example.org'
const PASSWORD = 'correct horse battery staple'
const PDF = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'
const PNG = '/schools/resources/files/wellbeing/wellbeing-feelings-check-in/feelings-check-in.png'
const LOGIN_FOR_PDF = `/Security/login?BackURL=${encodeURIComponent(PDF)}`

if (!existsSync(CHROMIUM)) {
  const why = `Chromium not found at ${CHROMIUM} (install it with "apt-get install chromium", or set CHROMIUM_PATH)`
  if (IN_CI) {
    t.fail(`browser tests must run under CI=true: ${why}`)
  } else {
    process.stderr.write(`\n*** SKIPPED the end-to-end download tests: ${why} ***\n\n`)
    t.plan(0, `end-to-end download tests skipped: ${why}`)
  }
} else {
  t.setTimeout(240_000)
  let server: ExampleServer['child'] | undefined
  let browser: Browser | undefined
  let context: BrowserContext | undefined
  let page: Page
  let base = ''

  t.before(async () => {
    if (!existsSync(EXAMPLE_SERVER)) throw new Error(`${EXAMPLE_SERVER} is missing: run "npm run build" first (npm run test:all does)`)
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SESSION_SECRET: 'download-'.repeat(5) }
    // In-memory stores, as the journey in browser.test.ts runs.
    delete env.BASE_URL
    delete env.REDIS_URL
    const started = await startExampleServer(env)
    server = started.child
    base = started.address
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1024, height: 768 }, locale: 'en-AU' })
    context.setDefaultTimeout(15_000)
    page = await context.newPage()
  })

  t.teardown(async () => {
    await context?.close()
    await browser?.close()
    if (server !== undefined && server.exitCode === null) {
      server.kill('SIGTERM')
      await once(server, 'exit')
    }
  })

  const onDisk = (file: string) => readFileSync(resolve(root, 'examples', 'files', file))

  t.test('a file link opened signed out: the login page, then the download starts after sign-in', async (t) => {
    // A link to the file from somewhere else (a newsletter, an email), clicked by someone not signed in.
    await page.setContent(`<p>This week: <a href="${base}${PDF}">Fraction wall (PDF)</a></p>`)
    await Promise.all([page.waitForURL(`${base}${LOGIN_FOR_PDF}`), page.getByRole('link', { name: 'Fraction wall (PDF)' }).click()])
    t.equal(page.url(), `${base}${LOGIN_FOR_PDF}`, 'sent to the login page, the file\'s own address in BackURL')
    t.equal(await page.locator('input[name="BackURL"]').inputValue(), PDF, 'the form carries it')

    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Sign in' }).click()])
    t.equal(download.url(), `${base}${PDF}`, 'the download is the file asked for')
    t.equal(download.suggestedFilename(), 'fraction-wall.pdf', 'named by its Content-Disposition')
    t.equal(await download.failure(), null)
    const bytes = readFileSync(await download.path())
    t.ok(bytes.subarray(0, 5).equals(Buffer.from('%PDF-')), 'a PDF')
    t.same(bytes, onDisk('maths/fraction-wall.pdf'), 'byte for byte the file on disk')
  })

  t.test('signed in, a file link on a category page downloads at once; signed out again, it asks for sign-in', async (t) => {
    await page.goto(`${base}/schools/resources/resources/wellbeing/`)
    t.equal(await page.locator('h1').textContent(), 'Student wellbeing', 'signed in from the first test')
    const link = page.getByRole('link', { name: 'Daily feelings check-in' })
    t.equal(await link.getAttribute('href'), PNG, 'the page links the section\'s download address')
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
    t.equal(download.suggestedFilename(), 'feelings-check-in.png')
    t.same(readFileSync(await download.path()), onDisk('wellbeing/feelings-check-in.png'))

    await Promise.all([page.waitForURL(`${base}/schools/resources/`), page.getByRole('button', { name: 'Sign out', exact: true }).click()])
    // No cached copy stands in for the server's answer (Cache-Control: private, no-cache).
    const res = await page.goto(`${base}${PNG}`)
    t.equal(res!.status(), 200, 'the login page')
    t.equal(page.url(), `${base}/Security/login?BackURL=${encodeURIComponent(PNG)}`)
    t.equal(await page.locator('h1').textContent(), 'Sign in')
  })
}
