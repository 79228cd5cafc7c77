// The figures of docs/parity.md's "A hostile site": the built command (dist/parity/bin.js, `npm run build`
// first) against the hostile stand-in, under /usr/bin/time, its peak memory and each read's time (from
// the read's request to the next request the stand-in sees). A measurement, not a test:
//   node --import=./node_modules/@tapjs/typescript/dist/esm/import.mjs parity/test/hostile-figures.ts
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { startStandIn } from './legacy-stand-in.js'

const run = promisify(execFile)
const bin = resolve(__dirname, '..', '..', 'dist', 'parity', 'bin.js')
const dir = mkdtempSync(join(tmpdir(), 'parity-figures-'))
const addresses = join(dir, 'a.txt')
writeFileSync(addresses, '/schools/resources/\n')

async function main (): Promise<void> {
  const legacy = await startStandIn({ hostile: { links: ['/schools/resources/bomb/'] } })
  const cases: Array<[string, string, string[]]> = [
    ['gzip bomb, a page (1 MB gzip, 1 GB decompressed)', '/schools/resources/bomb/', ['--crawl', '--crawl-depth', '2']],
    ['gzip bomb, a sitemap (1 MB gzip, 1 GB decompressed)', '/bomb.xml', ['--addresses', addresses, '--sitemap', `${legacy.origin}/bomb.xml`]],
    ['gzip bomb, a sitemap answered 404 (its body dropped)', '/gone-bomb.xml', ['--addresses', addresses, '--sitemap', `${legacy.origin}/gone-bomb.xml`]],
    ['1 MB sitemap, 20,000 addresses on an internal host', '/huge-sitemap.xml', ['--addresses', addresses, '--sitemap', `${legacy.origin}/huge-sitemap.xml`]],
    ['1 MB sitemap of <loc>s never closed', '/open-sitemap.xml', ['--sitemap', `${legacy.origin}/open-sitemap.xml`]]
  ]
  for (const [name, target, args] of cases) {
    const from = legacy.log.length
    const { stderr } = await run('/usr/bin/time', ['-f', 'TIME %M %e %U', process.execPath, bin, 'parity', '--legacy', legacy.origin, '--candidate', legacy.origin, '--rate', '1000', ...args])
      .catch((err: { stderr: string }) => err)
    const [, rssKb, wall, user] = /TIME (\d+) ([\d.]+) ([\d.]+)/.exec(stderr)!
    const log = legacy.log.slice(from)
    const at = log.findIndex((l) => l.target === target)
    const next = log[at + 1]?.at ?? performance.now()
    console.log(`${name}: peak RSS ${Math.round(Number(rssKb) / 1024)} MB, read in ${Math.round(next - log[at].at)} ms; whole run ${wall} s (CPU ${user} s)`)
  }
  await legacy.close()
  rmSync(dir, { recursive: true, force: true })
}

main().catch((err) => { console.error(err); process.exitCode = 1 })
