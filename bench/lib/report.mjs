// The report of a run: Markdown (docs/performance.md between its generated-part markers, keeping the
// hand-written part) and the run's data as JSON (which --from-json renders again; not in git).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fmt, percent } from './format.mjs'
import { breakdown, summarise } from './stats.mjs'
import { judgeTargets } from './targets.mjs'

export const START_MARKER = '<!-- bench:generated:start (written by bench/run.mjs; edits between these markers are lost) -->'
export const END_MARKER = '<!-- bench:generated:end -->'

/**
 * Where a run's report goes: docs/performance.md and bench/results/performance.json, or with a name
 * bench/results/<name>.{md,json}, for runs that should not replace the published figures.
 */
export function reportPaths (root, name) {
  const results = join(root, 'bench', 'results')
  return { markdown: name === undefined ? join(root, 'docs', 'performance.md') : join(results, `${name}.md`), json: join(results, `${name ?? 'performance'}.json`) }
}

/** The run as saved: what was measured and with what (server labels included, so that it renders alone). */
export function runData ({ meta, servers, scenarios, records, memory, login, spray }) {
  return {
    meta,
    servers: servers.map(({ name, label, scenarios, extra, commit }) => ({ name, label, scenarios, extra, commit })),
    scenarios,
    records,
    memory,
    login,
    spray
  }
}

/** Writes the two files and resolves to the Markdown of the generated part. */
export function writeReport (data, paths) {
  const rows = summarise(data.records, data.servers, data.scenarios)
  const { steps, gapUs, referenceUs } = breakdown(rows)
  for (const path of Object.values(paths)) mkdirSync(dirname(path), { recursive: true })
  writeFileSync(paths.json, JSON.stringify({ ...data, rows }, null, 2) + '\n')
  const generated = markdown({ ...data, rows, steps, gapUs, referenceUs })
  writeFileSync(paths.markdown, keepHandWritten(paths.markdown, generated))
  return generated
}

/** The file with its generated part replaced; a file without the markers is refused, not overwritten. */
function keepHandWritten (path, generated) {
  const block = `${START_MARKER}\n${generated}\n${END_MARKER}`
  if (!existsSync(path)) return `# Performance\n\n${block}\n`
  const text = readFileSync(path, 'utf8')
  const i = text.indexOf(START_MARKER)
  const j = text.indexOf(END_MARKER)
  if (i === -1 || j < i) throw new Error(`${path} has no ${START_MARKER} ... ${END_MARKER} block; not overwriting it`)
  return text.slice(0, i) + block + text.slice(j + END_MARKER.length)
}

/** Digits for a target's figure: three where two would round it onto its threshold (0.598 is not 0.60). */
function digitsNear (t) {
  return t.min !== undefined && Math.abs(t.figure - t.min) < 0.005 ? 3 : 2
}

