import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { invalidOption } from '../option-checks.js'
import { CONTENT_SECURITY_POLICY } from './security-headers.js'
import { css, noBody, routeSchema, type OpenApi, type RouteDoc } from './openapi.js'

/**
 * The section's stylesheet. All of the pages' styling lives here (no inline styles or scripts), so a
 * Content-Security-Policy of `style-src 'self'` is enough for the pages. Plain CSS, no build step:
 * readable on a phone, visible focus, system fonts, colours with at least 4.5:1 contrast. Sides are
 * logical (inline-start, inline-end), never left or right, so a `dir="rtl"` page is laid out mirrored.
 */
export const defaultStylesheet = `/* fastify-schools-resources: section stylesheet */
:root {
  --sr-text: #1b1f24;
  --sr-muted: #4a5560;
  --sr-bg: #ffffff;
  --sr-band: #f3f5f7;
  --sr-line: #cfd6dd;
  --sr-accent: #0b5cad;
  --sr-accent-dark: #083f77;
  --sr-focus: #ffbf47;
  --sr-error: #a4161a;
  --sr-error-bg: #fdecec;
  --sr-radius: 6px;
  color-scheme: light;
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 1.0625rem;
  line-height: 1.55;
  color: var(--sr-text);
  background: var(--sr-bg);
}
a { color: var(--sr-accent); text-underline-offset: 0.15em; }
a:hover { color: var(--sr-accent-dark); text-decoration-thickness: 2px; }
:focus-visible {
  outline: 3px solid var(--sr-text);
  outline-offset: 2px;
  box-shadow: 0 0 0 6px var(--sr-focus);
}
.skip-link {
  position: absolute;
  inset-inline-start: 0.5rem;
  top: -3rem;
  padding: 0.5rem 1rem;
  background: var(--sr-bg);
  z-index: 10;
}
.skip-link:focus { top: 0.5rem; }
/* The skip link moves focus to <main>; outlining the whole content area would only distract. */
#main:focus { outline: none; box-shadow: none; }
.visually-hidden {
  position: absolute !important;
  width: 1px; height: 1px;
  margin: -1px; padding: 0;
  overflow: hidden;
  clip: rect(0 0 0 0);
  white-space: nowrap;
  border: 0;
}

.site-header {
  background: var(--sr-band);
  border-bottom: 1px solid var(--sr-line);
}
.site-header-inner, .site-main, .site-footer-inner {
  max-width: 62rem;
  margin: 0 auto;
  padding: 0 1rem;
}
.site-header-inner {
  display: flex;
  flex-wrap: wrap;
  align-items: center;
  justify-content: space-between;
  gap: 0.5rem 1.5rem;
  padding-top: 0.75rem;
  padding-bottom: 0.75rem;
}
.site-name { margin: 0; font-size: 1.25rem; font-weight: 700; }
.site-name a { color: var(--sr-text); text-decoration: none; }
.site-name a:hover { text-decoration: underline; }
.account { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1rem; }
.account p { margin: 0; }
.account form { margin: 0; }
.account button { background: var(--sr-bg); color: var(--sr-accent); }
.account button:hover { background: var(--sr-band); color: var(--sr-accent-dark); }
.site-main { padding-top: 1.5rem; padding-bottom: 3rem; }
.site-footer { border-top: 1px solid var(--sr-line); color: var(--sr-muted); font-size: 0.9375rem; }
.site-footer-inner { padding-top: 1rem; padding-bottom: 1.5rem; }
.site-footer p { margin: 0; }

h1 { font-size: 2rem; line-height: 1.2; margin: 0.5rem 0 0.75rem; }
h2 { font-size: 1.375rem; line-height: 1.3; margin: 1.5rem 0 0.5rem; }
h3 { font-size: 1.1875rem; line-height: 1.3; margin: 0 0 0.35rem; }
.lead { font-size: 1.1875rem; color: var(--sr-muted); max-width: 42rem; }

.breadcrumbs ol { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem; font-size: 0.9375rem; }
.breadcrumbs li + li::before { content: "/"; margin-inline-end: 0.25rem; color: var(--sr-muted); }

.categories, .resources { list-style: none; margin: 0; padding: 0; display: grid; gap: 1rem; }
.categories { grid-template-columns: repeat(auto-fill, minmax(17rem, 1fr)); }
.categories > li, .resources > li {
  border: 1px solid var(--sr-line);
  border-radius: var(--sr-radius);
  padding: 1rem 1.125rem;
  background: var(--sr-bg);
}
.categories h2 { font-size: 1.25rem; margin: 0 0 0.35rem; }
.categories p, .resources p { margin: 0 0 0.5rem; }
/*
 * A category the member cannot open: still a link (to the 403 page), set apart by a dashed, shaded card
 * and, for those who cannot see that, by the note in words the link is described by.
 */
.categories > li.locked { background: var(--sr-band); border-style: dashed; border-color: var(--sr-muted); }
.categories .access-note {
  margin: 0.5rem 0 0;
  padding-inline-start: 0.6rem;
  border-inline-start: 4px solid var(--sr-muted);
  color: var(--sr-muted);
  font-size: 0.9375rem;
  font-weight: 600;
}
.resource-meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 0.75rem; margin: 0.5rem 0 0; font-size: 0.9375rem; }
.resource-meta dt { font-weight: 600; color: var(--sr-muted); }
.resource-meta dd { margin: 0; }

.filters {
  margin: 1.25rem 0 0.5rem;
  padding: 0.75rem 1rem 1rem;
  background: var(--sr-band);
  border: 1px solid var(--sr-line);
  border-radius: var(--sr-radius);
}
.filters fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; align-items: flex-end; gap: 0.75rem 1rem; }
.filters legend { font-weight: 700; padding: 0; margin-bottom: 0.5rem; }
.field { display: flex; flex-direction: column; gap: 0.25rem; }
.field label { font-weight: 600; }
.filter-actions { display: flex; align-items: center; gap: 1rem; }
.result-count { color: var(--sr-muted); }
.pager { margin: 1.5rem 0; }
.pager ul { list-style: none; margin: 0.5rem 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 1rem; }

input, select, button { font: inherit; }
input[type="email"], input[type="password"], select {
  min-height: 2.75rem;
  padding: 0.4rem 0.6rem;
  border: 2px solid var(--sr-muted);
  border-radius: var(--sr-radius);
  background: var(--sr-bg);
  color: var(--sr-text);
  max-width: 100%;
}
input[type="email"], input[type="password"] { width: 100%; }
select { min-width: 12rem; }
button {
  min-height: 2.75rem;
  padding: 0.45rem 1.1rem;
  border: 2px solid var(--sr-accent);
  border-radius: var(--sr-radius);
  background: var(--sr-accent);
  color: #ffffff;
  font-weight: 600;
  cursor: pointer;
}
button:hover { background: var(--sr-accent-dark); border-color: var(--sr-accent-dark); }

.login { max-width: 26rem; }
.login form p { margin: 0 0 1rem; }
.login label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
.hint { color: var(--sr-muted); font-size: 0.9375rem; }
/* The 403 page's way out: the same panel as the filters. */
.switch-account {
  max-width: 42rem;
  margin: 1.25rem 0 1.5rem;
  padding: 1rem 1.125rem;
  background: var(--sr-band);
  border: 1px solid var(--sr-line);
  border-radius: var(--sr-radius);
}
.switch-account p { margin: 0 0 0.75rem; }
.switch-account p:last-child { margin-bottom: 0; }
.error {
  border-inline-start: 5px solid var(--sr-error);
  background: var(--sr-error-bg);
  color: var(--sr-error);
  font-weight: 600;
  padding: 0.75rem 1rem;
  margin: 0 0 1rem;
}

@media (max-width: 30rem) {
  body { font-size: 1rem; }
  h1 { font-size: 1.625rem; }
  .site-header-inner { padding-top: 0.5rem; padding-bottom: 0.5rem; }
  .filters fieldset { flex-direction: column; align-items: stretch; }
  select { width: 100%; min-width: 0; }
}
@media print {
  .site-header, .site-footer, .filters, .skip-link { display: none; }
  a { color: inherit; }
}
`

