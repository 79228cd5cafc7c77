import type { Member } from '../../lib/index.js'

/** Members in groups, by email: a parent, a teacher on the staff, and a student in no group (a numeric id). */
export const PEOPLE: Record<string, Member & { password: string }> = {
  'parent@example.org': { id: 'p-1', name: 'Pat Parent', password: 'parent-password', groups: ['parents'] },
  'teacher@example.org': { id: 't-1', name: 'Ada Teacher', password: 'teacher-password', groups: ['staff'] },
  'student@example.org': { id: 42, name: 'Sam Student', password: 'student-password' }
}

/** The section's `authenticate` for PEOPLE. */
export async function authenticate ({ email, password }: { email: string, password: string }): Promise<Member | null> {
  const person = PEOPLE[email]
  if (person === undefined || person.password !== password) return null
  const { password: _password, ...member } = person
  return member
}

/**
 * `count` members (member0@school.example ...) and an `authenticate` that records what it was asked:
 * the wrong passwords checked per email, and the most checks in flight at once per email. `delayMs`
 * keeps each check in flight that long, so that parallel sign-ins overlap.
 */
export function directory (count: number, delayMs = 0) {
  const members = Array.from({ length: count }, (_, i) => ({ email: `member${i}@school.example`, password: `password-${i}` }))
  const passwords = new Map(members.map((m) => [m.email, m.password]))
  const wrongChecked = new Map<string, number>()
  const inFlight = new Map<string, number>()
  const mostInFlight = new Map<string, number>()
  async function authenticate ({ email, password }: { email: string, password: string }): Promise<Member | null> {
    const now = (inFlight.get(email) ?? 0) + 1
    inFlight.set(email, now)
    mostInFlight.set(email, Math.max(now, mostInFlight.get(email) ?? 0))
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
    inFlight.set(email, inFlight.get(email)! - 1)
    if (passwords.get(email) === password) return { id: email, name: email }
    wrongChecked.set(email, (wrongChecked.get(email) ?? 0) + 1)
    return null
  }
  return { members, authenticate, wrongChecked, mostInFlight }
}
