// The issues' speed targets for our example server, each judged on a run's figures. CPU targets are ratios
// of server CPU per request (see stats.mjs): the capacity with the core to itself. The memory target is
// a difference of resident memory right after start (the median over the run's fresh processes).
export const TARGETS = [
  // Issue 23: against bare Fastify and the hand-wired peers of the same page (bench/peers/).
  { scenario: 'anonymous', peer: 'limit', min: 0.9, text: 'anonymous redirect (example server as `npm start` runs it) at least 0.9× bare Fastify in CPU per request' },
  { scenario: 'anonymous', peer: 'fastify-full', min: 4, text: 'anonymous redirect at least 4× hand-wired Fastify (CPU per request)' },
  { scenario: 'signed-in', peer: 'fastify-full', min: 1.25, text: 'signed-in page at least 1.25× hand-wired Fastify (CPU per request)' },
  { scenario: 'signed-in', peer: 'express-full', min: 2, text: 'signed-in page at least 2× hand-wired Express (CPU per request)' },
  { kind: 'rss', peer: 'fastify-full', maxMiB: 15, text: 'RSS right after start within 15 MiB of hand-wired Fastify' },
  // Issue 11: against the small-page peers.
  { scenario: 'signed-in', peer: 'reference', min: 0.6, text: 'signed-in page at least 0.6× the Fastify + @fastify/session reference, small page (CPU per request)' },
  { scenario: 'anonymous', peer: 'express', min: 5, text: 'at least 5× Express (small page) on the anonymous route (CPU per request)' },
  { scenario: 'signed-in', peer: 'express', min: 5, text: 'at least 5× Express (small page) on the signed-in route (CPU per request)' }
]

/**
 * Each target with the figure of `server` (ours, or another build of it) and whether it is met; figure
 * undefined when a server was not measured. CPU targets: the median per-round ratio (× the peer, req/s
 * ratio in rpsFigure). The RSS target: MiB over the peer (medians of RSS after start over both scenarios).
 */
export function judgeTargets (rows, server = 'ours') {
  return TARGETS.map((target) => {
    if (target.kind === 'rss') {
      const mine = rssAfterStart(rows, server)
      const peer = rssAfterStart(rows, target.peer)
      const figure = mine === undefined || peer === undefined ? undefined : mine - peer
      return { ...target, server, figure, mine, peerMiB: peer, met: figure === undefined ? undefined : figure <= target.maxMiB }
    }
    const row = rows.find((r) => r.scenario === target.scenario && r.server === server)
    const figure = row?.vs[target.peer]?.cpu
    return { ...target, server, figure, rpsFigure: row?.vs[target.peer]?.rps, met: figure === undefined ? undefined : figure >= target.min }
  })
}

function rssAfterStart (rows, server) {
  const xs = rows.filter((r) => r.server === server && Number.isFinite(r.rssAfterStartMiB)).map((r) => r.rssAfterStartMiB)
  if (xs.length === 0) return undefined
  return xs.reduce((a, b) => a + b, 0) / xs.length
}
