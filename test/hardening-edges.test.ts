import t from 'tap'
import { buildTestApp, formToken } from './helpers/app.js'

// Edges of the sign-in hardening: option checks, and host errors that are not store failures.

t.test('hardening options are checked and name the option', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ lockout: { maxAttempts: 'ten' } }, /"lockout.maxAttempts": must be a positive whole number/],
    [{ lockout: [] }, /"lockout": must be an object, or false to turn it off/],
    [{ loginRateLimit: 'yes' }, /"loginRateLimit": must be an object/],
    [{ loginRateLimit: { timeWindow: 0 } }, /"loginRateLimit.timeWindow": must be a positive whole number/],
    [{ helmet: 'on' }, /"helmet": must be an object/]
  ]
  for (const [plugin, message] of cases) {
    await t.rejects(buildTestApp({ plugin: plugin as never }), { code: 'FST_SR_INVALID_OPTION', message }, JSON.stringify(plugin))
  }
  const { app } = await buildTestApp({ plugin: { loginRateLimit: { timeWindow: 60_000, max: 1 } } })
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  t.equal(form.statusCode, 200, 'a numeric timeWindow is accepted')
})

t.test('an error from authenticate is not taken for a store failure: the section\'s 500, its text only in the log', async (t) => {
  const { app } = await buildTestApp({ plugin: { authenticate: async () => { throw new Error('directory down') } } })
  t.teardown(() => app.close())
  const form = await app.inject('/Security/login')
  const res = await app.inject({
    method: 'POST',
    url: '/Security/login',
    headers: { cookie: form.cookies.map((c) => `${c.name}=${c.value}`).join('; ') },
    payload: { _csrf: formToken(form.body), email: 'a@example.org', password: 'x' }
  })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { statusCode: 500, code: 'FST_SR_INTERNAL_ERROR', error: 'Internal Server Error', message: 'Something went wrong on our side. Please try again later.' })
  t.equal(res.headers['retry-after'], undefined)
})
