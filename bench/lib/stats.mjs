// From the measured records (one per round, scenario and server) to the figures of the report: medians
// over the rounds, ratios to the peers taken within each round (same conditions) and then the median,
// and the signed-in breakdown.
import { BREAKDOWN } from './servers.mjs'

export const PEERS = ['limit', 'reference', 'express', 'fastify-full', 'express-full']

export function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * One row per scenario and server measured in it. `vs[peer].cpu` is the peer's server CPU per request
 * over the server's: the throughput ratio the two would reach with their core to themselves, steadier
 * than `vs[peer].rps`, the measured req/s ratio, when other work shares the machine.
 */
export function summarise (records, servers, scenarios) {
  const rows = []
  for (const scenario of scenarios) {
    for (const server of servers) {
      const mine = records.filter((r) => r.scenario === scenario.name && r.server === server.name)
      if (mine.length === 0) continue
      const vs = {}
      for (const peer of PEERS) {
        const rps = perRound(records, mine, peer, (r, o) => r.rps / o.rps)
        const cpu = perRound(records, mine, peer, (r, o) => o.cpuUsPerReq / r.cpuUsPerReq)
        if (rps !== undefined) vs[peer] = { rps, cpu }
      }
      rows.push({
        scenario: scenario.name,
        server: server.name,
        rounds: mine.length,
        rps: median(mine.map((r) => r.rps)),
        cpuUsPerReq: median(mine.map((r) => r.cpuUsPerReq)),
        p99Ms: median(mine.map((r) => r.p99Ms)),
        peakRssMiB: median(mine.map((r) => r.peakRssMiB)),
        rssAfterStartMiB: median(mine.map((r) => r.rssAfterStartMiB ?? NaN)),
        bytesPerResponse: median(mine.map((r) => r.bytesPerResponse ?? NaN)),
        vs,
        rpsPerRound: mine.map((r) => Math.round(r.rps)),
        cpuPerRound: mine.map((r) => Math.round(r.cpuUsPerReq * 10) / 10)
      })
    }
  }
  return rows
}

/** The median over the rounds of `f(record, peer's record of the same round)`, undefined without the peer. */
function perRound (records, mine, peer, f) {
  const ratios = []
  for (const r of mine) {
    const other = records.find((o) => o.round === r.round && o.scenario === r.scenario && o.server === peer)
    if (other !== undefined) ratios.push(f(r, other))
  }
  return ratios.length === 0 ? undefined : median(ratios)
}

/**
 * The signed-in breakdown: the steps of BREAKDOWN that were measured, each with the CPU per request it
 * adds to the step before (differences of the medians, so that they add up to the whole) and its share
 * of ours' gap to the reference. A step whose predecessor was not measured adds both steps' work.
 */
export function breakdown (rows) {
  const cpu = new Map(rows.filter((r) => r.scenario === 'signed-in').map((r) => [r.server, r.cpuUsPerReq]))
  const reference = cpu.get('reference')
  const gap = reference === undefined || !cpu.has('ours') ? undefined : cpu.get('ours') - reference
  const afterReference = (server) => BREAKDOWN.findIndex((s) => s.server === server) > BREAKDOWN.findIndex((s) => s.server === 'reference')
  const steps = []
  let pending = []
  let previous
  for (const step of BREAKDOWN) {
    pending.push(step.adds)
    if (!cpu.has(step.server)) continue
    const us = cpu.get(step.server)
    const addedUs = previous === undefined ? undefined : us - previous
    steps.push({
      server: step.server,
      adds: pending.join('; '),
      cpuUsPerReq: us,
      addedUs,
      shareOfGap: gap !== undefined && afterReference(step.server) ? addedUs / gap : undefined
    })
    pending = []
    previous = us
  }
  return { steps, gapUs: gap, referenceUs: reference }
}
