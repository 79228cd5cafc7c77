import { createClient, createCluster, createSentinel } from 'redis'
import type { FastifyBaseLogger } from 'fastify'

const CONNECT_TIMEOUT_MS = 2000

/**
 * Why connecting can never work by waiting, or undefined for a failure worth retrying (Redis not up
 * yet, a network blip): a refused password, a failed TLS handshake, a host name that does not exist.
 */
export function permanentFailure (url: string, cause: unknown): string | undefined {
  if (!(cause instanceof Error)) return undefined
  const { code } = cause as { code?: unknown }
  const message = cause.message
  if (/^(WRONGPASS|NOAUTH|ERR (AUTH|invalid password|Client sent AUTH))/.test(message)) return `it refused the login (${message})`
  if (code === 'ENOTFOUND') return `its host name does not resolve (${message})`
  if (typeof code === 'string' && /^(ERR_SSL|ERR_TLS|EPROTO|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(code)) return `the TLS connection failed (${code}: ${message})`
  if (url.startsWith('rediss:') && /timeout/i.test(message)) {
    return `no TLS handshake within ${CONNECT_TIMEOUT_MS} ms (${message}); does this port speak TLS? rediss:// needs one that does`
  }
  return undefined
}

/** Why a client's first connection cannot work, as its reconnectStrategy found (connect()'s error lacks it). */
const startupFailures = new WeakMap<object, string>()

function newClient (url: string) {
  let connected = false
  const client = createClient({
    url,
    name: 'schools-resources-example',
    disableOfflineQueue: true,
    commandsQueueMaxLength: 1000,
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      // Until the first connection, a failure that waiting cannot fix ends the attempts (connect()
      // rejects with it); once serving, every failure is retried, so service comes back by itself.
      reconnectStrategy: (retries: number, cause: Error) => {
        const reason = connected ? undefined : permanentFailure(url, cause)
        if (reason === undefined) return Math.min(100 * 2 ** retries, 1000)
        startupFailures.set(client, reason)
        return cause
      }
    }
  })
  client.once('ready', () => { connected = true })
  return client
}

export type RedisClient = ReturnType<typeof newClient>

type Log = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>

/**
 * A node-redis client set up to fail fast rather than hang while Redis is away:
 * - `disableOfflineQueue`: while disconnected, commands fail at once (the visitor gets a 503 now, not
 *   a request that waits for a reconnection that may never come);
 * - `commandsQueueMaxLength`: a slow Redis cannot make commands pile up without bound (the stores'
 *   own `timeoutMs` answers the visitor meanwhile);
 * - reconnection every 100 ms doubling up to 1 s, forever, so service comes back by itself.
 * It is not connected yet; call {@link watchRedis} then {@link connectRedis}.
 */
export function createRedisClient (url: string): RedisClient {
  return newClient(url)
}

/**
 * Logs the connection's state: once when Redis becomes unreachable (not once per retry), once when it
 * is back. Without an 'error' listener node-redis would crash the process on a lost connection.
 */
export function watchRedis (client: AnyRedisClient, url: string, log: Log): void {
  let down = false
  let serving = false
  client.on('error', (err: Error) => {
    if (down) return
    down = true
    log.error({ reason: `${err.name}: ${err.message}` }, `Redis at ${redact(url)} is unreachable; ` +
      (serving ? 'requests that need a session get 503 until it is back' : 'retrying'))
  })
  client.on('ready', () => {
    // At warn, as the outage was at error: whoever watches warn and above sees it end too.
    if (down && serving) log.warn(`Redis at ${redact(url)} is back`)
    down = false
    serving = true
  })
}

/** The URL without its password, for logs; a description of a Sentinel set or a Cluster as it is. */
export function redact (url: string): string {
  if (!url.includes('://')) return url
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(unparsable REDIS_URL)'
  }
}

/**
 * Connects, waiting up to `waitMs` for Redis to answer (it may still be starting); after that, gives up
 * with an error that says so. The server does not listen before this resolves, so it never serves
 * anything that needs a session without a working store.
 */
export async function connectRedis (client: AnyRedisClient, url: string, waitMs: number, log: Log): Promise<void> {
  log.info(`Connecting to Redis at ${redact(url)} (waiting up to ${waitMs} ms)`)
  let timer: NodeJS.Timeout | undefined
  const gaveUp = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis at ${redact(url)} did not answer within ${waitMs} ms (REDIS_CONNECT_TIMEOUT_MS); not starting without a session store`)), waitMs)
  })
  try {
    await Promise.race([client.connect(), gaveUp])
  } catch (err) {
    if (client.isOpen) client.destroy()
    const reason = startupFailures.get(client)
    throw reason === undefined ? err : new Error(`Redis at ${redact(url)} cannot be used: ${reason}; not starting without a session store`)
  } finally {
    clearTimeout(timer)
  }
  await client.ping()
  log.info(`Connected to Redis at ${redact(url)}`)
}

export interface RedisNode { host: string, port: number }

// The fail-fast settings of createRedisClient(), for each node a Sentinel or Cluster client opens.
const NODE_OPTIONS = {
  disableOfflineQueue: true,
  commandsQueueMaxLength: 1000,
  socket: { connectTimeout: CONNECT_TIMEOUT_MS, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 1000) }
}

/**
 * A Sentinel-managed primary (REDIS_SENTINELS, REDIS_SENTINEL_NAME): the client asks the sentinels
 * where the primary is and follows a failover. One connection to the primary (masterPoolSize 1), so a
 * session write and its WAIT share it.
 */
export function createSentinelClient (sentinels: RedisNode[], name: string) {
  return createSentinel({ name, sentinelRootNodes: sentinels, masterPoolSize: 1, nodeClientOptions: NODE_OPTIONS, sentinelClientOptions: NODE_OPTIONS })
}

/**
 * A Redis Cluster (REDIS_CLUSTER_NODES): any of its masters to start from; the client finds the others.
 * While a node's connection is lost, the client asks the cluster for its slots again every second
 * (node-redis's default is 5 s after the first retry): a master killed then costs the cluster's own
 * failover time, not that plus 5 s of commands sent to the dead node.
 */
export function createClusterClient (nodes: RedisNode[]) {
  return createCluster({
    rootNodes: nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
    defaults: NODE_OPTIONS,
    topologyRefreshOnReconnectionAttemptStrategy: 1000
  })
}

export type SentinelClient = ReturnType<typeof createSentinelClient>
export type ClusterClient = ReturnType<typeof createClusterClient>
export type AnyRedisClient = RedisClient | SentinelClient | ClusterClient

/** The settings' Redis, or undefined: `where` for logs, and a client not connected yet. */
export function redisFromSettings (settings: { redisUrl?: string, redisSentinels?: RedisNode[], redisSentinelName?: string, redisClusterNodes?: RedisNode[] }): { where: string, client: AnyRedisClient } | undefined {
  const list = (nodes: RedisNode[]) => nodes.map(({ host, port }) => `${host}:${port}`).join(',')
  if (settings.redisSentinels !== undefined) {
    return { where: `Sentinel primary "${settings.redisSentinelName}" via ${list(settings.redisSentinels)}`, client: createSentinelClient(settings.redisSentinels, settings.redisSentinelName!) }
  }
  if (settings.redisClusterNodes !== undefined) return { where: `Cluster ${list(settings.redisClusterNodes)}`, client: createClusterClient(settings.redisClusterNodes) }
  if (settings.redisUrl !== undefined) return { where: settings.redisUrl, client: createRedisClient(settings.redisUrl) }
  return undefined
}