function markdown ({ meta, servers, scenarios, rows, memory, login, spray, steps, gapUs, referenceUs }) {
  const label = (name) => servers.find((s) => s.name === name)?.label ?? name
  // Ours and the other builds of it (--extra), judged and compared alike.
  const builds = ['ours', ...servers.filter((s) => s.extra).map((s) => s.name)]
  const out = []
  out.push(`## Latest run: ${meta.date}`)
  out.push('')
  out.push(`Written by \`${meta.command}\` (bench/README.md). ${meta.quick ? '**A quick smoke run** (one short round): the figures show that the bench works, not what the code costs; the published figures come from a full run. ' : ''}Run on ${meta.machine}; ${meta.pinning}.`)
  out.push('')

  out.push('### Targets')
  out.push('')
  out.push('Our example server as `npm start` runs it; every CPU figure is a ratio of server CPU per request (the capacity with the core to itself), measured req/s in brackets; the RSS figure is the difference of resident memory right after start (mean of the per-scenario medians over the run\'s fresh processes).')
  out.push('')
  const judged = builds.map((b) => judgeTargets(rows, b))
  // What the floors reach against the same peers: bare Fastify for the anonymous redirect, the floor
  // server for the signed-in page (bench/servers/floor.mjs). A target the floor misses, no server of the
  // same answer on the same plugins meets.
  const floors = { anonymous: judgeTargets(rows, 'limit'), 'signed-in': judgeTargets(rows, 'floor') }
  const floorCell = (target, i) => {
    const t = floors[target.scenario]?.[i]
    return t?.figure === undefined ? '' : `${fmt(t.figure, digitsNear(t))}× (${t.met ? 'meets it' : '**misses it**'})`
  }
  out.push(`| target | ${builds.map(label).join(' | ')} | what the floor reaches |`)
  out.push(`|---|${builds.map(() => '---').join('|')}|---|`)
  judged[0].forEach((target, i) => {
    const cells = judged.map((j) => {
      const t = j[i]
      if (t.figure === undefined) return 'not measured'
      if (t.kind === 'rss') return `${t.met ? '**met**' : '**missed**'}: ${t.figure >= 0 ? '+' : ''}${fmt(t.figure, 1)} MiB (${fmt(t.mine, 1)} against ${fmt(t.peerMiB, 1)})`
      return `${t.met ? '**met**' : '**missed**'}: ${fmt(t.figure, digitsNear(t))}× (${fmt(t.rpsFigure, 2)}×)`
    })
    out.push(`| ${target.text} | ${cells.join(' | ')} | ${floorCell(target, i)} |`)
  })
  out.push('')
  out.push('"What the floor reaches": the same ratio for the least a server of the same answer can spend, CPU only: bare Fastify\'s redirect for the anonymous targets; for the signed-in ones, Fastify + @fastify/cookie + @fastify/session sending our page and its headers as constants made at start (`floor`, bench/servers/floor.mjs). A server of that answer on those plugins can come level with its floor but not go below it, beyond the rounds\' spread (a few per cent either way): a target the floor misses is out of reach of every such server.')
  out.push('')

  out.push('### Figures')
  out.push('')
  out.push(`${meta.rounds} interleaved round${meta.rounds === 1 ? '' : 's'}, ${meta.duration} s measured per server and scenario after a ${meta.warmup} s warm-up, \`wrk -t1 -c${meta.connections}\`. Load average (1 min) at the start of each measured run: ${meta.loadRange}; CPU used by everything but the measured server during a run (wrk, and any other work on the machine): ${meta.otherCoresRange} cores. Medians over the rounds; ratios are taken per round, then the median. "× peer (CPU)" is the peer's server CPU per request over the server's.`)
  out.push('')
  for (const scenario of scenarios) {
    const mine = rows.filter((r) => r.scenario === scenario.name)
    if (mine.length === 0) continue
    out.push(`**${scenario.label}**`)
    out.push('')
    out.push('| server | req/s | CPU µs/req | p99 ms | bytes/response | RSS after start MiB | peak RSS MiB | × limit (CPU) | × reference (CPU) | × Express (CPU) | × hand-wired Fastify (CPU) | × hand-wired Express (CPU) | × limit (req/s) | CPU µs/req per round |')
    out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|')
    for (const r of mine) {
      out.push(`| ${label(r.server)} | ${fmt(r.rps, 0)} | ${fmt(r.cpuUsPerReq, 1)} | ${fmt(r.p99Ms, 2)} | ${fmt(r.bytesPerResponse, 0)} | ${fmt(r.rssAfterStartMiB, 1)} | ${fmt(r.peakRssMiB, 1)} | ${fmt(r.vs.limit?.cpu, 2)} | ${fmt(r.vs.reference?.cpu, 2)} | ${fmt(r.vs.express?.cpu, 2)} | ${fmt(r.vs['fastify-full']?.cpu, 2)} | ${fmt(r.vs['express-full']?.cpu, 2)} | ${fmt(r.vs.limit?.rps, 2)} | ${r.cpuPerRound.join(', ')} |`)
    }
    out.push('')
  }

  out.push(...breakdownSection({ steps, gapUs, referenceUs, label }))
  out.push(...beforeAfterSection({ rows, builds, label, scenarios }))
  out.push(...memorySection({ meta, memory, label }))
  out.push(...loginSection(login))
  out.push(...spraySection({ spray, label }))
  out.push(...methodSection(meta))
  return out.join('\n').trimEnd()
}

function breakdownSection ({ steps, gapUs, referenceUs, label }) {
  const out = ['### Where a signed-in page view goes', '']
  if (steps.length < 2) {
    return [...out, 'Not measured in this run (the breakdown needs the limit, the reference, ours and its `ours-*` variants; see `--only` and `--skip breakdown`).', '']
  }
  out.push('Each server adds one thing to the one above it, measured in the same rounds as the rest; the `ours-*` variants are the example server with section options that leave out what the later steps add (bench/servers/ours.mjs). The steps are differences of medians, so they add up to the whole; a step smaller than the run-to-run spread (see the rounds above) is noise.')
  out.push('')
  out.push('| server | what it adds | CPU µs/req | added µs | share of ours − reference |')
  out.push('|---|---|---:|---:|---:|')
  for (const step of steps) {
    out.push(`| ${label(step.server)} | ${step.adds} | ${fmt(step.cpuUsPerReq, 1)} | ${step.addedUs === undefined ? '' : `${step.addedUs >= 0 ? '+' : ''}${fmt(step.addedUs, 1)}`} | ${step.shareOfGap === undefined ? '' : percent(step.shareOfGap)} |`)
  }
  out.push('')
  if (gapUs !== undefined) {
    const allowed = referenceUs / 0.6
    out.push(`Ours − reference: ${fmt(gapUs, 1)} µs per page view. At 0.6× the reference, ours may use ${fmt(allowed, 1)} µs (the reference's ${fmt(referenceUs, 1)} µs / 0.6), a gap of ${fmt(allowed - referenceUs, 1)} µs; ${gapUs <= allowed - referenceUs ? `${fmt(allowed - referenceUs - gapUs, 1)} µs to spare` : `${fmt(gapUs - (allowed - referenceUs), 1)} µs over`}.`)
    out.push('')
  }
  return out
}

