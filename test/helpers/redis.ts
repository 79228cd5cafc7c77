import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { Test } from 'tap'
import { createRedisClient, type RedisClient } from '../../examples/redis.js'

export const REDIS_URL = process.env.REDIS_URL === '' ? undefined : process.env.REDIS_URL

export const SKIP_MESSAGE = 'REDIS_URL is not set, so the Redis tests are skipped. Run them with ' +
  'REDIS_URL=redis://127.0.0.1:6379 npm run test:all (Redis 7 on that address), or bash .ci/run, which starts Redis when needed.'

// The tests already planned to be skipped: a file may ask more than once (one block per topic), and tap
// refuses a second plan.
const skipping = new WeakSet<Test>()

/** Skips the whole file, with a message that says how to run it, when REDIS_URL is unset. */
export function requireRedis (t: Test): boolean {
  if (REDIS_URL !== undefined) return true
  if (!skipping.has(t)) {
    skipping.add(t)
    t.comment(SKIP_MESSAGE)
    t.plan(0, SKIP_MESSAGE)
  }
  return false
}

/** A key prefix of its own per test run, so that runs (and people) sharing one Redis never meet. */
export function uniquePrefix (name: string): string {
  return `schools-resources-test:${name}:${Date.now().toString(36)}-${process.pid}-${randomBytes(4).toString('hex')}:`
}

/** Every key under `prefix` (SCAN, not KEYS). */
export async function listKeys (client: RedisClient, prefix: string): Promise<string[]> {
  const found: string[] = []
  let cursor = '0'
  do {
    const [next, keys] = await client.sendCommand(['SCAN', cursor, 'MATCH', `${prefix}*`, 'COUNT', '1000']) as [string, string[]]
    found.push(...keys)
    cursor = next
  } while (cursor !== '0')
  return found.sort()
}

/** Deletes every key under `prefix` (SCAN, not KEYS, so a shared Redis is not blocked). */
export async function deleteKeys (client: RedisClient, prefix: string): Promise<number> {
  const keys = await listKeys(client, prefix)
  return keys.length === 0 ? 0 : Number(await client.sendCommand(['DEL', ...keys]))
}

/** The example's client settings, with its errors collected rather than logged. */
export async function connectedClient (t: Test, url: string, connect = true): Promise<RedisClient & { errors: Error[] }> {
  const client = Object.assign(createRedisClient(url), { errors: [] as Error[] })
  client.on('error', (err: Error) => { client.errors.push(err) })
  if (connect) {
    await client.connect()
    // Not the example's name, so that tests can tell the example server's connection from their own.
    await client.sendCommand(['CLIENT', 'SETNAME', 'schools-resources-test'])
  }
  t.teardown(() => { if (client.isOpen) client.destroy() })
  return client
}

export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** One RESP command on a fresh socket, answered with the first line of the reply (or the error). */
export async function rawCommand (port: number, args: string[], timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`no answer to ${args[0]} within ${timeoutMs} ms`)) }, timeoutMs)
    let data = ''
    socket.on('error', (err) => { clearTimeout(timer); reject(err) })
    socket.on('data', (chunk) => {
      data += chunk
      if (data.includes('\r\n')) { clearTimeout(timer); socket.end(); resolve(data.split('\r\n')[0]) }
    })
    socket.on('close', () => { clearTimeout(timer); resolve(data.split('\r\n')[0]) })
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`)
  })
}

/**
 * A redis-server of our own on a free port, to stop, restart and pause without touching the shared
 * one. Its data survives a stop (SHUTDOWN SAVE into a temporary directory), as a real outage usually
 * does. Killed and removed in teardown.
 */
export class ThrowawayRedis {
  readonly port: number
  readonly dir: string
  #child: ChildProcess | undefined

  private constructor (port: number, dir: string) {
    this.port = port
    this.dir = dir
  }

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  static async start (t: Test, port?: number): Promise<ThrowawayRedis> {
    const redis = new ThrowawayRedis(port ?? await freePort(), mkdtempSync(join(tmpdir(), 'schools-resources-redis-')))
    t.teardown(async () => {
      redis.#child?.kill('SIGKILL')
      rmSync(redis.dir, { recursive: true, force: true })
    })
    await redis.resume()
    return redis
  }

  /** Starts (or restarts) the server and waits, at most 5 s, until it answers PING. */
  async resume (): Promise<void> {
    const child = spawn('redis-server', [
      '--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
      '--dir', this.dir, '--dbfilename', 'dump.rdb', '--daemonize', 'no', '--loglevel', 'warning'
    ], { stdio: 'ignore' })
    this.#child = child
    const deadline = Date.now() + 5000
    for (;;) {
      const answer = await rawCommand(this.port, ['PING'], 500).catch(() => '')
      if (answer === '+PONG') return
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  /** Saves and stops the server (its port is then closed), waiting at most 5 s for the process to exit. */
  async stop (): Promise<void> {
    const child = this.#child!
    const exited = once(child, 'exit')
    await rawCommand(this.port, ['SHUTDOWN', 'SAVE']).catch(() => '')
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))])
    if (child.exitCode === null && child.signalCode === null) throw new Error('redis-server did not stop')
  }

  /** Makes the server hold every client's commands for `ms` (slow Redis). */
  async pause (ms: number): Promise<void> {
    const answer = await rawCommand(this.port, ['CLIENT', 'PAUSE', String(ms), 'ALL'])
    if (answer !== '+OK') throw new Error(`CLIENT PAUSE: ${answer}`)
  }
}
