import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './redis.js'

// Redis topologies of our own, each process on a free port in a temporary directory, killed and removed
// in teardown: a Sentinel set (primary, replica, three sentinels) and a 3-master Cluster. Used by
// test/redis/sentinel.test.ts and cluster.test.ts, and by bench/failover/run.mjs's counterpart.

const run = promisify(execFile)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** redis-cli's answer, trimmed; an error (connection refused) as its text. */
export async function cli (port: number, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5000 })
    return stdout.trim()
  } catch (err) {
    return `(failed) ${(err as Error).message}`
  }
}

/** Polls `check` every 50 ms until it is true, at most `ms`; throws `what` after that. */
export async function until (what: string, check: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

interface Teardown { teardown (fn: () => unknown): void }

class Processes {
  readonly dir = mkdtempSync(join(tmpdir(), 'schools-resources-topology-'))
  readonly children = new Map<number, ChildProcess>()

  constructor (t: Teardown) {
    t.teardown(async () => {
      for (const child of this.children.values()) child.kill('SIGKILL')
      rmSync(this.dir, { recursive: true, force: true })
    })
  }

  /** Starts redis-server with `config` (its own directory) and waits until it answers PING. */
  async start (port: number, config: string[], sentinel = false): Promise<void> {
    const dir = join(this.dir, String(port))
    mkdirSync(dir, { recursive: true })
    const file = join(dir, 'redis.conf')
    writeFileSync(file, [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, 'save ""', 'appendonly no', 'loglevel warning', ...config].join('\n') + '\n')
    const child = spawn('redis-server', sentinel ? [file, '--sentinel'] : [file], { stdio: 'ignore' })
    this.children.set(port, child)
    await until(`redis-server on ${port}`, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited (${child.exitCode})`)
      return await cli(port, 'PING') === 'PONG'
    }, 10_000)
  }

  /** SIGKILL, as a crash: no save, no goodbye to replicas. Resolves once the process is gone. */
  async kill (port: number): Promise<void> {
    const child = this.children.get(port)!
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }

  /** SIGSTOP (a stall: the connections stay open, nothing is answered) or, with `stalled` false, SIGCONT. */
  stall (port: number, stalled = true): void {
    this.children.get(port)!.kill(stalled ? 'SIGSTOP' : 'SIGCONT')
  }
}

export const SENTINEL_NAME = 'schools'

/**
 * A primary, `replicas` replicas (default 1) and three sentinels (quorum 2) that notice a dead primary
 * after 1 s.
 */
export class SentinelSet {
  readonly #processes: Processes
  readonly sentinels: number[]
  readonly servers: number[]

  private constructor (processes: Processes, servers: number[], sentinels: number[]) {
    this.#processes = processes
    this.servers = servers
    this.sentinels = sentinels
  }

  static async start (t: Teardown, replicas = 1): Promise<SentinelSet> {
    const processes = new Processes(t)
    const [primary, ...others] = await Promise.all(Array.from({ length: replicas + 4 }, () => freePort()))
    const sentinels = others.slice(replicas)
    await processes.start(primary, [])
    for (const replica of others.slice(0, replicas)) await processes.start(replica, [`replicaof 127.0.0.1 ${primary}`])
    for (const port of sentinels) {
      await processes.start(port, [
        `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary} 2`,
        `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
        `sentinel failover-timeout ${SENTINEL_NAME} 5000`
      ], true)
    }
    const set = new SentinelSet(processes, [primary, ...others.slice(0, replicas)], sentinels)
    // Ready when the replicas are in sync and every sentinel knows them and the other sentinels.
    await until('the replicas in sync', () => set.settled(primary))
    for (const port of sentinels) {
      await until(`sentinel ${port} to see its peers`, async () => {
        const info = await cli(port, 'SENTINEL', 'MASTER', SENTINEL_NAME)
        const field = (name: string) => Number(info.split('\n')[info.split('\n').indexOf(name) + 1])
        return field('num-slaves') >= replicas && field('num-other-sentinels') >= 2
      })
    }
    return set
  }

  /** The primary's port, as the sentinels say. */
  async primary (): Promise<number> {
    for (const port of this.sentinels) {
      const answer = (await cli(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME)).split('\n')
      if (answer.length === 2) return Number(answer[1])
    }
    throw new Error('no sentinel answered')
  }

  /** Whether `port` is a writable primary with every other server its replica, in sync (INFO). */
  async settled (port: number): Promise<boolean> {
    const info = await cli(port, 'INFO', 'replication')
    return /role:master/.test(info) && (info.match(/state=online/g) ?? []).length === this.servers.length - 1
  }

  /**
   * SENTINEL FAILOVER, resolved once the other server is primary and the old one its replica in sync; or,
   * with `settle` false, once the sentinels name the other server (the old primary rejoins ~15 s later).
   */
  async failover (settle = true): Promise<number> {
    const before = await this.primary()
    const answer = await cli(this.sentinels[0], 'SENTINEL', 'FAILOVER', SENTINEL_NAME)
    if (answer !== 'OK') throw new Error(`SENTINEL FAILOVER: ${answer}`)
    if (settle) return this.#promoted(before)
    let after = before
    await until('the sentinels to name the new primary', async () => (after = await this.primary()) !== before)
    return after
  }

  /** Kills the primary; resolves once the sentinels have promoted the replica. */
  async killPrimary (): Promise<number> {
    const before = await this.primary()
    await this.#processes.kill(before)
    let after = before
    await until('the sentinels to promote the replica', async () => {
      after = await this.primary()
      return after !== before && /role:master/.test(await cli(after, 'INFO', 'replication'))
    })
    return after
  }

  /** Stops the primary with SIGSTOP (connections open, unanswered); resolves to its port. */
  async stallPrimary (): Promise<number> {
    const port = await this.primary()
    this.#processes.stall(port)
    return port
  }

  /** SIGCONT to a server stalled by stallPrimary(). */
  resume (port: number): void {
    this.#processes.stall(port, false)
  }

  /**
   * Starts a killed server again, as its supervisor would: it comes back empty, and the sentinels make
   * it a replica of the new primary. Resolves once the primary has every replica in sync.
   */
  async restart (port: number): Promise<void> {
    await this.#processes.start(port, [])
    await until('the restarted server to be a replica in sync', async () => this.settled(await this.primary()))
  }

  async #promoted (before: number): Promise<number> {
    let after = before
    await until('the failover to finish', async () => {
      after = await this.primary()
      return after !== before && await this.settled(after)
    })
    return after
  }

  get sentinelNodes (): Array<{ host: string, port: number }> {
    return this.sentinels.map((port) => ({ host: '127.0.0.1', port }))
  }
}

