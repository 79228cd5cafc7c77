// End to end, in headless Chromium: "Forgotten your password?" on the example server, its mail through a
// real SMTP server in this process (SMTP_URL), a mail scanner's visit first, the new password, and what
// it ends: the old password and the member's other browser (docs/password-reset.md).
// Skipped (and says so) when Chromium is missing, except under CI=true, where that is a failure.
import t from 'tap'
import { existsSync } from 'node:fs'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/chromium.js'
import { EXAMPLE_SERVER, startExampleServer, type ExampleServer } from '../helpers/example-server.js'
import { mailServer } from '../helpers/mail-server.js'

const EMAIL = 'teacher@example.org'
const PASSWORD = 'correct horse battery staple'
const NEW_PASSWORD = 'the quiet river behind the school'
const MATHS = '/schools/resources/resources/maths/'
const LOGIN_FOR_MATHS = '/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F'

/** A port free now: the example server needs its own address (BASE_URL) before it listens. */
async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return port
}

if (chromiumPresent('password reset browser tests')) {
  t.setTimeout(300_000)

  t.test('forgotten password: the mail, a scanner first, a new password, the old one and the other browser ended', async (t) => {
    if (!existsSync(EXAMPLE_SERVER)) throw new Error(`${EXAMPLE_SERVER} is missing: run "npm run build" first (npm run test:all does)`)
    const mail = await mailServer(t)
    const { port: smtpPort } = mail.transport.options as { port: number }
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SESSION_SECRET: 'e2e-reset-'.repeat(4),
      BASE_URL: base,
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`
    }
    // In-memory stores: a fresh server, nothing shared with other runs.
    delete env.REDIS_URL
    const server: ExampleServer = await startExampleServer(env)
    t.teardown(async () => {
      if (server.child.exitCode !== null) return
      server.child.kill('SIGTERM')
      await once(server.child, 'exit')
    })
    const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    t.teardown(() => browser.close())
    const newPage = async (): Promise<Page> => {
      const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, locale: 'en-GB' })
      context.setDefaultTimeout(15_000)
      return context.newPage()
    }
    const signIn = async (page: Page, password: string) => {
      await page.goto(`${base}${MATHS}`)
      await page.getByLabel('Email').fill(EMAIL)
      await page.getByLabel('Password', { exact: true }).fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.waitForLoadState()
    }
    const axe = async (page: Page, name: string) => {
      const { violations } = await new AxeBuilder({ page }).analyze()
      t.same(violations.map((v) => v.id), [], `${name}: no axe violation`)
    }

    // The staff room computer, signed in with the old password.
    const staffRoom = await newPage()
    await signIn(staffRoom, PASSWORD)
    t.equal(staffRoom.url(), `${base}${MATHS}`, 'the staff room browser is signed in')

    // At home: the login page, its link, the address.
    const home = await newPage()
    await home.goto(`${base}${MATHS}`)
    t.equal(home.url(), `${base}${LOGIN_FOR_MATHS}`)
    await Promise.all([home.waitForURL(`${base}/Security/lostpassword`), home.getByRole('link', { name: 'Forgotten your password?' }).click()])
    await axe(home, 'the lost password page')
    await home.getByLabel('Email').fill(EMAIL)
    await home.getByRole('button', { name: 'Send me a link' }).click()
    await home.waitForLoadState()
    t.equal(await home.getByRole('heading', { level: 1 }).textContent(), 'Check your email')
    t.match(await home.getByRole('status').textContent(), /If that address has an account, we have sent a link to it/)

    const arrived = await mail.next()
    t.same(arrived.to, [EMAIL], 'the mail went to the member')
    const link = new RegExp(`${base.replace(/[.]/g, '\\.')}/Security/changepassword\\?m=[\\w-]+&t=[\\w-]+`).exec(arrived.text)?.[0]
    t.ok(link !== undefined, 'the mail holds the link, on the site\'s own address')

    // A mail scanner (Safe Links) fetches the link first, and follows nothing: the link still works after.
    const scanned = await fetch(link!, { redirect: 'manual' })
    t.equal(scanned.status, 303, 'the scanner\'s GET: a redirect to the clean address')
    t.equal(new URL(scanned.headers.get('location')!, base).href, `${base}/Security/changepassword`, 'without the token')
    t.notMatch(String(scanned.headers.get('location')), /[?&]t=/)
    await fetch(link!, { redirect: 'manual' })

    await home.goto(link!)
    t.equal(home.url(), `${base}/Security/changepassword`, 'the token is out of the address bar')
    t.equal(await home.getByRole('heading', { level: 1 }).textContent(), 'Choose a new password')
    await axe(home, 'the change password page')
    await home.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD)
    await home.getByLabel('New password again').fill(NEW_PASSWORD)
    await Promise.all([home.waitForURL(`${base}/schools/resources/`), home.getByRole('button', { name: 'Change password' }).click()])
    t.equal(await home.getByRole('button', { name: 'Sign out', exact: true }).count(), 1, 'signed in afresh in this browser')
    await home.goto(`${base}${MATHS}`)
    t.equal(home.url(), `${base}${MATHS}`, 'and the category opens')

    // The link is spent.
    const again = await newPage()
    await again.goto(link!)
    t.equal(await again.getByRole('link', { name: 'Ask for a new link' }).count(), 1, 'a used link offers a new one')

    // The old password is refused; the staff room computer is signed out.
    const other = await newPage()
    await signIn(other, PASSWORD)
    t.equal(other.url(), `${base}/Security/login`, 'the old password: the login page again')
    await staffRoom.reload()
    t.equal(staffRoom.url(), `${base}${LOGIN_FOR_MATHS}`, 'the staff room browser is signed out')
    await signIn(other, NEW_PASSWORD)
    t.equal(other.url(), `${base}${MATHS}`, 'the new password signs in')
  })
}
