import t from 'tap'
import { outageSignOutTests } from '../helpers/outage-sign-out.js'
import { requireRedis, connectedClient, ThrowawayRedis } from '../helpers/redis.js'

// The sign-out during an outage (test/helpers/outage-sign-out.ts) against a real redis-server of our own,
// held with CLIENT PAUSE: the session reads time out in node-redis's own queue.

const PAUSE_MS = 2000

if (requireRedis(t)) {
  outageSignOutTests(t, async (t) => {
    const redis = await ThrowawayRedis.start(t)
    const client = await connectedClient(t, redis.url)
    let until = 0
    return {
      client,
      async stop () {
        await redis.pause(PAUSE_MS)
        until = Date.now() + PAUSE_MS
      },
      down: () => Date.now() < until,
      // Past the pause, the breaker (OUTAGE_BREAKER.openMs) has long let the stores try again.
      back: () => new Promise((resolve) => setTimeout(resolve, Math.max(0, until + 100 - Date.now())))
    }
  })
}
