// The speed targets for our example server, each judged on a run's figures. All are ratios of
// server CPU per request (see stats.mjs): the capacity with the core to itself.
export const TARGETS = [
  { scenario: 'anonymous', peer: 'limit', min: 0.75, text: 'anonymous redirect (example server as `npm start` runs it) at least 0.75× bare Fastify in CPU per request' },
  { scenario: 'signed-in', peer: 'reference', min: 0.6, text: 'signed-in page at least 0.6× the Fastify + @fastify/session reference (CPU per request)' },
  { scenario: 'anonymous', peer: 'express', min: 5, text: 'at least 5× Express on the anonymous route (CPU per request)' },
  { scenario: 'signed-in', peer: 'express', min: 5, text: 'at least 5× Express on the signed-in route (CPU per request)' }
]

/** Each target with the figure of `server` (ours, or another build of it) and whether it is met; figure undefined when a server was not measured. */
export function judgeTargets (rows, server = 'ours') {
  return TARGETS.map((target) => {
    const row = rows.find((r) => r.scenario === target.scenario && r.server === server)
    const figure = row?.vs[target.peer]?.cpu
    return { ...target, server, figure, rpsFigure: row?.vs[target.peer]?.rps, met: figure === undefined ? undefined : figure >= target.min }
  })
}
