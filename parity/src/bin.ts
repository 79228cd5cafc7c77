#!/usr/bin/env node
// The package's command (`npx fastify-schools-resources parity …`): only the parity tool's own modules
// load, never the plugin, so it runs from the installed package with nothing else.
import { main } from './cli.js'

// main() turns every failure into a message and an exit code: it never rejects.
main(process.argv.slice(2), process).then((code) => { process.exitCode = code })
