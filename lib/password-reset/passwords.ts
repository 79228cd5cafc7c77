// The default password rule (NIST SP 800-63B-4 for a password used alone): long enough, not too long to
// hash, not the address it is reset for, not a common one. No composition rules: they make passwords
// harder to remember, not to guess.
import type { Member } from '../types.js'
import { COMMON_LONG_PASSWORDS } from './common-passwords.js'

export const MIN_PASSWORD_LENGTH = 15
export const MAX_PASSWORD_LENGTH = 1024

/** undefined when `password` is good enough, else the sentence the change page shows. */
export function defaultValidatePassword (password: string, member: Member): string | undefined {
  // Characters as people count them (code points), so an emoji is one.
  const length = [...password].length
  if (length < MIN_PASSWORD_LENGTH) return `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters: a few words you will remember work well.`
  if (length > MAX_PASSWORD_LENGTH) return `Choose a password of at most ${MAX_PASSWORD_LENGTH.toLocaleString('en')} characters.`
  const typed = password.trim().toLowerCase()
  if (typeof member.email === 'string' && typed === member.email.trim().toLowerCase()) return 'Choose a password that is not your email address.'
  if (COMMON_LONG_PASSWORDS.has(typed)) return 'That password is one of the most common ones, so it is easy to guess. Choose another.'
  return undefined
}