/** Three masters, no replicas (addReplica() gives one), slots split by redis-cli --cluster create. */
export class RedisCluster3 {
  readonly #processes: Processes
  readonly ports: number[]

  private constructor (processes: Processes, ports: number[]) {
    this.#processes = processes
    this.ports = ports
  }

  static async start (t: Teardown): Promise<RedisCluster3> {
    const processes = new Processes(t)
    const ports = await Promise.all([0, 1, 2].map(() => freePort()))
    const config = (port: number) => ['cluster-enabled yes', `cluster-config-file nodes-${port}.conf`, 'cluster-node-timeout 1000']
    await Promise.all(ports.map((port) => processes.start(port, config(port))))
    await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 20_000 })
    const cluster = new RedisCluster3(processes, ports)
    await cluster.healthy()
    return cluster
  }

  /** Resolves once every node says cluster_state:ok. */
  async healthy (): Promise<void> {
    for (const port of this.ports) await until(`cluster_state:ok on ${port}`, async () => /cluster_state:ok/.test(await cli(port, 'CLUSTER', 'INFO')))
  }

  /** The port of the master holding `key`'s slot. */
  async nodeOf (key: string): Promise<number> {
    const slot = Number(await cli(this.ports[0], 'CLUSTER', 'KEYSLOT', key))
    const lines = (await cli(this.ports[0], 'CLUSTER', 'NODES')).split('\n')
    for (const line of lines) {
      const [, address, flags, , , , , , ...ranges] = line.split(' ')
      if (!flags.includes('master')) continue
      for (const range of ranges) {
        const [from, to = from] = range.split('-').map(Number)
        if (slot >= from && slot <= to) return Number(address.split(':')[1].split('@')[0])
      }
    }
    throw new Error(`no master holds slot ${slot}`)
  }

  async kill (port: number): Promise<void> {
    await this.#processes.kill(port)
  }

  /** Stops a node with SIGSTOP (its connections stay open, unanswered); `false`: SIGCONT. */
  stall (port: number, stalled = true): void {
    this.#processes.stall(port, stalled)
  }

  /** Whether the node on `port` says it is a master (INFO replication). */
  async isMaster (port: number): Promise<boolean> {
    return /role:master/.test(await cli(port, 'INFO', 'replication'))
  }

  /** Starts a node of its own as a replica of the master on `port`; resolves once it is in sync. */
  async addReplica (port: number): Promise<number> {
    const replica = await freePort()
    await this.#processes.start(replica, ['cluster-enabled yes', `cluster-config-file nodes-${replica}.conf`, 'cluster-node-timeout 1000'])
    const id = await cli(port, 'CLUSTER', 'MYID')
    // No 5 s wait for more replicas before the sync (repl-diskless-sync-delay); no 1 s polls of
    // redis-cli --cluster add-node: MEET, then REPLICATE once the new node knows the master.
    await cli(port, 'CONFIG', 'SET', 'repl-diskless-sync-delay', '0')
    await cli(replica, 'CLUSTER', 'MEET', '127.0.0.1', String(port))
    await until(`node ${replica} to know ${port}`, async () => (await cli(replica, 'CLUSTER', 'NODES')).includes(id))
    const answer = await cli(replica, 'CLUSTER', 'REPLICATE', id)
    if (answer !== 'OK') throw new Error(`CLUSTER REPLICATE: ${answer}`)
    await until(`a replica of ${port} in sync`, async () => /slave0:.*state=online/.test(await cli(port, 'INFO', 'replication')))
    // A replica is promoted only with the votes of a majority of masters, and a master votes only for a
    // node it knows: wait until the gossip has reached every node, or a stall right after may elect nobody.
    const replicaId = await cli(replica, 'CLUSTER', 'MYID')
    const ids = await Promise.all(this.ports.map((p) => cli(p, 'CLUSTER', 'MYID')))
    await until(`every node to know ${replica}`, async () => {
      const tables = await Promise.all([...this.ports, replica].map((p) => cli(p, 'CLUSTER', 'NODES')))
      return tables.every((table) => table.includes(replicaId) && ids.every((other) => table.includes(other)))
    })
    return replica
  }

  /** Starts a killed node again from its nodes.conf, and waits until the cluster is whole. */
  async restart (port: number): Promise<void> {
    await this.#processes.start(port, ['cluster-enabled yes', `cluster-config-file nodes-${port}.conf`, 'cluster-node-timeout 1000'])
    await this.healthy()
  }

  get rootNodes (): Array<{ url: string }> {
    return this.ports.map((port) => ({ url: `redis://127.0.0.1:${port}` }))
  }
}
