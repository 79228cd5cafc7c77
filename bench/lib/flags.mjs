// The bench's command-line flags (node:util parseArgs) and their --help text.
import { parseArgs } from 'node:util'

export const HELP = `Usage: node bench/run.mjs [options]      (npm run bench -- [options] builds first)

Measures our example server (examples/app.ts as \`npm start\` runs it) against bare Fastify, Fastify +
@fastify/session and Express 5, checks every server's answers before and after each measurement, and
writes docs/performance.md (and the run's data, bench/results/performance.json).

  --quick                 smoke run: 1 round, 2 s per server (1 s warm-up), 50,000-request flood
  --rounds N              interleaved rounds (default 3; quick 1)
  --duration S            seconds measured per server and scenario (default 8; quick 2)
  --warmup S              seconds of warm-up before each measurement (default 2; quick 1)
  --connections N         wrk connections (default 64)
  --memory-requests N     anonymous requests in the flood (default 1,000,000; quick 50,000)
  --only a,b              only these servers: limit, reference, express, fastify-full,
                          express-full, floor, ours, ours-small-page, ours-no-headers,
                          ours-no-csrf, and --extra names
  --skip a,b              leave out parts: throughput, breakdown, memory, login, spray
  --scenarios a,b         only these scenarios: anonymous, signed-in
  --extra name=dir        also measure the example server of another build (bench/build-before.sh),
                          started with that build's own npm-start flags; repeatable
  --log-level LEVEL       our server's log level (default warn; the peers log at warn)
  --spray-connections N   the spray's connections per attacking address (default 2: 100 in all)
  --spray-waiting N       our server's password line: sign-ins that may wait (passwordChecks.waiting,
                          0 for none; default the example's own, PASSWORD_CHECKS_WAITING)
  --name NAME             write bench/results/NAME.{md,json} instead of docs/performance.md
  --from-json FILE        render the report again from a saved run (bench/results/*.json), no measuring
  -h, --help              this text`

/** One `--extra name=dir`: another build to measure. */
function parseExtra (e) {
  const i = e.indexOf('=')
  if (i < 1) throw new Error(`--extra takes name=dir, got ${e}`)
  return { name: e.slice(0, i), dir: e.slice(i + 1) }
}

/** The run's settings from its command-line arguments; throws on an unknown or malformed flag. */
export function parseFlags (argv) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string', default: '64' },
      'memory-requests': { type: 'string' },
      only: { type: 'string' },
      skip: { type: 'string' },
      scenarios: { type: 'string' },
      extra: { type: 'string', multiple: true, default: [] },
      'log-level': { type: 'string', default: 'warn' },
      'spray-connections': { type: 'string', default: '2' },
      'spray-waiting': { type: 'string' },
      name: { type: 'string' },
      'from-json': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false }
    }
  })
  const number = (name, fallback) => {
    const value = Number(values[name] ?? fallback)
    if (!(value > 0)) throw new Error(`--${name} must be a positive number, got ${values[name]}`)
    return value
  }
  const list = (name, known) => {
    const items = values[name]?.split(',').filter(Boolean)
    const unknown = known === undefined ? [] : (items ?? []).filter((x) => !known.includes(x))
    if (unknown.length > 0) throw new Error(`--${name}: unknown ${unknown.join(', ')} (known: ${known.join(', ')})`)
    return items
  }
  const quick = values.quick
  return {
    help: values.help,
    quick,
    rounds: number('rounds', quick ? 1 : 3),
    duration: number('duration', quick ? 2 : 8),
    warmup: number('warmup', quick ? 1 : 2),
    connections: number('connections'),
    memoryRequests: number('memory-requests', quick ? 50_000 : 1_000_000),
    // --only is checked against the run's servers, which depend on the other flags.
    only: list('only'),
    skip: new Set(list('skip', ['throughput', 'breakdown', 'memory', 'login', 'spray'])),
    scenarios: list('scenarios', ['anonymous', 'signed-in']),
    extras: values.extra.map(parseExtra),
    logLevel: values['log-level'],
    sprayConnections: number('spray-connections'),
    // 0 is a line with no waiting places, which number() would refuse.
    sprayWaiting: values['spray-waiting'] === '0' ? 0 : values['spray-waiting'] === undefined ? undefined : number('spray-waiting'),
    name: values.name,
    fromJson: values['from-json']
  }
}
