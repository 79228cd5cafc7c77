import { randomBytes, scrypt, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto'
import type { Credentials, Member } from 'fastify-schools-resources'

// node:crypto's scrypt, promisified by hand because util.promisify drops the options overload's types.
function scryptAsync (password: BinaryLike, salt: BinaryLike, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, options, (err, key) => err ? reject(err) : resolve(key))
  })
}

const KEY_LENGTH = 64
const PARAMS = { N: 16384, r: 8, p: 1 }

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
 * The example's members (the teacher, and the parent when given) and their authenticate(). An unknown
 * email still costs one hash check, so that the answer's timing does not tell which addresses have an
 * account.
 */
export async function demoDirectory (teacher: DemoAccount, parent?: DemoAccount) {
  const accounts: Array<[Member, DemoAccount]> = parent === undefined ? [[DEMO_TEACHER, teacher]] : [[DEMO_TEACHER, teacher], [DEMO_PARENT, parent]]
  const members: DemoMember[] = await Promise.all(accounts.map(async ([member, { email, password }]) => ({ ...member, email, passwordHash: await hashPassword(password) })))
  const dummyHash = await hashPassword(randomBytes(16).toString('hex'))

  async function authenticate ({ email: given, password: attempt }: Credentials): Promise<Member | null> {
    const found = members.find((m) => m.email.toLowerCase() === given.toLowerCase())
    const ok = await verifyPassword(attempt, found?.passwordHash ?? dummyHash)
    return found === undefined || !ok ? null : withoutHash(found)
  }

  /** The member with this id as the directory has them now (the section's findMember), or null. */
  async function findMember (id: Member['id']): Promise<Member | null> {
    const found = members.find((m) => m.id === id)
    return found === undefined ? null : withoutHash(found)
  }

  return { members, authenticate, findMember }
}
