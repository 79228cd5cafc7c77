/**
 * A problem with what the user gave the checker (an option, an input file, a site that cannot be reached):
 * the command prints the message, writes no report, and exits with USAGE_EXIT.
 */
export class ParityInputError extends Error {
  override name = 'ParityInputError'
}

/** Exit codes: nothing differs beyond the allow-list; something does; the run could not be made. */
export const SAME_EXIT = 0
export const DIFFERENT_EXIT = 1
export const USAGE_EXIT = 2