function beforeAfterSection ({ rows, builds, label, scenarios }) {
  const out = ['### Before and after', '']
  const others = builds.slice(1)
  if (others.length === 0) {
    return [...out, 'No other build was measured in this run. To compare, build one (`bench/build-before.sh <commit> <dir>`) and run with `--extra before=<dir>` (bench/README.md): both are then measured in the same interleaved rounds.', '']
  }
  out.push('Other builds of the example server, each started as its own `npm start` starts it, measured in the same interleaved rounds as the current one.')
  out.push('')
  for (const other of others) {
    out.push(`| scenario | CPU µs/req: ${label(other)} → ${label('ours')} | change | × limit (CPU) | × hand-wired Fastify (CPU) | × hand-wired Express (CPU) | × reference (CPU) | × Express (CPU) |`)
    out.push('|---|---|---:|---|---|---|---|---|')
    for (const scenario of scenarios) {
      const before = rows.find((r) => r.scenario === scenario.name && r.server === other)
      const after = rows.find((r) => r.scenario === scenario.name && r.server === 'ours')
      if (before === undefined || after === undefined) continue
      const pair = (peer) => `${fmt(before.vs[peer]?.cpu, 2)} → ${fmt(after.vs[peer]?.cpu, 2)}`
      const change = after.cpuUsPerReq / before.cpuUsPerReq - 1
      out.push(`| ${scenario.label} | ${fmt(before.cpuUsPerReq, 1)} → ${fmt(after.cpuUsPerReq, 1)} | ${change >= 0 ? '+' : ''}${fmt(change * 100, 1)}% | ${pair('limit')} | ${pair('fastify-full')} | ${pair('express-full')} | ${pair('reference')} | ${pair('express')} |`)
    }
    out.push('')
  }
  return out
}

function memorySection ({ meta, memory, label }) {
  if (memory === undefined || memory.length === 0) return []
  const out = ['### Memory: a flood of anonymous requests', '']
  for (const m of memory) {
    const who = m.server === 'ours' ? 'our example server' : `${label(m.server)}, for comparison`
    const extra = m.warnings === undefined ? '' : `, ${fmt(m.warnings, 0)} redirect-conflict warnings raised, all ${fmt(m.warningsInOutput, 0)} accounted for in its output, **${m.sessionsInStore} sessions** left in the store`
    out.push(`**${who}** (one process, wrk -c${meta.connections}): ${fmt(m.requests, 0)} anonymous requests${extra}. RSS after the first 10,000: ${fmt(m.rssAfter10kMiB, 1)} MiB; peak RSS (VmHWM) at the end: ${fmt(m.peakRssMiB, 1)} MiB (**+${fmt(m.growthMiB, 1)} MiB**); RSS at the end ${fmt(m.finalRssMiB, 1)} MiB.`)
    out.push('')
  }
  return out
}

function loginSection (login) {
  if (login === undefined) return []
  return ['### Login', '',
    `The example's scrypt, on libuv's thread pool: ${fmt(login.loginMedianMs, 1)} ms per login (median of ${login.loginsTimed}, one at a time), ${fmt(login.loginCpuMsPerLogin, 1)} ms of server CPU per login. With ${login.concurrentLogins} clients signing in continuously (${fmt(login.loginsPerSecondDuringProbe, 1)} logins/s; server not pinned for this part), a probe sending one anonymous request at a time got ${fmt(login.probeDuringLogins.count, 0)} answers, p50 ${fmt(login.probeDuringLogins.p50Ms, 2)} ms, p99 ${fmt(login.probeDuringLogins.p99Ms, 2)} ms, max ${fmt(login.probeDuringLogins.maxMs, 1)} ms (without logins: ${fmt(login.probeBaseline.count, 0)} answers, p50 ${fmt(login.probeBaseline.p50Ms, 2)} ms, p99 ${fmt(login.probeBaseline.p99Ms, 2)} ms, max ${fmt(login.probeBaseline.maxMs, 1)} ms). Server event-loop delay (monitorEventLoopDelay at 1 ms resolution, so 1 ms is the floor): p99 ${fmt(login.eventLoopDelayP99MsDuringLogins, 1)} ms, max ${fmt(login.eventLoopDelayMaxMsDuringLogins, 1)} ms during logins (without: ${fmt(login.eventLoopDelayP99MsBaseline, 1)} / ${fmt(login.eventLoopDelayMaxMsBaseline, 1)} ms).`,
    '']
}

