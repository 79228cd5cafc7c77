#!/usr/bin/env node
// A district-sized catalog in-process: how long InMemoryCatalog takes to check it, from register to
// ready, the heap it keeps per 1,000 resources, and each page's size and render time (best of 50, with
// a signed-in member). Run after `npm run build`:
//   node --expose-gc bench/catalog-scale.mjs [categories=1000] [resourcesPerCategory=100] [emptyCategories=4000]
// SR_ROOT=<dir> measures another build (bench/build-before.sh <commit> <dir>) with its own dependencies.
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

const root = resolve(process.env.SR_ROOT ?? fileURLToPath(new URL('..', import.meta.url)))
const load = createRequire(join(root, 'package.json'))
const Fastify = load('fastify')
const fastifyCookie = load('@fastify/cookie')
const fastifySession = load('@fastify/session')
const { default: schoolsResources, InMemoryCatalog } = load(join(root, 'dist/lib/index.js'))

const [categories = 1000, perCategory = 100, empty = 4000] = process.argv.slice(2).map(Number)
const gc = globalThis.gc ?? (() => { throw new Error('run with node --expose-gc') })
const SUBJECTS = ['Mathematics', 'Science', 'English', 'History', 'Geography']

function catalogData () {
  const list = []
  for (let c = 0; c < categories + empty; c++) {
    // The first category is a large one (20 times the others: 2,000 resources by default).
    const resources = c < categories
      ? Array.from({ length: c === 0 ? 20 * perCategory : perCategory }, (_, i) => ({
        id: `r-${c}-${i}`,
        title: `Resource ${i} of category ${c}`,
        summary: 'A worksheet with a teacher guide, as long as a real summary on a school page tends to be.',
        url: `https://www.example.org/files/${c}/${i}.pdf`,
        subject: SUBJECTS[i % SUBJECTS.length],
        yearLevels: [`Year ${7 + (i % 4)}`, `Year ${8 + (i % 4)}`],
        format: 'Worksheet'
      }))
      : []
    list.push({ slug: `category-${c}`, title: `Category ${c}`, description: `Everything about topic ${c}.`, resources })
  }
  return { categories: list }
}

const member = { email: 'teacher@example.org', password: 'bench password' }
const heap = () => { gc(); gc(); return process.memoryUsage().heapUsed }

const baseline = heap()
let data = catalogData()
// CPU time, not wall time: on a shared machine the wall clock measures the neighbours.
const cpu = process.cpuUsage()
const catalog = new InMemoryCatalog(data)
const { user, system } = process.cpuUsage(cpu)
const checkMs = (user + system) / 1000
data = undefined
const kept = heap() - baseline

const app = Fastify()
await app.register(fastifyCookie)
await app.register(fastifySession, { secret: 'a-bench-secret-that-is-at-least-32-characters', saveUninitialized: false, cookie: { secure: false } })
const started = performance.now()
await app.register(schoolsResources, {
  catalog,
  baseUrl: 'http://localhost',
  conflictLog: false,
  authenticate: async ({ email, password }) => email === member.email && password === member.password ? { id: 1, name: 'Bench Teacher' } : null
})
await app.ready()
const readyMs = performance.now() - started

// Sign in as a browser does: the login page's CSRF cookie and token, then the form.
const form = await app.inject({ url: '/Security/login' })
const csrf = form.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
const token = /name="_csrf" value="([^"]+)"/.exec(form.body)[1]
const signIn = await app.inject({ method: 'POST', url: '/Security/login', headers: { cookie: csrf }, payload: { ...member, _csrf: token } })
const cookie = [csrf, ...signIn.cookies.map((c) => `${c.name}=${c.value}`)].join('; ')

const total = (categories + 19) * perCategory
console.log(`${categories + empty} categories, ${total.toLocaleString('en')} resources (Node ${process.version})`)
console.log(`InMemoryCatalog check and copy: ${checkMs.toFixed(0)} ms CPU; register to ready: ${readyMs.toFixed(0)} ms`)
console.log(`heap kept by the catalog: ${(kept / 1048576).toFixed(1)} MiB, ${(kept / total * 1000 / 1024).toFixed(0)} KiB per 1,000 resources`)
const pages = ['/schools/resources/', `/schools/resources/?start=${categories + empty - 1}`, '/schools/resources/resources/category-0/',
  `/schools/resources/resources/category-0/?start=${20 * perCategory - 1}`, '/schools/resources/resources/category-1/', '/schools/resources/resources/category-0/?subject=Science&start=10']
for (const url of pages) {
  let best = Infinity
  let bytes = 0
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now()
    const res = await app.inject({ url, headers: { cookie } })
    best = Math.min(best, performance.now() - t0)
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`)
    bytes = res.rawPayload.length
  }
  console.log(`${url}: ${(bytes / 1024).toFixed(1)} KB, best of 50 ${best.toFixed(2)} ms`)
}
await app.close()
