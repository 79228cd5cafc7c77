// Node's flags as a build's `npm start` runs the example server (`... && node <flags> dist/examples/server.js`),
// read from its package.json, so that the bench runs the server exactly as users do.
// test/helpers/example-server.ts reads them the same way for the tests.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

function startCommand (packageDir) {
  const start = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).scripts.start
  const words = start.split('&&').pop().trim().split(/\s+/)
  // Leading NAME=value words are the environment npm start gives the server (older builds: MALLOC_MMAP_THRESHOLD_).
  let count = 0
  while (/^[A-Z_]+=/.test(words[count])) count++
  const assignments = words.slice(0, count)
  const command = words.slice(count)
  if (command[0] !== 'node' || command[command.length - 1] !== 'dist/examples/server.js') {
    throw new Error(`${packageDir}/package.json "start" no longer ends with "node ... dist/examples/server.js": ${start}`)
  }
  return { env: Object.fromEntries(assignments.map((a) => a.split('='))), flags: command.slice(1, -1) }
}

export function startFlags (packageDir) {
  return startCommand(packageDir).flags
}

/** The environment variables npm start sets for the server (none in older builds). */
export function startEnv (packageDir) {
  return startCommand(packageDir).env
}

/**
 * Where a build's redirect-conflict warnings are to be found: a build whose `npm start` turns off Node's
 * printing of them logs them as a summary; one that does not prints and logs each.
 */
export function warningOutputFor (flags) {
  return flags.includes('--disable-warning=FST_SR_REDIRECT_CONFLICT') ? 'log-summary' : 'stderr-and-log-each'
}
