import type { Member } from '../types.js'
import { isGroupList } from '../session/member.js'

/**
 * Whether `member` may open something whose audience is `audience`: anything without one is open to
 * every member; otherwise one of the member's groups must be listed. Groups of the wrong shape (from a
 * host's getMember) count as none, so a mistake there closes restricted pages rather than opening them.
 */
export function canSee (member: Member, audience: readonly string[] | undefined): boolean {
  if (audience === undefined) return true
  const groups = member.groups
  if (groups === undefined || !isGroupList(groups)) return false
  return groups.some((group) => audience.includes(group))
}
