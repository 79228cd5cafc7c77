import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { RedisAttemptStore, RedisSessionStore, type RedisCommandClient, type RedisSessionStoreOptions } from '../../lib/stores/redis/index.js'
import { buildTestApp, postLogin, sessionCookie, TEACHER } from './app.js'
import { uniquePrefix } from './redis.js'
import { SENTINEL_NAME, SentinelSet } from './redis-topology.js'
import { createSentinelClient } from '../../examples/redis.js'

// The section on a Sentinel or Cluster client, and a scripted population of sign-ins and page views to
// run across a failover (test/redis/sentinel.test.ts, cluster.test.ts).

export const MATHS = '/schools/resources/resources/maths/'

export async function topologyApp (t: Test, client: RedisCommandClient, session: RedisSessionStoreOptions = {}) {
  const prefix = uniquePrefix('topology')
  const attempts = new RedisAttemptStore(client, { prefix: `${prefix}attempts:`, timeoutMs: 1000 })
  const { app } = await buildTestApp({
    session: { store: new RedisSessionStore(client, { prefix: `${prefix}sess:`, timeoutMs: 1000, ...session }), saveUninitialized: false, cookie: { secure: false } },
    // The population signs one member in hundreds of times a second, 503s included, which the bound on
    // new sessions per member would soon refuse for the rest of the minute; that bound is not what these
    // failovers test (test/sign-in/new-sessions.test.ts does), so it is set out of reach here.
    plugin: { lockout: { store: attempts, maxAttempts: 3, maxNewSessionsPerMinute: 1_000_000 }, loginRateLimit: false }
  })
  t.teardown(() => app.close())
  return { app, attempts, prefix }
}

export interface Tally {
  /** Status counts of sign-ins and of members' pages. */
  signIns: Map<number, number>
  pages: Map<number, number>
  /** The session cookie of every sign-in answered 303. */
  cookies: string[]
  /** Milliseconds from the first 503 to the last one, for the FIGURES comments. */
  outageMs: number
}

const count = (map: Map<number, number>, status: number) => map.set(status, (map.get(status) ?? 0) + 1)

/**
 * `workers` visitors in parallel, each signing in and opening a page, again and again until `stop`
 * resolves (then each finishes its round).
 */
export async function population (app: FastifyInstance, stop: Promise<unknown>, workers = 4): Promise<Tally> {
  const tally: Tally = { signIns: new Map(), pages: new Map(), cookies: [], outageMs: 0 }
  const state = { stopped: false, first503: 0 }
  stop.finally(() => { state.stopped = true }).catch(() => {})
  await Promise.all(Array.from({ length: workers }, async () => {
    while (!state.stopped) {
      const res = await postLogin(app, TEACHER)
      count(tally.signIns, res.statusCode)
      if (res.statusCode === 503) {
        state.first503 ||= Date.now()
        tally.outageMs = Date.now() - state.first503
      }
      const cookie = sessionCookie(res)
      if (res.statusCode === 303 && cookie !== undefined) {
        tally.cookies.push(cookie)
        count(tally.pages, (await app.inject({ url: MATHS, headers: { cookie } })).statusCode)
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }))
  return tally
}

/** Statuses as `303 x 12, 503 x 3`, for the FIGURES comments. */
export function statuses (map: Map<number, number>): string {
  return [...map].sort(([a], [b]) => a - b).map(([status, n]) => `${status} x ${n}`).join(', ') || 'none'
}

/** What the cookies get on a member's page now: 200 still signed in, 302 (to the login page) signed out. */
export async function later (app: FastifyInstance, cookies: string[]): Promise<Map<number, number>> {
  const seen = new Map<number, number>()
  for (const cookie of cookies) count(seen, (await app.inject({ url: MATHS, headers: { cookie } })).statusCode)
  return seen
}

/**
 * A Sentinel set of our own with the section on the example's Sentinel client. One replica, and every
 * session write waits for it: a write that only some replicas have can be lost (docs/redis.md: two
 * replicas with waitForReplicas 1 lost 25 of 489 sign-ins in a planned failover).
 */
export async function sentinelApp (t: Test) {
  const set = await SentinelSet.start(t)
  const client = createSentinelClient(set.sentinelNodes, SENTINEL_NAME)
  const errors: Error[] = []
  client.on('error', (err: Error) => { errors.push(err) })
  await client.connect()
  t.teardown(() => client.destroy())
  return { set, errors, ...await topologyApp(t, client, { waitForReplicas: { replicas: 1, timeoutMs: 1000 } }) }
}
