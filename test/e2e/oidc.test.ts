// Issue 36, end to end in headless Chromium: the example server with OIDC_* pointed at oidc-provider on a
// loopback port. A teacher asks for the maths page, clicks "Sign in with your school account", signs in
// on the provider's own form, and is back on the maths page, signed in.
// Skipped (and says so) when Chromium is missing, except under CI=true, where that is a failure.
import t from 'tap'
import { createServer } from 'node:net'
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'
import { startExampleServer } from '../helpers/example-server.js'
import { CLIENT_ID, CLIENT_SECRET, startIdp } from '../helpers/oidc.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const IN_CI = process.env.CI === 'true' || process.env.CI === '1'
const MATHS = '/schools/resources/resources/maths/'

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

t.test('button → the provider\'s form → back on the category page, signed in', { skip: !existsSync(CHROMIUM) && !IN_CI ? `no Chromium at ${CHROMIUM}` : false }, async (t) => {
  const port = await freePort()
  const site = `http://127.0.0.1:${port}`
  const idp = await startIdp(
    { 'teacher@example.org': { email: 'teacher@example.org', email_verified: true, hd: 'example.org', name: 'Demo Teacher' } },
    [`${site}/Security/login/oidc/school/callback`]
  )
  t.teardown(() => idp.close())
  const server = await startExampleServer({
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: site,
    SESSION_SECRET: 'e2e-'.repeat(10),
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: CLIENT_ID,
    OIDC_CLIENT_SECRET: CLIENT_SECRET,
    OIDC_ALLOWED_DOMAINS: 'example.org',
    REDIS_URL: ''
  })
  t.teardown(() => { server.child.kill() })
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] })
  t.teardown(() => browser.close())
  const page = await browser.newPage()

  await page.goto(`${site}${MATHS}`)
  t.match(new URL(page.url()).pathname, '/Security/login', 'sent to the login page')
  await page.getByRole('link', { name: 'Sign in with your school account' }).click()
  await page.waitForURL((url) => url.origin === idp.issuer)
  t.pass('on the provider\'s sign-in form')
  await page.locator('input[name="login"]').fill('teacher@example.org')
  await page.locator('input[name="password"]').fill('anything')
  await page.locator('button[type="submit"]').first().click()
  await page.waitForURL(`${site}${MATHS}`)
  t.equal(page.url(), `${site}${MATHS}`, 'back on the page asked for')
  t.match(await page.locator('h1').first().textContent(), 'Mathematics')
  t.match(await page.content(), 'Demo Teacher', 'signed in')
})
