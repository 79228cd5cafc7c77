import { parseParityArgs, USAGE } from './args.js'
import { DIFFERENT_EXIT, ParityInputError, printable, SAME_EXIT, USAGE_EXIT } from './errors.js'
import { progressReporter, type ProgressStream } from './progress.js'
import { exitCodeOf, jsonReport, junitReport, summaryTable, writeReports } from './report.js'
import { runParity } from './run.js'

export interface Io {
  stdout: ProgressStream
  stderr: ProgressStream
  /** Where the sign-in passwords are read (process.env). */
  env: Record<string, string | undefined>
}

const COMMANDS = 'Usage: fastify-schools-resources <command>\n\nCommands:\n  parity   compare a legacy site with its replacement, address by address (parity --help)\n'

/** `fastify-schools-resources <argv>`: the exit code; every failure is a message on stderr, never a stack. */
export async function main (argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h') {
    io.stdout.write(COMMANDS)
    return SAME_EXIT
  }
  if (command !== 'parity') {
    io.stderr.write(`${command === undefined ? 'No command given.' : `Unknown command ${JSON.stringify(command)}.`}\n${COMMANDS}`)
    return USAGE_EXIT
  }
  try {
    const options = parseParityArgs(rest, io.env)
    if (options === 'help') {
      io.stdout.write(USAGE)
      return SAME_EXIT
    }
    const progress = progressReporter(io.stderr)
    const result = await runParity(options, progress.tick)
    progress.end()
    const reports: Array<[string, string]> = []
    if (options.json !== undefined) reports.push([options.json, jsonReport(result)])
    if (options.junit !== undefined) reports.push([options.junit, junitReport(result)])
    await writeReports(reports)
    io.stdout.write(summaryTable(result, options.examples))
    return exitCodeOf(result) === 0 ? SAME_EXIT : DIFFERENT_EXIT
  } catch (err) {
    const known = err instanceof ParityInputError
    // A message's own lines stay lines; what a site put in one cannot drive the terminal.
    const message = known ? err.message.split('\n').map(printable).join('\n') : undefined
    io.stderr.write(`parity: ${message ?? `unexpected error: ${(err as Error).stack}`}\n${known ? 'Run with --help for the options.\n' : ''}`)
    return USAGE_EXIT
  }
}
