// Runs one of the hand-wired peers (bench/peers/, copied unchanged from the definition) for the
// runner: the peer file is imported as is; this wrapper only adds what the runner asks of every server
// (the 'ready' message once it listens, stats over IPC, a clean exit on SIGTERM).
// HAND_WIRED: fastify-full or express-full. PUBLIC_ORIGIN: the origin of the login redirect.
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { answerStats, host, port, ready } from './common.mjs'

const PEERS = new Set(['fastify-full', 'express-full'])
const peer = process.env.HAND_WIRED
if (!PEERS.has(peer)) throw new Error(`HAND_WIRED=${peer}: not one of ${[...PEERS].join(', ')}`)
await import(`../peers/${peer}.mjs`)

// express-full does not wait for its listen: poll the port until it accepts a connection.
const listening = () => new Promise((resolve) => {
  const socket = connect(port, host)
  socket.once('connect', () => { socket.destroy(); resolve(true) })
  socket.once('error', () => resolve(false))
})
while (!(await listening())) await sleep(20)
answerStats()
ready(`http://${host}:${port}`)
