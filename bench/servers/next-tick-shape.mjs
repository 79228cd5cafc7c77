// The example server loads examples/next-tick-shape.ts before anything else (examples/server.ts); ours.mjs
// stands in for it, so it imports this first, which loads that file from the build measured when the
// build has one (older builds run as their own server ran). `dist`: that build's dist/, for ours.mjs.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The build measured: OURS_DIST's dist/, or this checkout's. */
export const dist = process.env.OURS_DIST === undefined ? fileURLToPath(new URL('../../dist', import.meta.url)) : `${process.env.OURS_DIST}/dist`
const file = `${dist}/examples/next-tick-shape.js`
if (existsSync(file)) await import(file)