/** The stylesheet option as the plugin uses it. */
export interface ResolvedStylesheet {
  /** The URL the layout links, or undefined for none. */
  href: string | undefined
  /** The path the plugin serves its own stylesheet at, or undefined when it does not serve it. */
  servePath: string | undefined
  /** The origin of a host stylesheet given as an absolute URL, which the CSP must then allow. */
  origin?: string
}

const STYLESHEET_FILE = 'assets/resources.css'

const STYLESHEET_HASH = createHash('sha256').update(defaultStylesheet).digest('base64url').slice(0, 16)
const ETAG = `"${STYLESHEET_HASH}"`
const YEAR = 365 * 24 * 60 * 60

/**
 * `true` (default): serve and link ours; `false`: none; a string: link the host's stylesheet instead
 * (a path on this site or an http(s) URL) and do not serve ours.
 */
export function resolveStylesheet (value: unknown, prefix: string): ResolvedStylesheet {
  if (value === undefined || value === true) {
    const servePath = `${prefix}/${STYLESHEET_FILE}`
    // The content hash in the link busts caches when the stylesheet changes with an upgrade.
    return { href: `${servePath}?v=${STYLESHEET_HASH}`, servePath }
  }
  if (value === false) return { href: undefined, servePath: undefined }
  if (typeof value === 'string' && /^\/(?!\/)\S*$/.test(value)) return { href: value, servePath: undefined }
  if (typeof value === 'string' && /^https?:\/\/\S+$/.test(value) && URL.canParse(value)) {
    return { href: value, servePath: undefined, origin: new URL(value).origin }
  }
  invalidOption('stylesheet', 'must be true, false, or the URL of your own stylesheet ("/css/resources.css" or "https://...")')
}

