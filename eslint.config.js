'use strict'

// The @fastify family's style: neostandard, with its TypeScript rules for lib/, test/ and examples/.
module.exports = require('neostandard')({
  ts: true,
  ignores: ['dist/**', 'coverage/**', '.tap/**', 'bench/builds/**', 'test/.snippet-*/**', ...require('neostandard').resolveIgnoresFromGitignore()]
})
