// The default password rule (NIST SP 800-63B-4 for a password used alone): long enough, not too long to
// hash, not the address it is reset for, not a common one. No composition rules: they make passwords
// harder to remember, not to guess.
import type { Member } from '../types.js'
import { COMMON_LONG_PASSWORDS } from './common-passwords.js'
import type { Said } from '../pages/answer-language.js'

export const MIN_PASSWORD_LENGTH = 15
export const MAX_PASSWORD_LENGTH = 1024

/** undefined when `password` is good enough, else the sentence the change page shows (in its language). */
export function defaultValidatePassword (password: string, member: Member): Said | undefined {
  // Characters as people count them (code points), so an emoji is one.
  const length = [...password].length
  if (length < MIN_PASSWORD_LENGTH) return { key: 'reset.error.passwordTooShort', values: { min: MIN_PASSWORD_LENGTH } }
  if (length > MAX_PASSWORD_LENGTH) return { key: 'reset.error.passwordTooLong', values: { max: MAX_PASSWORD_LENGTH } }
  const typed = password.trim().toLowerCase()
  if (typeof member.email === 'string' && typed === member.email.trim().toLowerCase()) return { key: 'reset.error.passwordIsEmail' }
  if (COMMON_LONG_PASSWORDS.has(typed)) return { key: 'reset.error.passwordCommon' }
  return undefined
}
