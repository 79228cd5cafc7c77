// End to end, in headless Chromium: what a school says about sessions (docs/session-lifecycle.md). A
// classroom browser is signed out after the idle limit and the login page says why; a laptop that kept
// the teacher signed in comes back signed in after a restart; two browsers of one teacher both end when
// she signs out on all devices from one of them.
// Skipped (and says so) when Chromium is missing, except under CI=true, where that is a failure.
import t, { type Test } from 'tap'
import { existsSync } from 'node:fs'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/chromium.js'
import { EXAMPLE_SERVER, startExampleServer, type ExampleServer } from '../helpers/example-server.js'

const EMAIL = 'teacher@example.org'
const PASSWORD = 'correct horse battery staple'
const MATHS = '/schools/resources/resources/maths/'
const LOGIN_FOR_MATHS = '/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F'
/** Short enough to wait out in a test, long enough that a sign-in and a page fit inside it on a slow machine. */
const IDLE_MS = 4000

if (chromiumPresent('session lifecycle browser tests')) {
  t.setTimeout(300_000)
  // A classroom server with a short idle limit, and one with the defaults (60 minutes), where nothing
  // times out however slow the machine.
  const servers: ExampleServer[] = []
  let browser: Browser | undefined
  let classroom = ''
  let staff = ''

  t.before(async () => {
    if (!existsSync(EXAMPLE_SERVER)) throw new Error(`${EXAMPLE_SERVER} is missing: run "npm run build" first (npm run test:all does)`)
    const start = (settings: NodeJS.ProcessEnv) => {
      const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SESSION_SECRET: 'e2e-lifecycle-'.repeat(3), ...settings }
      // In-memory stores: a fresh server, nothing shared with other runs.
      delete env.BASE_URL
      delete env.REDIS_URL
      return startExampleServer(env)
    }
    servers.push(...await Promise.all([start({ IDLE_TIMEOUT_MS: String(IDLE_MS) }), start({})]))
    classroom = servers[0].address
    staff = servers[1].address
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  })

  t.teardown(async () => {
    await browser?.close()
    for (const { child } of servers) {
      if (child.exitCode !== null) continue
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  })

  /** A browser context of its own (its own cookies, as another browser would have), closed when `t` ends. */
  async function newContext (t: Test): Promise<BrowserContext> {
    const context = await browser!.newContext({ viewport: { width: 1024, height: 768 }, locale: 'en-GB' })
    context.setDefaultTimeout(15_000)
    t.teardown(() => context.close())
    return context
  }

  /** Signs the teacher in through the login form a visit to the maths category leads to; ends on that category. */
  async function signIn (t: Test, page: Page, base: string): Promise<void> {
    await page.goto(`${base}${MATHS}`)
    t.equal(page.url(), `${base}${LOGIN_FOR_MATHS}`, 'the spec\'s redirect to the login page')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await Promise.all([page.waitForURL(`${base}${MATHS}`), page.getByRole('button', { name: 'Sign in' }).click()])
  }

  t.test('a classroom browser is signed out after the idle limit, and the login page says why', async (t) => {
    const base = classroom
    const page = await (await newContext(t)).newPage()
    await signIn(t, page, base)
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Mathematics', 'signed in: the category')
    await sleep(IDLE_MS + 500)
    const [res] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}${MATHS}`), page.reload()])
    t.equal(res.status(), 302, 'the members-only page answers the spec\'s redirect')
    t.equal(await res.headerValue('location'), `http://127.0.0.1:${new URL(base).port}${LOGIN_FOR_MATHS}`, 'its Location byte for byte')
    await page.waitForURL(`${base}${LOGIN_FOR_MATHS}`)
    const notice = page.getByText('You were signed out after 4 seconds without activity. Sign in again to go on.')
    t.equal(await notice.count(), 1, 'the notice, once')
    const axe = await new AxeBuilder({ page }).analyze()
    t.same(axe.violations.map((v) => v.id), [], 'the login page with the notice passes axe')
    await page.reload()
    t.equal(await notice.count(), 0, 'read once: gone on the next visit')
    // And back in, where the teacher was going.
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await Promise.all([page.waitForURL(`${base}${MATHS}`), page.getByRole('button', { name: 'Sign in' }).click()])
    t.pass('signed in again, back on the category')
  })

  t.test('a remembered laptop: the browser restarts after the idle limit and comes back signed in', async (t) => {
    const base = classroom
    const first = await newContext(t)
    const page = await first.newPage()
    await page.goto(`${base}${MATHS}`)
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    const box = page.getByLabel('Keep me signed in on this device')
    t.equal(await box.isChecked(), false, 'off by default')
    await box.check()
    await Promise.all([page.waitForURL(`${base}${MATHS}`), page.getByRole('button', { name: 'Sign in' }).click()])
    const remember = (await first.cookies()).find((c) => c.name === 'sr_remember')
    t.ok(remember !== undefined, 'a remember cookie')
    t.match(remember, { httpOnly: true, sameSite: 'Lax', path: '/' })
    const days = (remember!.expires * 1000 - Date.now()) / 86_400_000
    t.ok(days > 29.9 && days <= 30, `it lasts the remembered days (${days.toFixed(2)})`)
    // The browser is closed: only its persistent cookies survive (a session cookie, expires -1, would not).
    const state = await first.storageState()
    await first.close()
    await sleep(IDLE_MS + 500)
    const restarted = await browser!.newContext({ storageState: { cookies: state.cookies.filter((c) => c.expires > 0), origins: [] } })
    t.teardown(() => restarted.close())
    const again = await restarted.newPage()
    const res = await again.goto(`${base}${MATHS}`)
    t.equal(res?.status(), 200, 'past the idle limit, the category itself: signed in again silently')
    t.equal(again.url(), `${base}${MATHS}`, 'no detour through the login page')
    t.equal(await again.getByRole('heading', { level: 1 }).textContent(), 'Mathematics')
    const rotated = (await restarted.cookies()).find((c) => c.name === 'sr_remember')
    t.not(rotated?.value, remember!.value, 'a new token for the next visit')
    // Signing out forgets the device: the next restart lands on the login page.
    await Promise.all([again.waitForURL(`${base}/schools/resources/`), again.getByRole('button', { name: 'Sign out', exact: true }).click()])
    t.equal((await restarted.cookies()).find((c) => c.name === 'sr_remember'), undefined, 'the cookie is gone')
    await again.goto(`${base}${MATHS}`)
    t.equal(again.url(), `${base}${LOGIN_FOR_MATHS}`, 'signed out stays signed out')
  })

  t.test('two browsers of one teacher: "Sign out on all devices" in one ends both', async (t) => {
    const base = staff
    const laptop = await (await newContext(t)).newPage()
    const staffRoom = await (await newContext(t)).newPage()
    await signIn(t, laptop, base)
    await signIn(t, staffRoom, base)
    await Promise.all([laptop.waitForURL(`${base}/schools/resources/`), laptop.getByRole('button', { name: 'Sign out on all devices' }).click()])
    t.equal(await laptop.getByRole('button', { name: 'Sign out', exact: true }).count(), 0, 'the laptop is signed out')
    // The staff room computer, left signed in, is signed out at its next page.
    await staffRoom.reload()
    t.equal(staffRoom.url(), `${base}${LOGIN_FOR_MATHS}`, 'the staff room browser lands on the login page')
    t.equal(await staffRoom.getByLabel('Email').count(), 1, 'with the form')
  })
}
