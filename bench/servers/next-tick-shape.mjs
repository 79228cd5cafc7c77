// Builds before issue 35 load examples/next-tick-shape.ts before anything else in their example server
// (a tick object kept alive). ours.mjs stands in for that server, so it imports this first, which loads
// the file when the build measured has it: each build runs as its own server ran (delete
// dist/examples/next-tick-shape.js from an old build to measure it without). `dist`: for ours.mjs.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The build measured: OURS_DIST's dist/, or this checkout's. */
export const dist = process.env.OURS_DIST === undefined ? fileURLToPath(new URL('../../dist', import.meta.url)) : `${process.env.OURS_DIST}/dist`
const file = `${dist}/examples/next-tick-shape.js`
if (existsSync(file)) await import(file)
