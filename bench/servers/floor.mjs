// The floor of the signed-in page: the reference's Fastify + @fastify/cookie + @fastify/session (memory
// store, saveUninitialized: false, rolling: false), sending the answer our server and the hand-wired
// peers send (our maths page, bench/peers/page-template.html, with the member's name and a logout token;
// helmet's headers with the section's CSP, Cache-Control and Vary) with nothing computed per request but
// the session's read and the page's name: the headers are one object made at start, the token one string.
// No one should serve this (one token for every member protects nothing); it is the least that a Fastify
// app on @fastify/session can spend on this answer, so that a target set against a peer can be checked
// for whether any such server reaches it (the report's targets table). The anonymous answer is the reference's.
import { readFileSync } from 'node:fs'
import escapeHtml from 'escape-html'
import { sessionServer } from './session-server.mjs'

const [head, middle, tail] = readFileSync(new URL('../peers/page-template.html', import.meta.url), 'utf8').split(/\{\{NAME\}\}|\{\{TOKEN\}\}/)
// As long as a token of @fastify/csrf-protection (a salt, a dash and an HMAC in base64url).
const token = 'floorFlo-' + 'x'.repeat(43)
// The headers of our example's page as it sends them (helmet's, with the section's CSP; no HSTS there).
const headers = {
  'content-security-policy': "default-src 'none';style-src 'self';img-src 'self' data:;font-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
  'cache-control': 'private, no-store',
  vary: 'Accept',
  'content-type': 'text/html; charset=utf-8'
}

// No logger: a floor, not a peer (the peers log at warn, as ours).
await sessionServer({
  logger: false,
  send: (reply, member) => reply.headers(headers).send(head + escapeHtml(member.name) + middle + token + tail)
})
