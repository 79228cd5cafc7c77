// Load with wrk (one thread, on the load core) and its summary as bench/wrk-report.lua prints it.
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { CATEGORY_PATH } from './servers.mjs'
import { pinned, pinning } from './processes.mjs'

const reportScript = fileURLToPath(new URL('../wrk-report.lua', import.meta.url))
const MARKER = 'BENCH_JSON '

/** wrk's version ("debian/4.1.0-3+b2"), or undefined when wrk is not installed. */
export function wrkVersion () {
  // `wrk -v` prints its version and exits with 1.
  const result = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  return result.error === undefined ? result.stdout.split(' ')[1] ?? '' : undefined
}

/**
 * Loads the server on `port` for `duration` seconds with `connections` connections; with `maxRequests`
 * wrk stops after that many responses. Rejects on any error wrk saw (socket errors, non-2xx/3xx, timeouts).
 * Resolves to the summary (latencies in µs) and req/s.
 */
export function wrk (port, { duration, connections, headers = {}, path = CATEGORY_PATH, maxRequests }) {
  // BENCH_WRK_TIMEOUT (seconds, 5): on a machine shared with higher-priority work, a pinned server can be
  // starved for longer than 5 s, which wrk counts as a failed answer.
  const argv = ['-t1', `-c${connections}`, `-d${duration}s`, '--timeout', `${Number(process.env.BENCH_WRK_TIMEOUT ?? 5)}s`, '-s', reportScript]
  for (const [name, value] of Object.entries(headers)) argv.push('-H', `${name}: ${value}`)
  argv.push(`http://127.0.0.1:${port}${path}`)
  const [cmd, full] = pinned(pinning.loadCpu, 'wrk', argv)
  const env = maxRequests === undefined ? process.env : { ...process.env, WRK_MAX_REQUESTS: String(maxRequests) }
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, full, { stdio: ['ignore', 'pipe', 'pipe'], env })
    let out = ''
    child.stdout.on('data', (c) => { out += c })
    child.stderr.on('data', (c) => { out += c })
    child.on('error', reject)
    child.on('exit', (code) => {
      try {
        resolve(parseReport(out, code))
      } catch (err) {
        reject(err)
      }
    })
  })
}

/** The summary line of wrk-report.lua in wrk's output. */
export function parseReport (out, exitCode = 0) {
  const line = out.split('\n').find((l) => l.startsWith(MARKER))
  if (exitCode !== 0 || line === undefined) throw new Error(`wrk failed (${exitCode}): ${out}`)
  const r = JSON.parse(line.slice(MARKER.length))
  const errors = r.connectErrors + r.readErrors + r.writeErrors + r.statusErrors + r.timeouts
  if (errors > 0) throw new Error(`wrk saw ${errors} errors: ${line}`)
  return { ...r, rps: r.requests / (r.durationUs / 1e6), bytesPerResponse: r.requests === 0 ? 0 : r.bytes / r.requests }
}
