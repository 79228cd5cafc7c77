import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import type { Credentials, Member } from 'fastify-schools-resources'

/**
 * Password checks at once (the section's `passwordChecks.concurrent`, set from this in app.ts). node:crypto's
 * scrypt runs on libuv's thread pool (4 threads), which file reads share: two checks at once leave two
 * threads for the downloads, whatever a burst of sign-ins does.
 */
export const PASSWORD_CHECKS_AT_ONCE = 2

/**
 * Sign-ins that may wait for a check (the section's `passwordChecks.waiting`). A check at the cost below
 * takes a few tenths of a second of a core, so 50 waiting are about 10 s of checks: nobody waits much
 * longer than that, and a burst past it (a spray) gets the busy 503 with Retry-After at once. A school's
 * 8:30 burst from one address fits.
 */
export const PASSWORD_CHECKS_WAITING = 50

/**
 * scrypt's cost: one of OWASP's recommended settings (N=2^15, r=8, p=3; its Password Storage Cheat Sheet).
 * Each check's buffer (128 · r · N bytes, just over 32 MiB) is above the highest mmap threshold glibc's
 * malloc adapts to, so it is mapped for the check and given back when the check ends. A smaller buffer
 * (16 MiB at N=2^14) ends up in the heap of whichever pool thread hashed, and glibc keeps it there.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 3 }
const KEY_LENGTH = 64
/** node:crypto refuses scrypt settings that need more than `maxmem` (32 MiB by default). */
const MAX_MEMORY = 64 * 1024 * 1024

function scryptAsync (password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, { ...options, maxmem: MAX_MEMORY }, (err, key) => { if (err === null) resolve(key); else reject(err) })
  })
}

/** `scrypt$N$r$p$salt$hash`, base64 parts: the parameters travel with the hash. */
export async function hashPassword (password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scryptAsync(password, salt, KEY_LENGTH, PARAMS)
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$')
}

export async function verifyPassword (password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || hash === undefined) throw new Error('unknown password hash format')
  const expected = Buffer.from(hash, 'base64')
  const key = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(N), r: Number(r), p: Number(p) })
  return timingSafeEqual(key, expected)
}

export interface DemoMember extends Member {
  email: string
  passwordHash: string
}

/** An account of the example's: who the member is, and the email and password to sign in with. */
export interface DemoAccount {
  email: string
  password: string
}

/** The demo teacher is staff, so the staff-only category opens for them. */
export const DEMO_TEACHER: Member = { id: 'demo-teacher', name: 'Demo Teacher', groups: ['staff'] }
/** The demo parent is a member outside the staff audience: the staff-only category answers 403. */
export const DEMO_PARENT: Member = { id: 'demo-parent', name: 'Demo Parent', groups: ['parents'] }

/** The member as the section sees it: never the password hash. */
function withoutHash ({ passwordHash: _hash, ...member }: DemoMember): Member {
  return member
}

/**
 * The hashes of the default demo passwords (examples/settings.ts), made once with hashPassword: start-up
 * hashes only a password set in the environment. A site's real accounts keep their hashes in its own
 * directory, made when each password is set.
 */
const SHIPPED_HASHES = new Map([
  ['correct horse battery staple', 'scrypt$32768$8$3$L8fXzVS1+U53vwBph6Q2HA==$ppZS2ZNa8GGltHT3Uyd0gUfdgx3Iia22T4qW8YUBTN712jc8ono/X5uaLE+Ju8ObbTNykxI0unrMfQvNuVaxUg=='],
  ['parents evening in the hall', 'scrypt$32768$8$3$eLVcR7MAmmudpkty7cLjSA==$P7TuorkEscLuM3StyxTna5rZPJwhiF6dLXEI10zcmCgloAEJgWsgbWLiOOuLbhvqqSvtPxYrFqI7pqxytFyVaw==']
])
/** The hash an unknown email is checked against: of a random password, thrown away once hashed. */
const UNKNOWN_EMAIL_HASH = 'scrypt$32768$8$3$/sw99eq9JQwsYKe+srLUMw==$dU6oTemWsTBJ/qZV8a0qXi/vRIYgFaW2W2VlJ2eFf3TbswlxMRAl4uK7dOg1uUKXXAWeG09QQ0ZiKUKYREKkZQ=='

/**
 * The example's members (the teacher, and the parent when given) and their authenticate(). An unknown
 * email still costs one hash check, so that the answer's timing does not tell which addresses have an
 * account.
 */
export async function demoDirectory (teacher: DemoAccount, parent?: DemoAccount) {
  const accounts: Array<[Member, DemoAccount]> = parent === undefined ? [[DEMO_TEACHER, teacher]] : [[DEMO_TEACHER, teacher], [DEMO_PARENT, parent]]
  const members: DemoMember[] = await Promise.all(accounts.map(async ([member, { email, password }]) => ({ ...member, email, passwordHash: SHIPPED_HASHES.get(password) ?? await hashPassword(password) })))

  async function authenticate ({ email: given, password: attempt }: Credentials): Promise<Member | null> {
    const found = members.find((m) => m.email.toLowerCase() === given.toLowerCase())
    const ok = await verifyPassword(attempt, found?.passwordHash ?? UNKNOWN_EMAIL_HASH)
    return found === undefined || !ok ? null : withoutHash(found)
  }

  /** The member with this id as the directory has them now (the section's findMember), or null. */
  async function findMember (id: Member['id']): Promise<Member | null> {
    const found = members.find((m) => m.id === id)
    return found === undefined ? null : withoutHash(found)
  }

  /** The member whose address the school's account proved (the section's oidc.resolveMember), or null. */
  async function findByEmail (email: string | undefined): Promise<Member | null> {
    const found = email === undefined ? undefined : members.find((m) => m.email.toLowerCase() === email.toLowerCase())
    return found === undefined ? null : withoutHash(found)
  }

  /** A new password (the section's passwordReset.setPassword): hashed, as any password is kept. */
  async function setPassword (member: Member, password: string): Promise<void> {
    const found = members.find((m) => m.id === member.id)
    if (found === undefined) throw new Error(`no member ${String(member.id)}`)
    found.passwordHash = await hashPassword(password)
  }

  return { members, authenticate, findMember, findByEmail, setPassword }
}
