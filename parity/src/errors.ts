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

// C0 and C1 controls (escape sequences, a newline that forges a line) and bidirectional overrides.
// eslint-disable-next-line no-control-regex -- control characters are what is taken out
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/**
 * Text a site wrote (a Location, a return address decoded, a sitemap's URL, a form's action), made safe
 * to print: a hostile site's escape sequences would otherwise drive the runner's terminal (OSC 52
 * writes the clipboard) or forge lines of the summary. Each such character is shown as `\u001b`.
 */
export const printable = (text: string) => text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
