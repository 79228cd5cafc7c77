// The SVG chart of a run: capacity against bare Fastify per scenario, with the targets as lines, and
// the signed-in breakdown as one stacked bar.
import { escapeXml, fmt } from './format.mjs'
import { TARGETS } from './targets.mjs'

const W = 860
const LEFT = 60
const COLORS = { limit: '#4d4d4d', reference: '#5b8bd9', express: '#d98b5b', ours: '#3a9a5b' }
const EXTRA_COLORS = ['#9ac9a8', '#b58bd9', '#d9c45b', '#5bc4d9']
const STEP_COLORS = ['#4d4d4d', '#5b8bd9', '#8fbf6f', '#e0a84a', '#c76b6b', '#3a9a5b']
const ROW = 20

/**
 * `servers`: the run's servers (for labels and order); `rows`: stats.summarise; `steps` and `referenceUs`: stats.breakdown.
 * The variants measured for the breakdown appear in its bar, not among the servers.
 */
export function svgChart ({ meta, servers, scenarios, rows, steps, referenceUs }) {
  const shown = servers.filter((s) => s.scenarios === undefined && rows.some((r) => r.server === s.name))
  let extra = 0
  const color = (name) => COLORS[name] ?? EXTRA_COLORS[extra++ % EXTRA_COLORS.length]
  const colorOf = new Map(shown.map((s) => [s.name, color(s.name)]))
  const parts = []
  const top = 70
  const plotH = 190
  const legendY = top + plotH + 34
  const legend = layoutLegend(shown)
  let H = legendY + legend.rows * 18 + 10
  const breakdownY = H + 10
  if (steps.length > 1) H = breakdownY + 24 + steps.length * ROW + 24

  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`)
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`)
  parts.push(`<text x="${LEFT}" y="18" font-size="14" font-weight="bold">Against bare Fastify: bars = capacity from server CPU per request, ticks = measured req/s</text>`)
  parts.push(`<text x="${LEFT}" y="34" fill="#555">${escapeXml(`${meta.date}, ${meta.machineShort}; medians of per-round ratios; dashed lines: the targets`)}</text>`)

  const max = Math.max(1, ...rows.filter((r) => colorOf.has(r.server)).map((r) => Math.max(r.vs.limit?.rps ?? 0, r.vs.limit?.cpu ?? 0)))
  const y = (v) => top + plotH - (Math.min(v, max) / max) * plotH
  for (let v = 0; v <= max; v += 0.25) {
    parts.push(`<line x1="${LEFT}" x2="${W - 20}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${LEFT - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}×</text>`)
  }
  const groupW = (W - LEFT - 20) / scenarios.length
  const barW = Math.min(48, (groupW - 140) / Math.max(1, shown.length))
  scenarios.forEach((scenario, g) => {
    const x0 = LEFT + g * groupW + 20
    const mine = shown.map((s) => rows.find((r) => r.scenario === scenario.name && r.server === s.name)).filter(Boolean)
    mine.forEach((r, i) => {
      const x = x0 + i * (barW + 6)
      const v = r.vs.limit?.cpu ?? 0
      const t = r.vs.limit?.rps ?? 0
      parts.push(`<rect x="${x}" y="${y(v)}" width="${barW}" height="${top + plotH - y(v)}" fill="${colorOf.get(r.server)}"><title>${escapeXml(`${r.server}: ${v.toFixed(2)}× by CPU per request, ${t.toFixed(2)}× by req/s (${Math.round(r.rps)} req/s)`)}</title></rect>`)
      parts.push(`<text x="${x + barW / 2}" y="${top + plotH - 4}" text-anchor="middle" fill="#fff" font-weight="bold" font-size="11">${v.toFixed(2)}</text>`)
      parts.push(`<line x1="${x - 2}" x2="${x + barW + 2}" y1="${y(t)}" y2="${y(t)}" stroke="#000" stroke-width="2"/><text x="${x + barW / 2}" y="${y(t) - 4}" text-anchor="middle" font-size="10">${t.toFixed(2)}</text>`)
    })
    const x1 = x0 - 6
    const x2 = x0 + mine.length * (barW + 6)
    // Each target as the capacity against bare Fastify it asks of ours: min × the peer's own. Labels
    // of lines close together are moved apart.
    let lastLabelY = -Infinity
    const lines = TARGETS.filter((t) => t.scenario === scenario.name).flatMap((target) => {
      const peer = rows.find((r) => r.scenario === scenario.name && r.server === target.peer)
      // Without the limit in the run there is no scale to draw a peer's target on.
      if (peer === undefined || (target.peer !== 'limit' && peer.vs.limit === undefined)) return []
      return [{ target, at: target.min * (target.peer === 'limit' ? 1 : peer.vs.limit.cpu) }]
    }).sort((a, b) => b.at - a.at)
    for (const { target, at } of lines) {
      const labelY = Math.max(y(at) + 4, lastLabelY + 12)
      lastLabelY = labelY
      parts.push(`<line x1="${x1}" x2="${x2}" y1="${y(at)}" y2="${y(at)}" stroke="#c00" stroke-dasharray="4 3"/>`)
      parts.push(`<text x="${x2 + 2}" y="${labelY}" fill="#c00" font-size="10">${escapeXml(`${target.min}× ${target.peer}`)}</text>`)
    }
    parts.push(`<text x="${x0 + (mine.length * (barW + 6)) / 2}" y="${top + plotH + 18}" text-anchor="middle">${escapeXml(scenario.label)}</text>`)
  })
  for (const { s, x, row } of legend.items) {
    const ly = legendY + row * 18
    parts.push(`<rect x="${x}" y="${ly}" width="12" height="12" fill="${colorOf.get(s.name)}"/><text x="${x + 16}" y="${ly + 10}" font-size="11">${escapeXml(s.label)}</text>`)
  }
  if (steps.length > 1) parts.push(...breakdownBars(steps, breakdownY, referenceUs))
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}

