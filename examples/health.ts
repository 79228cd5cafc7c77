import type { FastifyInstance } from 'fastify'

/** A node-redis client (createClient). */
export interface StoreClient {
  sendCommand (args: string[]): Promise<unknown>
}

/** A node-redis Sentinel client (createSentinel): ROLE goes to the master it follows. */
export interface StoreSentinel {
  getMasterNode (): { host: string, port: number } | undefined
  sendCommand (isReadonly: boolean | undefined, args: string[]): Promise<unknown>
}

/** A node-redis Cluster client (createCluster): its slot map, commands routed by key, and each node's client. */
export interface StoreCluster {
  readonly slots: ReadonlyArray<{ master: { address: string } } | undefined>
  sendCommand (firstKey: string, isReadonly: boolean | undefined, args: string[]): Promise<unknown>
  nodeClient (node: { address: string }): Promise<StoreClient>
}

export type Store = StoreClient | StoreSentinel | StoreCluster

export interface HealthOptions {
  /** True from SIGTERM on: /readyz then fails, so that the balancer stops sending new requests here. */
  draining: () => boolean
  /** Where sessions are kept, when in Redis: /storez reports its state. */
  store?: Store
  /** How long /storez waits for Redis (the stores' timeoutMs); default 2000. */
  timeoutMs?: number
  /** The prefix of the keys /storez asks EXISTS about (never written); default 'schools-resources:storez:'. */
  keyPrefix?: string
}

/** One range of a Cluster's slots: the master that serves it, and whether it answered. */
export interface Shard {
  slots: string
  master: string
  answered: boolean
  /** Where this process still sends these slots, when the cluster has moved them elsewhere. */
  routedTo?: string
}

export interface StoreState {
  ok: boolean
  store: 'memory' | 'redis' | 'sentinel' | 'cluster'
  /** Why not ok. */
  problem?: string
  /** Redis and Sentinel: the role of the server this process writes to. */
  role?: string
  /** Sentinel: the master it follows (host:port). */
  master?: string
  /** Cluster: every range of slots and its master. */
  shards?: Shard[]
}

export const LIVENESS_PATH = '/healthz'
export const READINESS_PATH = '/readyz'
export const STORE_PATH = '/storez'

const SLOTS = 16384

/** Redis Cluster's hash slot of a key without a {tag}: CRC16 (XMODEM) modulo 16384. */
function slotOf (key: string): number {
  let crc = 0
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc % SLOTS
}

function isCluster (store: Store): store is StoreCluster {
  return 'slots' in store && Array.isArray(store.slots)
}

function isSentinel (store: Store): store is StoreSentinel {
  return typeof (store as StoreSentinel).getMasterNode === 'function'
}

const errorText = (err: unknown) => err instanceof Error ? `${err.name}: ${err.message}` : String(err)

