// Which servers the bench knows, what each must answer, and how each is started (bench/servers/*.mjs).
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { startEnv, startFlags, warningOutputFor } from './npm-start-flags.mjs'

export const BASE_URL = 'https://www.example.org'
export const CATEGORY_PATH = '/schools/resources/resources/maths/'

// What a signed-in member's page must contain: the peers' small page, or ours (category, a resource, the member).
const SMALL_PAGE = /<p>Signed in as Demo Teacher<\/p><h1>maths<\/h1>/
// Ours, and the hand-wired peers' (our maths page, bench/peers/page-template.html, with the member's name).
const OUR_PAGE = /<h1>Mathematics<\/h1>[\s\S]*Fraction wall[\s\S]*Signed in as <strong>Demo Teacher<\/strong>|Signed in as <strong>Demo Teacher<\/strong>[\s\S]*<h1>Mathematics<\/h1>[\s\S]*Fraction wall/

/**
 * The steps from bare Fastify to our example server as shipped, for the signed-in breakdown: each server
 * adds one thing to the one before it. The `ours-*` variants are the example server (examples/app.ts)
 * with section options that leave out what the later steps add (bench/servers/ours.mjs, OURS_VARIANT).
 */
export const BREAKDOWN = [
  { server: 'limit', adds: 'bare Fastify: route, small page' },
  { server: 'reference', adds: '@fastify/cookie + @fastify/session (the reference)' },
  { server: 'ours-small-page', adds: "the section: access guard, catalog lookup, content negotiation, Cache-Control/Vary, redirectOnce, the example's session wiring" },
  { server: 'ours-no-headers', adds: "page rendering: our category page (layout, filters, resource list) in place of the reference's small page" },
  { server: 'ours-no-csrf', adds: "security headers (helmet's, as the section sets them)" },
  { server: 'ours', adds: 'CSRF token in the logout form (sign-in routes on), i.e. ours as shipped' }
]

/**
 * The servers of a run, in table order. `root`: this checkout (its package.json gives our server's Node
 * flags); `extras`: [{ name, dir }] other builds of our example server to measure in the same run.
 */
export function benchServers ({ root, breakdown = true, extras = [] }) {
  const flags = startFlags(root)
  // As `npm start` runs it: Node's flags from package.json (the redirect-conflict warning is raised for
  // every anonymous request but, with today's flags, not printed by Node) and the example's conflict log.
  // warningOutput says where the runner finds every warning accounted for.
  const ours = { name: 'ours', label: 'fastify-schools-resources', file: 'ours.mjs', page: OUR_PAGE, sessions: true, cookieAware: true, warns: true, warningOutput: warningOutputFor(flags), execArgv: flags, env: startEnv(root) }
  const servers = [
    { name: 'limit', label: 'bare Fastify (limit)', file: 'limit.mjs', page: SMALL_PAGE, sessions: false, cookieAware: false },
    { name: 'reference', label: 'Fastify + @fastify/session (reference)', file: 'reference.mjs', page: SMALL_PAGE, sessions: true, cookieAware: true },
    { name: 'express', label: 'Express 5 + express-session', file: 'express.mjs', page: SMALL_PAGE, sessions: true, cookieAware: true },
    // The hand-wired peers of the same signed-in page (bench/peers/, as issue 23 defines them): our own
    // category page as a template, the same headers and CSRF mode. Their sign-in is a bare POST (204) that
    // sets the session and CSRF cookies; their stores are not counted (the peer files stay unchanged).
    handWired('fastify-full', 'hand-wired Fastify (@fastify/session + helmet + csrf-protection)'),
    handWired('express-full', 'hand-wired Express (express-session + helmet + csrf-csrf)'),
    // The least a Fastify app on @fastify/session can spend on the same signed-in answer: the reference
    // sending that page and its headers as constants (bench/servers/floor.mjs). Signed in only.
    { name: 'floor', label: 'the floor: the reference sending our page and headers as constants', file: 'floor.mjs', page: OUR_PAGE, sessions: true, cookieAware: true, scenarios: ['signed-in'] },
    ours,
    // The example as it ships, with its language switch (a host layout: no category page cache). Signed in only.
    { ...ours, name: 'ours-language-switch', label: 'ours with the example\'s language switch', env: { ...ours.env, OURS_LANGUAGE_SWITCH: '1' }, scenarios: ['signed-in'] }
  ]
  if (breakdown) {
    // Measured on the signed-in route only: the breakdown is of a member's page view.
    const variant = (name, label, page) => ({ ...ours, name: `ours-${name}`, label, page, env: { OURS_VARIANT: name }, scenarios: ['signed-in'] })
    servers.push(
      variant('small-page', 'ours: small page, no headers, no CSRF token', SMALL_PAGE),
      variant('no-headers', 'ours: our page, no headers, no CSRF token', OUR_PAGE),
      variant('no-csrf', 'ours: our page and headers, no CSRF token', OUR_PAGE)
    )
  }
  for (const { name, dir } of extras) {
    // Another build of this repository (bench/build-before.sh), started as that build's own `npm start` starts it.
    const path = resolve(dir)
    if (!existsSync(join(path, 'dist', 'examples', 'app.js'))) throw new Error(`--extra ${name}=${dir}: no dist/examples/app.js there (see bench/build-before.sh)`)
    const extraFlags = startFlags(path)
    const commit = buildCommit(path)
    servers.push({ ...ours, name, extra: true, label: `ours (${name}${commit === undefined ? '' : `, ${commit.slice(0, 7)}`})`, commit, env: { ...startEnv(path), OURS_DIST: path }, execArgv: extraFlags, warningOutput: warningOutputFor(extraFlags) })
  }
  return servers
}

function handWired (name, label) {
  return { name, label, file: 'hand-wired.mjs', page: OUR_PAGE, sessions: false, cookieAware: true, signInForm: false, env: { HAND_WIRED: name, PUBLIC_ORIGIN: BASE_URL } }
}

/** The commit a build was made from, as bench/build-before.sh records it. */
function buildCommit (dir) {
  const file = join(dir, '.bench-commit')
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined
}

/** Whether `server` is measured in `scenario` (every server answers both; the variants are measured signed in only). */
export function runsIn (server, scenario) {
  return server.scenarios === undefined || server.scenarios.includes(scenario.name)
}

/** Log level of a server: ours at the run's level (its log carries the warnings), the peers at warn. */
export function logLevelOf (server, oursLogLevel) {
  return server.file === 'ours.mjs' ? oursLogLevel : 'warn'
}
