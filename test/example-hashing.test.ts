import t from 'tap'
import { randomBytes, scryptSync } from 'node:crypto'
import { demoDirectory, verifyPassword } from '../examples/demo-member.js'
import { readSettings } from '../examples/settings.js'

// The example checks passwords with node:crypto's scrypt on libuv's thread pool, at a cost whose buffer
// (just over 32 MiB) node:crypto refuses under its default memory limit: the example raises the limit.

/** A hash at a small cost, made without the example's code: the checks below stay quick. */
function cheapHash (password: string): string {
  const salt = randomBytes(16)
  const key = scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 })
  return ['scrypt', 1024, 8, 1, salt.toString('base64'), key.toString('base64')].join('$')
}

t.test('a hash made with other parameters still verifies: they travel with the hash', async (t) => {
  const stored = cheapHash('old password')
  t.equal(await verifyPassword('old password', stored), true)
  t.equal(await verifyPassword('old passwords', stored), false)
})

t.test('parameters scrypt refuses are an error for that check only', async (t) => {
  // N not a power of two.
  await t.rejects(verifyPassword('x', 'scrypt$1000$8$1$c2FsdA==$aGFzaA=='), { code: 'ERR_CRYPTO_INVALID_SCRYPT_PARAMS' })
  // More memory than the example allows (N=2^20, r=8: 1 GiB).
  await t.rejects(verifyPassword('x', 'scrypt$1048576$8$1$c2FsdA==$aGFzaA=='), { code: 'ERR_CRYPTO_INVALID_SCRYPT_PARAMS' })
  t.equal(await verifyPassword('pw', cheapHash('pw')), true, 'the next check is answered')
})

t.test('checks at once are each answered, in their own order', async (t) => {
  const stored = cheapHash('pw')
  const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => verifyPassword(i % 2 === 0 ? 'pw' : 'no', stored)))
  t.same(answers, [true, false, true, false])
})

t.test('the default demo passwords come with their hashes, at today\'s cost; others are hashed at start', async (t) => {
  const { demoEmail, demoPassword, demoParentEmail, demoParentPassword } = readSettings({})
  const cost = (stored: string) => stored.split('$').slice(0, 4).join('$')
  // A password of a site's own is hashed at start, at today's cost.
  const own = await demoDirectory({ email: 'me@school.test', password: 'a password of our own' })
  const today = cost(own.members[0].passwordHash)
  t.equal(today, 'scrypt$32768$8$3')
  t.equal((await own.authenticate({ email: 'me@school.test', password: 'a password of our own' }))?.id, 'demo-teacher')
  const { members, authenticate } = await demoDirectory({ email: demoEmail, password: demoPassword }, { email: demoParentEmail, password: demoParentPassword })
  t.same(members.map((m) => cost(m.passwordHash)), [today, today])
  t.equal((await authenticate({ email: demoEmail, password: demoPassword }))?.id, 'demo-teacher')
  t.equal((await authenticate({ email: demoParentEmail, password: demoParentPassword }))?.id, 'demo-parent')
  t.equal(await authenticate({ email: demoEmail, password: demoParentPassword }), null, 'each hash is its own password\'s')
  t.equal(await authenticate({ email: 'nobody@example.org', password: demoPassword }), null)
})