/** The answer, or a rejection that says the store was too slow. */
function within<T> (ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

function roleName (reply: unknown): string {
  const name = String(Array.isArray(reply) ? reply[0] : reply)
  return name === 'slave' ? 'replica' : name
}

/** The ranges of slots per master, as a slot map (the client's, or the cluster's own) has them. */
function rangesOf (masterOf: (slot: number) => string | undefined): Array<{ from: number, to: number, master: string | undefined }> {
  const ranges: Array<{ from: number, to: number, master: string | undefined }> = []
  for (let slot = 0; slot < SLOTS; slot++) {
    const master = masterOf(slot)
    const last = ranges.at(-1)
    if (last !== undefined && last.master === master) last.to = slot
    else ranges.push({ from: slot, to: slot, master })
  }
  return ranges
}

const rangeText = ({ from, to }: { from: number, to: number }) => from === to ? String(from) : `${from}-${to}`

/** A key (never written) in the given range of slots; found once per range. */
const probeKeys = new Map<string, string>()
function keyIn (prefix: string, from: number, to: number): string {
  const id = `${prefix}|${from}-${to}`
  let key = probeKeys.get(id)
  for (let n = 0; key === undefined; n++) {
    const slot = slotOf(`${prefix}${n}`)
    if (slot >= from && slot <= to) key = `${prefix}${n}`
  }
  probeKeys.set(id, key)
  return key
}

/** CLUSTER SLOTS as the cluster answers it: who serves each slot. */
function clusterMap (reply: unknown): (slot: number) => string | undefined {
  const entries = (Array.isArray(reply) ? reply : []) as Array<[number, number, [string, number]]>
  return (slot) => {
    const entry = entries.find(([from, to]) => slot >= from && slot <= to)
    return entry === undefined ? undefined : `${entry[2][0]}:${entry[2][1]}`
  }
}

/**
 * A Cluster: EXISTS on a key in each master's slots, through the client's own routing, so that a master
 * that moved answers MOVED and the client follows it and maps the slots again. A master that does not
 * answer (killed, stalled) is looked up in the cluster's own map, asked of a master that does.
 */
async function clusterState (cluster: StoreCluster, timeoutMs: number, prefix: string): Promise<StoreState> {
  const probe = async () => {
    const ranges = rangesOf((slot) => cluster.slots[slot]?.master.address)
    const answers = await Promise.all(ranges.map(async ({ from, to, master }) => {
      if (master === undefined) return false
      const key = keyIn(prefix, from, to)
      return within(timeoutMs, cluster.sendCommand(key, false, ['EXISTS', key])).then(() => true, () => false)
    }))
    return { ranges, answers }
  }
  let { ranges, answers } = await probe()
  // A MOVED was followed: the client's map changed under the probe, so ask again along the new one.
  const now = rangesOf((slot) => cluster.slots[slot]?.master.address)
  if (now.length !== ranges.length || now.some((r, i) => ranges[i].master !== r.master || ranges[i].to !== r.to)) {
    ({ ranges, answers } = await probe())
  }
  const shards: Shard[] = ranges.map((range, i) => ({ slots: rangeText(range), master: range.master ?? '(none)', answered: answers[i] }))
  const silent = shards.filter((shard) => !shard.answered)
  if (silent.length === 0) return { ok: true, store: 'cluster', shards }
  const speaking = ranges.find((_range, i) => answers[i])
  if (speaking !== undefined) {
    // Through that master's own connection: node-redis sends a keyless command to any node, the silent one included.
    const ask = async () => (await cluster.nodeClient(cluster.slots[speaking.from]!.master)).sendCommand(['CLUSTER', 'SLOTS'])
    const reply = await within(timeoutMs, ask()).catch(() => undefined)
    if (reply !== undefined) {
      const masterOf = clusterMap(reply)
      for (const [i, shard] of shards.entries()) {
        const actual = masterOf(ranges[i].from)
        if (shard.answered || actual === undefined || actual === shard.master) continue
        shard.routedTo = shard.master
        shard.master = actual
      }
    }
  }
  const problem = silent.map((shard) => shard.master === '(none)'
    ? `slots ${shard.slots}: no master`
    : shard.routedTo === undefined
      ? `slots ${shard.slots}: master ${shard.master} did not answer within ${timeoutMs} ms`
      : `slots ${shard.slots}: the cluster moved them to ${shard.master}, this process still sends them to ${shard.routedTo}, which did not answer`)
  return { ok: false, store: 'cluster', problem: problem.join('; '), shards }
}

/** The session store's state: reachable, writable (a master), and for a Cluster, who serves which slots. */
export async function storeState (store: Store | undefined, timeoutMs = 2000, keyPrefix = 'schools-resources:storez:'): Promise<StoreState> {
  if (store === undefined) return { ok: true, store: 'memory' }
  if (isCluster(store)) return clusterState(store, timeoutMs, keyPrefix)
  const sentinel = isSentinel(store) ? store : undefined
  const state: StoreState = sentinel === undefined ? { ok: false, store: 'redis' } : { ok: false, store: 'sentinel' }
  const node = sentinel?.getMasterNode()
  if (node !== undefined) state.master = `${node.host}:${node.port}`
  try {
    const reply = await within(timeoutMs, sentinel === undefined ? (store as StoreClient).sendCommand(['ROLE']) : sentinel.sendCommand(false, ['ROLE']))
    state.role = roleName(reply)
  } catch (err) {
    return { ...state, problem: `Redis did not answer ROLE (${errorText(err)})` }
  }
  if (state.role !== 'master') return { ...state, problem: `Redis is a ${state.role}, so writes fail (READONLY)` }
  return { ...state, ok: true }
}

/**
 * - `GET /healthz` (liveness): 200 whenever the process answers.
 * - `GET /readyz` (readiness, the balancer's check): 503 only while this process drains (from SIGTERM
 *   on). It never asks the store: a store outage is the same on every instance, and taking them all
 *   out of rotation would leave visitors nothing, where the section still serves them.
 * - `GET /storez` (monitoring, never the balancer's check): the store's state as JSON, 200 when it can
 *   take writes, else 503.
 * Each change of an answer is logged once, at warn both ways.
 */
export function healthRoutes (app: FastifyInstance, options: HealthOptions): void {
  const quiet = { logLevel: 'warn' as const }
  const last = new Map<string, boolean>()
  const logChange = (path: string, ok: boolean, what: string, reason?: string) => {
    if ((last.get(path) ?? true) !== ok) app.log.warn({ reason }, `${what}: ${path} answers ${ok ? 200 : 503}`)
    last.set(path, ok)
  }
  let probing: Promise<StoreState> | undefined
  app.get(LIVENESS_PATH, quiet, async (_request, reply) => {
    reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8')
    return 'ok\n'
  })
  app.get(READINESS_PATH, quiet, async (_request, reply) => {
    reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8')
    const draining = options.draining()
    logChange(READINESS_PATH, !draining, draining ? 'not ready' : 'ready again', draining ? 'shutting down' : undefined)
    if (!draining) return 'ready\n'
    reply.code(503).header('retry-after', '5')
    return 'not ready: shutting down\n'
  })
  app.get(STORE_PATH, quiet, async (_request, reply) => {
    // Probes asked at once share one round of commands.
    probing ??= storeState(options.store, options.timeoutMs, options.keyPrefix).finally(() => { probing = undefined })
    const state = await probing
    logChange(STORE_PATH, state.ok, state.ok ? 'session store back' : 'session store failing', state.problem)
    reply.header('cache-control', 'no-store').code(state.ok ? 200 : 503)
    return state
  })
}
