import type { Member } from '../types.js'
import { isGroupList } from '../session/member.js'

/**
 * Whether `member` may open something whose audience is `audience`: anything without one is open to
 * every member; otherwise one of the member's groups must be listed. Groups of the wrong shape (from a
 * host's getMember) count as none, and an audience of the wrong shape (from a host's catalog) admits nobody,
 * so a mistake there closes restricted pages rather than opening them.
 */
export function canSee (member: Member, audience: readonly string[] | undefined): boolean {
  if (audience === undefined) return true
  // A host catalog's audience of another shape (a string, whose includes() would match substrings;
  // null from a database) is no list of groups: nobody is in it.
  if (!isGroupList(audience) || audience.length === 0) return false
  const groups = member.groups
  if (groups === undefined || !isGroupList(groups)) return false
  return groups.some((group) => audience.includes(group))
}