/** The servers' legend, in rows that fit the width. */
function layoutLegend (shown) {
  const items = []
  let x = 20
  let row = 0
  for (const s of shown) {
    const width = 30 + s.label.length * 6
    if (x + width > W - 10) {
      x = 20
      row++
    }
    items.push({ s, x, row })
    x += width
  }
  return { items, rows: row + 1 }
}

/**
 * The breakdown's servers as bars of signed-in CPU µs per request, one step per row, each labelled with
 * what it adds; the dashed line is the most ours may use for the 0.6× reference target.
 */
function breakdownBars (steps, y0, referenceUs) {
  const parts = []
  const ceiling = referenceUs === undefined ? undefined : referenceUs / 0.6
  const labelW = 230
  const plotW = W - LEFT - labelW - 80
  const scale = plotW / Math.max(...steps.map((s) => s.cpuUsPerReq), ceiling ?? 0)
  const x0 = LEFT + labelW
  parts.push(`<text x="${LEFT}" y="${y0 + 12}" font-size="13" font-weight="bold">Signed-in page: server CPU µs per request, each step adding one thing</text>`)
  steps.forEach((step, i) => {
    const y = y0 + 24 + i * ROW
    const w = step.cpuUsPerReq * scale
    const added = step.addedUs === undefined ? '' : ` (${step.addedUs >= 0 ? '+' : ''}${fmt(step.addedUs, 1)})`
    parts.push(`<text x="${x0 - 6}" y="${y + 12}" text-anchor="end" font-size="11">${escapeXml(step.server)}</text>`)
    parts.push(`<rect x="${x0}" y="${y}" width="${w}" height="${ROW - 4}" fill="${STEP_COLORS[i % STEP_COLORS.length]}"><title>${escapeXml(step.adds)}</title></rect>`)
    parts.push(`<text x="${x0 + w + 4}" y="${y + 12}" font-size="11">${escapeXml(`${fmt(step.cpuUsPerReq, 1)} µs${added}`)}</text>`)
  })
  if (ceiling !== undefined) {
    const x = x0 + ceiling * scale
    const bottom = y0 + 24 + steps.length * ROW
    parts.push(`<line x1="${x}" x2="${x}" y1="${y0 + 20}" y2="${bottom}" stroke="#c00" stroke-dasharray="4 3"/>`)
    parts.push(`<text x="${x}" y="${bottom + 12}" text-anchor="middle" fill="#c00" font-size="10">${escapeXml(`0.6× reference: ${fmt(ceiling, 1)} µs`)}</text>`)
  }
  return parts
}
