import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { FindMember, FoundMember, Member } from '../../lib/index.js'
import { RedisSessionStore } from '../../lib/stores/redis/index.js'
import { buildTestApp, postLogin, sessionCookie } from '../helpers/app.js'
import { authenticate, PEOPLE } from '../helpers/members.js'
import { REDIS_URL, requireRedis, uniquePrefix, deleteKeys, listKeys, connectedClient } from '../helpers/redis.js'

// findMember with sessions in Redis and two instances, each with its own cache (as two processes have):
// a leaver is refused on both within the cache time, and their session is gone from Redis.

const STAFF_ROOM = '/schools/resources/resources/staff-room/'
const TTL_MS = 40

async function instance (t: Test, prefix: string, findMember: FindMember): Promise<FastifyInstance> {
  const client = await connectedClient(t, REDIS_URL!)
  const { app } = await buildTestApp({
    session: { store: new RedisSessionStore(client, { prefix: `${prefix}sess:` }), saveUninitialized: false, cookie: { secure: false, maxAge: 60_000 } },
    plugin: { authenticate, findMember, findMemberCache: { ttlMs: TTL_MS } }
  })
  t.teardown(() => app.close())
  return app
}

if (requireRedis(t)) {
  t.test('two instances, one Redis: a teacher removed from staff, then deleted, is refused on both', async (t) => {
    const prefix = uniquePrefix('find-member')
    const admin = await connectedClient(t, REDIS_URL!)
    t.teardown(() => deleteKeys(admin, prefix))
    const members = new Map<Member['id'], FoundMember>([['t-1', { id: 't-1', name: 'Ada Teacher', groups: ['staff'] }]])
    const asked: string[] = []
    const directory = (name: string): FindMember => async (id) => {
      asked.push(name)
      return members.get(id) ?? null
    }
    const a = await instance(t, prefix, directory('A'))
    const b = await instance(t, prefix, directory('B'))

    const res = await postLogin(a, { email: 'teacher@example.org', password: PEOPLE['teacher@example.org'].password })
    t.equal(res.statusCode, 303)
    const cookie = sessionCookie(res)!
    const [key] = await listKeys(admin, `${prefix}sess:`)
    t.same(JSON.parse((await admin.get(key))!).member, { id: 't-1' }, 'Redis holds the id only')
    for (const app of [a, b]) t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie } })).statusCode, 200)
    // Not how many times (the cache time is tiny here): only that each instance asks for itself.
    t.equal(asked[0], 'A', 'A asked at sign-in')
    t.ok(asked.includes('B'), 'B asked for itself: each instance has its own cache')

    members.set('t-1', { id: 't-1', name: 'Ada Teacher', groups: [] })
    await sleep(TTL_MS + 10)
    for (const app of [a, b]) t.equal((await app.inject({ url: STAFF_ROOM, headers: { cookie } })).statusCode, 403, 'out of staff on both')

    members.delete('t-1')
    await sleep(TTL_MS + 10)
    const onB = await b.inject({ url: STAFF_ROOM, headers: { cookie } })
    t.equal(onB.statusCode, 302, 'B sends the leaver to sign in')
    t.equal(await admin.exists(key), 0, 'and the session is gone from Redis')
    const onA = await a.inject({ url: '/schools/resources/resources/maths/', headers: { cookie } })
    t.equal(onA.statusCode, 302, 'A too')
  })
}