/** The plugin's Content-Security-Policy, with the host stylesheet's origin allowed when it has one. */
export function stylesheetPolicy (stylesheet: ResolvedStylesheet): typeof CONTENT_SECURITY_POLICY {
  if (stylesheet.origin === undefined) return CONTENT_SECURITY_POLICY
  const { directives } = CONTENT_SECURITY_POLICY
  return { ...CONTENT_SECURITY_POLICY, directives: { ...directives, styleSrc: [...directives.styleSrc, stylesheet.origin] } }
}

/**
 * Serves the stylesheet with an ETag. The versioned URL the layout links (`?v=<hash>`) is cached for a
 * year as immutable; any other request for it is revalidated.
 */
export function stylesheetRoute (fastify: FastifyInstance, servePath: string, openapi: OpenApi): void {
  const doc: RouteDoc = {
    summary: 'The section\'s stylesheet',
    description: 'Linked by its pages with ?v=<hash> (cached for a year); any other request is revalidated by its ETag.',
    answers: { 200: css('OK: the stylesheet'), 304: noBody('Not Modified: If-None-Match names its ETag') }
  }
  fastify.get(servePath, { schema: routeSchema(openapi, doc) }, async function schoolsResourcesStylesheet (request, reply) {
    const versioned = (request.query as { v?: unknown }).v === STYLESHEET_HASH
    reply
      .type('text/css; charset=utf-8')
      .header('etag', ETAG)
      .header('cache-control', versioned ? `public, max-age=${YEAR}, immutable` : 'public, max-age=0, must-revalidate')
    const match = request.headers['if-none-match']
    if (match !== undefined && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === ETAG)) {
      return reply.code(304).send()
    }
    return defaultStylesheet
  })
}
