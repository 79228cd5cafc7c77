// Server processes: start (pinned to one core with taskset), ask over IPC, read CPU time and memory
// from /proc, stop. stdout and stderr go to files, so that the terminal costs nothing and the checks
// can count the warnings in them.
import { spawn, execFileSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const serversDir = fileURLToPath(new URL('../servers/', import.meta.url))
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim())

const cores = availableParallelism()
const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

/** Servers on the first core, wrk and the runner on the last, when there are two and taskset is there. */
export const pinning = {
  pinned: cores >= 2 && hasTaskset,
  cores,
  serverCpu: '0',
  loadCpu: String(cores - 1)
}

/** The command that runs `cmd argv` on `cpu` (or unpinned). taskset execs the command, so the pid is the command's. */
export function pinned (cpu, cmd, argv) {
  return pinning.pinned ? ['taskset', ['-c', cpu, cmd, ...argv]] : [cmd, argv]
}

/** Moves this runner (all its threads) to the load core, away from the servers. */
export function pinRunner () {
  if (pinning.pinned) execFileSync('taskset', ['-a', '-p', '-c', pinning.loadCpu, String(process.pid)], { stdio: 'ignore' })
}

/** Lets this runner (all its threads) use every core again, for a part whose server is not pinned either. */
export function unpinRunner () {
  if (pinning.pinned) execFileSync('taskset', ['-a', '-p', '-c', `0-${cores - 1}`, String(process.pid)], { stdio: 'ignore' })
}

// BENCH_PORT: the first port to use (4100), for runs side by side on one machine.
let nextPort = Number(process.env.BENCH_PORT ?? 4100)
let started = 0
const outputDir = join(tmpdir(), `fsr-bench-${process.pid}`)

/** Removes the output files of every server this run started. */
export function removeOutputs () {
  rmSync(outputDir, { recursive: true, force: true })
}

/**
 * Starts `server` (bench/lib/servers.mjs) on a fresh port and resolves once it listens. `env` is added
 * to the server's own; `pinToCore: false` leaves it free to use every core; `wrapper`: a command that
 * runs Node (valgrind and its flags), unpinned, given `startMs` to start (20 s).
 */
export async function startServer (server, { env = {}, pinToCore = true, wrapper = [], startMs = 20_000 } = {}) {
  mkdirSync(outputDir, { recursive: true })
  const port = nextPort++
  const id = `${server.name}-${started++}`
  const stdoutPath = join(outputDir, `${id}.stdout`)
  const stderrPath = join(outputDir, `${id}.stderr`)
  const outFd = openSync(stdoutPath, 'w')
  const errFd = openSync(stderrPath, 'w')
  const nodeArgv = [...(server.execArgv ?? []), join(serversDir, server.file)]
  const [cmd, argv] = wrapper.length > 0
    ? [wrapper[0], [...wrapper.slice(1), process.execPath, ...nodeArgv]]
    : pinToCore ? pinned(pinning.serverCpu, process.execPath, nodeArgv) : [process.execPath, nodeArgv]
  const child = spawn(cmd, argv, {
    cwd: join(serversDir, '..', '..'),
    // stdout: pino's log lines; stderr: Node's warnings.
    stdio: ['ignore', outFd, errFd, 'ipc'],
    env: { ...process.env, PORT: String(port), ...server.env, ...env }
  })
  closeSync(outFd)
  closeSync(errFd)
  const proc = { server, port, child, pid: child.pid, stdoutPath, stderrPath, pending: new Map(), nextId: 0, signIns: 0 }
  child.on('message', (msg) => {
    if (msg?.type !== 'stats') return
    proc.pending.get(msg.id)?.(msg)
    proc.pending.delete(msg.id)
  })
  await new Promise((resolve, reject) => {
    const output = () => readFileSync(stderrPath, 'utf8') + readFileSync(stdoutPath, 'utf8')
    const timer = setTimeout(() => reject(new Error(`${server.name} did not start: ${output()}`)), startMs)
    child.on('message', (msg) => {
      if (msg?.type === 'ready') {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${server.name} exited with ${code}: ${output()}`))
    })
  })
  return proc
}

/** What the server reports about itself over IPC (sessions in its store, warnings raised, memory, event loop). */
export function serverStats (proc) {
  const id = proc.nextId++
  return new Promise((resolve) => {
    proc.pending.set(id, resolve)
    proc.child.send({ type: 'stats', id })
  })
}

/** SIGTERM (our server closes the app, which writes its last conflict summary) and waits for the exit. */
export async function terminate (proc, { killAfterMs = 10_000 } = {}) {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return
  const exited = new Promise((resolve) => proc.child.once('exit', resolve))
  proc.child.kill('SIGTERM')
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), killAfterMs)
  await exited
  clearTimeout(timer)
}

/** Stops the server if it still runs and removes its output files. */
export async function stopServer (proc) {
  await terminate(proc)
  rmSync(proc.stdoutPath, { force: true })
  rmSync(proc.stderrPath, { force: true })
}

/** CPU seconds (all threads) and memory of a process, from /proc. */
export function processSample (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)[1])
  return { cpuSeconds, rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 }
}

/** Busy CPU seconds of the whole machine (every process), from /proc/stat. */
export function machineBusySeconds () {
  const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).map(Number)
  // user nice system idle iowait irq softirq steal
  return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / CLK_TCK
}
