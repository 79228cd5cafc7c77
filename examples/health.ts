import type { FastifyInstance } from 'fastify'

/** A Redis connection /readyz can ask `ROLE`: a node-redis client (createClient). */
export interface RoleClient {
  sendCommand (args: string[]): Promise<unknown>
}

/**
 * A node-redis Cluster client (createCluster): `ROLE` is asked of every master through its public
 * `masters` and `nodeClient()`.
 */
export interface RoleCluster {
  readonly masters: readonly object[]
  nodeClient (node: never): Promise<RoleClient>
}

/**
 * A node-redis Sentinel client (createSentinel): `ROLE` goes to the master it follows, through its
 * public `sendCommand(isReadonly, args)`.
 */
export interface RoleSentinel {
  acquire (): Promise<unknown>
  sendCommand (isReadonly: boolean | undefined, args: string[]): Promise<unknown>
}

export interface HealthOptions {
  /** True from SIGTERM: /readyz then fails, so that the load balancer takes the instance out of rotation. */
  draining: () => boolean
  /** Where sessions are kept, when in Redis; a write there must work for the instance to be ready. */
  redis?: RoleClient | RoleCluster | RoleSentinel
  /** How long /readyz waits for Redis (the stores' REDIS_TIMEOUT_MS). */
  timeoutMs?: number
}

export const LIVENESS_PATH = '/healthz'
export const READINESS_PATH = '/readyz'

function isCluster (client: RoleClient | RoleCluster | RoleSentinel): client is RoleCluster {
  return 'masters' in client && typeof (client as RoleCluster).nodeClient === 'function'
}

function isSentinel (client: RoleClient | RoleSentinel): client is RoleSentinel {
  return typeof (client as RoleSentinel).acquire === 'function'
}

/** Why a connection cannot take writes (ROLE is not master), or undefined when it can. */
async function notMaster (client: RoleClient | RoleSentinel): Promise<string | undefined> {
  const role = isSentinel(client) ? await client.sendCommand(false, ['ROLE']) : await client.sendCommand(['ROLE'])
  const name = Array.isArray(role) ? String(role[0]) : String(role)
  return name === 'master' ? undefined : `Redis is a ${name === 'slave' ? 'replica' : name}, so writes fail (READONLY)`
}

async function storeProblem (client: RoleClient | RoleCluster | RoleSentinel, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<string>((resolve) => { timer = setTimeout(() => resolve(`Redis did not answer ROLE within ${timeoutMs} ms`), timeoutMs) })
  const asked = (async () => {
    if (!isCluster(client)) return notMaster(client)
    if (client.masters.length === 0) return 'the Redis Cluster has no master'
    for (const master of client.masters) {
      const problem = await notMaster(await client.nodeClient(master as never))
      if (problem !== undefined) return problem
    }
    return undefined
  })().catch((err: unknown) => `Redis is unreachable (${err instanceof Error ? `${err.name}: ${err.message}` : String(err)})`)
  try {
    return await Promise.race([asked, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Two routes for a load balancer, outside the section's prefix and left out of the request log:
 * - `GET /healthz` (liveness): 200 whenever the process answers.
 * - `GET /readyz` (readiness): 200 when the instance should get traffic; 503 from SIGTERM on, and while
 *   Redis (when sessions are kept there) is unreachable, too slow or not a master (a write would fail).
 * Only /readyz answers 503 for these reasons: every other route keeps its own answers (the section's
 * anonymous 302 needs no store), which @fastify/under-pressure's interval healthCheck would replace
 * with a 503 on every route.
 */
export function healthRoutes (app: FastifyInstance, options: HealthOptions): void {
  const timeoutMs = options.timeoutMs ?? 2000
  let lastProblem: string | undefined
  const quiet = { logLevel: 'warn' as const }
  app.get(LIVENESS_PATH, quiet, async (_request, reply) => {
    reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8')
    return 'ok\n'
  })
  app.get(READINESS_PATH, quiet, async (_request, reply) => {
    reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8')
    const problem = options.draining()
      ? 'shutting down'
      : options.redis === undefined ? undefined : await storeProblem(options.redis, timeoutMs)
    // Logged when the answer changes, not on every probe (app.log: the route's own logger is at warn).
    if (problem !== lastProblem) {
      if (problem === undefined) app.log.info('ready again: /readyz answers 200')
      else app.log.warn({ reason: problem }, 'not ready: /readyz answers 503')
      lastProblem = problem
    }
    if (problem === undefined) return 'ready\n'
    reply.code(503).header('retry-after', '5')
    return `not ready: ${problem}\n`
  })
}
