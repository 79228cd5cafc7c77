// The example server loads examples/next-tick-shape.ts before anything else (examples/server.ts); ours.mjs
// stands in for it, so it imports this first, which loads that file from the build measured (OURS_DIST or
// this checkout's dist/) when the build has one. Older builds run as their own server ran.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const dist = process.env.OURS_DIST === undefined ? fileURLToPath(new URL('../../dist', import.meta.url)) : `${process.env.OURS_DIST}/dist`
const file = `${dist}/examples/next-tick-shape.js`
if (existsSync(file)) await import(file)