function spraySection ({ spray, label }) {
  if (spray === undefined || spray.length === 0) return []
  const { attempts, usernames, addresses, perAddress } = spray[0].shape
  const ms = (p) => `p50 ${fmt(p.p50Ms, 1)} / p99 ${fmt(p.p99Ms, 1)} / max ${fmt(p.maxMs, 1)} ms (${fmt(p.count, 0)})`
  const statuses = (counts) => Object.entries(counts).map(([status, n]) => `${n} × ${status}`).join(', ')
  const out = ['### Password spray', '']
  out.push(`${attempts.toLocaleString('en')} wrong passwords over ${usernames} usernames from ${addresses} loopback addresses (${perAddress} connections each), with the example's own sign-in limits${spray[0].passwordWaiting === undefined || spray[0].passwordWaiting === 'default' ? '' : ` and a password line of ${spray[0].passwordWaiting} waiting places`}. Meanwhile a member downloads a protected PDF one request at a time, and real members sign in (login form and post, each from an address of its own) every 250 ms. Server not pinned. Latencies: p50 / p99 / max (count).`)
  out.push('')
  out.push('| server | spray: s, attempts/s, answers | download, quiet | download, during the spray | real sign-in, quiet | real sign-in, during | real sign-ins\' answers during | server event-loop delay during, p99 / max ms |')
  out.push('|---|---|---|---|---|---|---|---|')
  for (const r of spray) {
    const eld = r.eventLoopDelayMs === undefined ? 'not measured' : `${fmt(r.eventLoopDelayMs.p99, 1)} / ${fmt(r.eventLoopDelayMs.max, 1)}`
    out.push(`| ${label(r.server)} | ${fmt(r.spray.seconds, 1)} s, ${fmt(r.spray.perSecond, 0)}/s: ${statuses(r.spray.statuses)} | ${ms(r.baseline.download)} | ${ms(r.download)} | ${ms(r.baseline.signIn)} | ${ms(r.signIn)} | ${statuses(r.signIn.statuses)} | ${eld} |`)
  }
  out.push('')
  return out
}

function methodSection (meta) {
  return ['### Method', '',
    '- **Servers** (bench/servers/): *limit*: bare Fastify 5, no cookie or session plugin; the category route answers `reply.redirect(loginUrl)` without a Cookie header and a small HTML page with one. *reference*: Fastify + `@fastify/cookie` + `@fastify/session` (memory store, `saveUninitialized: false`, `rolling: false`) with an `onRequest` hook that redirects when no member is in the session, and the same small page without security headers. *Express*: Express 5 + express-session (memory store, same settings) + connect-ensure-login. *ours*: examples/app.ts (`buildApp`) with its real catalog, pages, session wiring and scrypt sign-in, started with the Node flags of `npm start` ' +
      `(\`node ${meta.startFlags}\`), logging at \`${meta.oursLogLevel}\` (the peers at \`warn\`); the per-address sign-in limit is off so that the login probe can sign in continuously. The \`ours-*\` breakdown variants and \`--extra\` builds are the same server file (bench/lib/servers.mjs).`,
    '- **Checked before and after every measurement** (bench/lib/checks.mjs): an anonymous `GET /schools/resources/resources/maths/` must be a 302 to exactly `https://www.example.org/Security/login?BackURL=%2Fschools%2Fresources%2Fresources%2Fmaths%2F` with no cookie; a forged session cookie must get the same redirect; after sign-in the page (200, HTML, the category and the member\'s name) is served twice; the store holds only the sessions of those sign-ins, also after the anonymous load. For our servers, every redirect-conflict warning raised (the server counts its `\'warning\'` events) must be found in its output when it stops. A wrong answer or a warning not accounted for stops the bench.',
    '- **Load** (bench/lib/scenarios.mjs, bench/lib/wrk.mjs): a fresh process per server, scenario and round, started one after another, the order rotated each round. Servers pinned to CPU 0, wrk and the runner to the last CPU, with `taskset`. CPU time is the server\'s utime + stime (all threads) from /proc over the measured run, divided by the requests wrk completed; p99 and bytes from wrk; peak RSS is the fresh process\'s VmHWM.',
    '- **Flood**: anonymous requests against one process of ours (and of the limit, the same way): the first 10,000 with wrk stopped after exactly 10,000 responses, then wrk until the count; the store is read over IPC and RSS sampled from /proc.',
    '- **Login**: sign-ins one at a time (latency, server CPU per login), then a probe sending one anonymous request at a time, without and with 4 clients signing in continuously; the server reports its event-loop delay. Not pinned: the hashes run on libuv\'s thread pool.',
    '']
}
