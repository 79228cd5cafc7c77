import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../examples/app.js'
import { formToken, postLogin, sessionCookie, withCookies } from './helpers/app.js'
import { mailServer, resetLink } from './helpers/mail-server.js'

// The example's "Forgotten your password?" (examples/reset-mail.ts): with SMTP_URL the link goes through
// nodemailer to that server, here a real one in this process; without it, to the log.

const TEACHER = { email: 'teacher@example.org', password: 'correct horse battery staple' }
const BASE = 'http://localhost:3000'
const config = { sessionSecret: 's'.repeat(40), demoEmail: TEACHER.email, demoPassword: TEACHER.password, baseUrl: BASE }
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const NEW_PASSWORD = 'the quiet river by the school'

async function askForLink (app: FastifyInstance) {
  const form = await app.inject({ url: '/Security/lostpassword' })
  const res = await app.inject({ method: 'POST', url: '/Security/lostpassword', headers: { ...FORM, cookie: withCookies(undefined, form) }, payload: new URLSearchParams({ _csrf: formToken(form.body), email: TEACHER.email }).toString() })
  t.equal(res.statusCode, 200)
}

async function change (app: FastifyInstance, link: string) {
  const first = await app.inject({ url: link.slice(BASE.length) })
  const cookie = withCookies(undefined, first)
  const page = await app.inject({ url: '/Security/changepassword', headers: { cookie } })
  return app.inject({ method: 'POST', url: '/Security/changepassword', headers: { ...FORM, cookie: withCookies(cookie, page) }, payload: new URLSearchParams({ _csrf: formToken(page.body), password: NEW_PASSWORD, confirm: NEW_PASSWORD }).toString() })
}

t.test('SMTP_URL: the link arrives by mail, and the new password signs in', async (t) => {
  const mail = await mailServer(t)
  const { port } = mail.transport.options as { port: number }
  const app = await buildApp({ ...config, resetMail: { smtpUrl: `smtp://127.0.0.1:${port}`, from: 'Office <office@example.org>' } })
  t.teardown(() => app.close())
  t.match((await app.inject({ url: '/Security/login' })).body, 'Forgotten your password?')
  await askForLink(app)
  const arrived = await mail.next()
  t.same(arrived.to, [TEACHER.email])
  t.match(arrived.text, 'Subject: Choose a new password for Riverside School')
  const changed = await change(app, resetLink({ ...arrived, text: arrived.text.replace(BASE, 'https://x') }).replace('https://x', BASE))
  t.equal(changed.statusCode, 303)
  t.equal(changed.headers.location, `${BASE}/schools/resources/`)
  t.ok(sessionCookie(changed), 'signed in')
  t.equal((await postLogin(app, { email: TEACHER.email, password: TEACHER.password })).statusCode, 401, 'the old password is refused')
  t.equal((await postLogin(app, { email: TEACHER.email, password: NEW_PASSWORD })).statusCode, 303)
})

t.test('no SMTP_URL: the link is logged; no BASE_URL: no reset pages', async (t) => {
  const lines: Array<{ msg: string, url?: string }> = []
  const app = await buildApp({ ...config, logger: { level: 'info', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  t.teardown(() => app.close())
  await askForLink(app)
  for (let i = 0; i < 100 && !lines.some((l) => l.url !== undefined); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  const logged = lines.find((l) => l.url !== undefined)!
  t.match(logged.msg, 'password reset link (no SMTP_URL')
  t.equal((await change(app, logged.url!)).statusCode, 303)

  const without = await buildApp({ ...config, baseUrl: undefined })
  t.teardown(() => without.close())
  t.equal((await without.inject({ url: '/Security/lostpassword' })).statusCode, 404)
})
