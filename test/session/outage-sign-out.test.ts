import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { OUTAGE_BREAKER, outageSignOutTests } from '../helpers/outage-sign-out.js'
import { FakeRedis } from '../helpers/fake-redis.js'

// The sign-out during an outage (test/helpers/outage-sign-out.ts) in process: the Redis stores on a
// stand-in whose commands are never answered while it is down, so each ends in the stores' own timeout,
// as with a paused Redis (test/redis/outage-sign-out.test.ts).

outageSignOutTests(t, async () => {
  const redis = new FakeRedis()
  return {
    client: redis,
    async stop () { redis.hang = true },
    down: () => redis.hang,
    async back () {
      redis.hang = false
      await sleep(OUTAGE_BREAKER.openMs)
    }
  }
})
