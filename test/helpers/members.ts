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
