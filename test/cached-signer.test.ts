import t from 'tap'
import { Signer } from '@fastify/cookie'
import { CachedSigner } from '../lib/index.js'
import { SECRET, buildTestApp, signIn } from './helpers/app.js'

const OTHER = 'another-secret-that-is-at-least-32-characters'

t.test('signs and verifies exactly like @fastify/cookie\'s Signer', async (t) => {
  const cached = new CachedSigner(SECRET)
  const plain = new Signer(SECRET, 'sha256')
  const signed = cached.sign('session-id')
  t.equal(signed, plain.sign('session-id'))
  t.same(cached.unsign(signed), plain.unsign(signed))
  t.same(cached.unsign(signed), { valid: true, renew: false, value: 'session-id' })
  for (const bad of [`${signed}x`, 'session-id', plain.sign('other').replace('other', 'session-id'), '']) {
    t.same(cached.unsign(bad), { valid: false, renew: false, value: null }, JSON.stringify(bad))
  }
})

t.test('remembers verified cookies only, up to maxEntries, forgetting the oldest first', async (t) => {
  const cached = new CachedSigner(SECRET, { maxEntries: 2 })
  const [a, b, c] = ['a', 'b', 'c'].map((v) => cached.sign(v))
  const first = cached.unsign(a)
  t.equal(cached.unsign(a), first, 'the second check is the remembered result')
  t.ok(Object.isFrozen(first))
  cached.unsign(`${a}forged`)
  t.equal(cached.size, 1, 'a forged cookie is not remembered')
  cached.unsign(b)
  cached.unsign(c)
  t.equal(cached.size, 2)
  const again = cached.unsign(a)
  t.not(again, first, 'the oldest was forgotten and is verified again')
  t.same(again, first)
})

t.test('secret rotation and algorithm behave as in @fastify/cookie', async (t) => {
  const old = new CachedSigner(OTHER)
  const rotated = new CachedSigner([SECRET, OTHER])
  t.same(rotated.unsign(old.sign('x')), { valid: true, renew: true, value: 'x' })
  const sha512 = new CachedSigner(SECRET, { algorithm: 'sha512' })
  t.equal(sha512.sign('x'), new Signer(SECRET, 'sha512').sign('x'))
  t.same(new CachedSigner(SECRET).unsign(sha512.sign('x')).valid, false)
})

t.test('refuses short secrets and a bad maxEntries', async (t) => {
  for (const secrets of ['short', [], [SECRET, 'short'], [42]]) {
    t.throws(() => new CachedSigner(secrets as string[]), { code: 'FST_SR_INVALID_OPTION', message: /"secret"/ })
  }
  for (const maxEntries of [0, 1.5, -1]) {
    t.throws(() => new CachedSigner(SECRET, { maxEntries }), { code: 'FST_SR_INVALID_OPTION', message: /"maxEntries"/ })
  }
})

t.test('works as @fastify/session\'s secret: sign-in, pages, a forged cookie', async (t) => {
  const signer = new CachedSigner(SECRET)
  const { app } = await buildTestApp({ session: { secret: signer } })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const before = signer.size // the login form's own session cookie was verified on the way in
  for (let i = 0; i < 3; i++) {
    const page = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
    t.equal(page.statusCode, 200)
  }
  t.equal(signer.size, before + 1, 'the member\'s cookie verified once, then remembered')
  const forged = await app.inject({ url: '/schools/resources/resources/maths/', headers: { cookie: `${cookie}x` } })
  t.equal(forged.statusCode, 302)
  t.equal(signer.size, before + 1, 'a forged cookie is not remembered')
})
