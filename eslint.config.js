'use strict'

// The @fastify family's style: neostandard, with its TypeScript rules for lib/, test/ and examples/.
// bench/peers/ holds the hand-wired peers exactly as issue 23 defines them, so it is not restyled.
module.exports = require('neostandard')({
  ts: true,
  ignores: ['dist/**', 'coverage/**', '.tap/**', 'bench/builds/**', 'bench/peers/**', 'test/.snippet-*/**', ...require('neostandard').resolveIgnoresFromGitignore()]
})
