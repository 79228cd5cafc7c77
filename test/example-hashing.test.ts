import t from 'tap'
import { randomBytes, scryptSync } from 'node:crypto'
import { demoDirectory, hashPassword, verifyPassword } from '../examples/demo-member.js'
import { readSettings } from '../examples/settings.js'

// The example checks passwords with node:crypto's scrypt on libuv's thread pool, at a cost whose buffer
// (just over 32 MiB) node:crypto refuses under its default memory limit: the example raises the limit.

t.test('a hash made with other parameters still verifies: they travel with the hash', async (t) => {
  const salt = randomBytes(16)
  const key = scryptSync('old password', salt, 32, { N: 1024, r: 8, p: 1 })
  const stored = ['scrypt', 1024, 8, 1, salt.toString('base64'), key.toString('base64')].join('$')
  t.equal(await verifyPassword('old password', stored), true)
  t.equal(await verifyPassword('old passwords', stored), false)
})

t.test('parameters scrypt refuses are an error for that check only', async (t) => {
  // N not a power of two.
  await t.rejects(verifyPassword('x', 'scrypt$1000$8$1$c2FsdA==$aGFzaA=='), { code: 'ERR_CRYPTO_INVALID_SCRYPT_PARAMS' })
  // More memory than the example allows (N=2^20, r=8: 1 GiB).
  await t.rejects(verifyPassword('x', 'scrypt$1048576$8$1$c2FsdA==$aGFzaA=='), { code: 'ERR_CRYPTO_INVALID_SCRYPT_PARAMS' })
  const stored = await hashPassword('pw')
  t.equal(await verifyPassword('pw', stored), true, 'the next check is answered')
})

t.test('checks at once are each answered, in their own order', async (t) => {
  const stored = await hashPassword('pw')
  const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => verifyPassword(i % 2 === 0 ? 'pw' : 'no', stored)))
  t.same(answers, [true, false, true, false])
})

t.test('the default demo passwords come with their hashes, at today\'s cost; others are hashed at start', async (t) => {
  const { demoEmail, demoPassword, demoParentEmail, demoParentPassword } = readSettings({})
  const cost = (stored: string) => stored.split('$').slice(0, 4).join('$')
  const today = cost(await hashPassword('x'))
  const { members, authenticate } = await demoDirectory({ email: demoEmail, password: demoPassword }, { email: demoParentEmail, password: demoParentPassword })
  t.same(members.map((m) => cost(m.passwordHash)), [today, today])
  t.equal((await authenticate({ email: demoEmail, password: demoPassword }))?.id, 'demo-teacher')
  t.equal((await authenticate({ email: demoParentEmail, password: demoParentPassword }))?.id, 'demo-parent')
  t.equal(await authenticate({ email: demoEmail, password: demoParentPassword }), null, 'each hash is its own password\'s')
  t.equal(await authenticate({ email: 'nobody@example.org', password: demoPassword }), null)
  const own = await demoDirectory({ email: 'me@school.test', password: 'a password of our own' })
  t.equal(cost(own.members[0].passwordHash), today)
  t.equal((await own.authenticate({ email: 'me@school.test', password: 'a password of our own' }))?.id, 'demo-teacher')
})
