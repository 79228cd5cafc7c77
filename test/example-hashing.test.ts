import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { HASH_NICE, HASH_THREADS, Hashers, hashPassword, verifyPassword } from '../examples/demo-member.js'

// The example hashes passwords on threads of its own, below the event loop's priority (issue 19: in
// the spray bench the hashes on libuv's pool took CPU from the event loop and the file reads).

function niceOf (tid: string): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
}

/**
 * How far below the main thread's priority each of this process's threads runs that runs below it. Only
 * the hashing threads lower themselves: libuv's pool and a TypeScript loader's worker keep the process's
 * priority. (Thread names differ between Node lines: WorkerThread on 24, not on 22.)
 */
function loweredThreads (): number[] {
  const main = niceOf(String(process.pid))
  const nice: number[] = []
  for (const tid of readdirSync('/proc/self/task')) {
    // A thread that stopped since the directory was read (an idle hashing thread) is gone: not counted.
    let own: number
    try {
      own = niceOf(tid)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ESRCH') continue
      throw err
    }
    if (own > main) nice.push(own - main)
  }
  return nice
}

const linux = { skip: process.platform !== 'linux' && 'Linux: /proc' }

t.test('start-up hashes run on libuv\'s pool: no hashing thread before the first check', linux, async (t) => {
  // First in this file: nothing here has checked a password yet.
  await hashPassword('the demo account\'s password')
  t.same(loweredThreads(), [], 'no thread below the main thread\'s priority')
})

t.test('threads start when checks need them and stop when idle', linux, async (t) => {
  const hashers = new Hashers(100)
  const before = loweredThreads().length
  const salt = Buffer.from('salt')
  const keys = await Promise.all(Array.from({ length: 4 }, () => hashers.hash('pw', salt, 16, { N: 1024 })))
  t.equal(new Set(keys.map((k) => k.toString('hex'))).size, 1, 'four checks answered alike')
  t.equal(loweredThreads().length - before, HASH_THREADS, `${HASH_THREADS} threads for four checks at once`)
  const deadline = Date.now() + 5000
  while (loweredThreads().length > before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(loweredThreads().length, before, 'both stopped after 100 ms without work')
  t.same(await hashers.hash('pw', salt, 16, { N: 1024 }), keys[0], 'a later check starts a thread again')
})

t.test('hashes check as before: the right password, a wrong one, a broken hash', async (t) => {
  const stored = await hashPassword('correct horse battery staple')
  t.match(stored, /^scrypt\$16384\$8\$1\$[^$]+\$[^$]+$/, 'the parameters travel with the hash')
  t.equal(await verifyPassword('correct horse battery staple', stored), true)
  t.equal(await verifyPassword('wrong', stored), false)
  await t.rejects(verifyPassword('x', 'md5$abc'), { message: 'unknown password hash format' })
  // Parameters scrypt refuses (N not a power of two): the thread answers with the error, and lives on.
  await t.rejects(verifyPassword('x', 'scrypt$1000$8$1$c2FsdA==$aGFzaA=='), /N|Invalid|invalid/)
  t.equal(await verifyPassword('correct horse battery staple', stored), true, 'the next check is answered')
})

t.test('many at once run on HASH_THREADS threads, each at a lower priority than the process', linux, async (t) => {
  const stored = await hashPassword('pw')
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => verifyPassword(i % 2 === 0 ? 'pw' : 'no', stored)))
  t.same(answers, [true, false, true, false, true, false], 'every check answered, in its own order')
  const lowered = loweredThreads()
  t.equal(lowered.length, HASH_THREADS, `${HASH_THREADS} hashing threads, no more, below the main thread's priority`)
  // HASH_NICE more than the process's nice, at most 19.
  const expected = Math.min(19, niceOf(String(process.pid)) + HASH_NICE) - niceOf(String(process.pid))
  t.same(lowered, lowered.map(() => expected), `each ${expected} below the main thread`)
})
