import t from 'tap'
import { existsSync } from 'node:fs'

/** Debian's Chromium (apt-get install chromium), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']
const IN_CI = process.env.CI === 'true' || process.env.CI === '1'

/**
 * Whether Chromium is there. When it is not, the file's tests are skipped and say so (`what`: which
 * tests), except under CI=true, where that is a failure: CI must run them.
 */
export function chromiumPresent (what: string): boolean {
  if (existsSync(CHROMIUM)) return true
  const why = `Chromium not found at ${CHROMIUM} (install it with "apt-get install chromium", or set CHROMIUM_PATH)`
  if (IN_CI) {
    t.fail(`browser tests must run under CI=true: ${why}`)
  } else {
    process.stderr.write(`\n*** SKIPPED the ${what}: ${why} ***\n\n`)
    t.plan(0, `${what} skipped: ${why}`)
  }
  return false
}
