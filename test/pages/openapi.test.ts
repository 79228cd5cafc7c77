import t, { type Test } from 'tap'
import fastifySwagger from '@fastify/swagger'
import SwaggerParser from '@apidevtools/swagger-parser'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { errorCodes, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { resolveOpenApi } from '../../lib/pages/openapi.js'
import { buildTestApp, openLoginForm, signIn, TEACHER } from '../helpers/app.js'

// The section's routes in a host's @fastify/swagger document (docs/openapi.md): hidden by default, the
// host's own untagged routes left as they are; with the option, tagged, described with their real
// answers, valid OpenAPI; and the option changes no answer.

// What is read here of an OpenAPI 3 document.
interface Response { description: string, content?: Record<string, { schema: unknown }>, headers?: Record<string, unknown> }
interface Parameter { in: string, name: string, required?: boolean, description?: string, schema: unknown }
interface Operation { tags?: string[], summary?: string, description?: string, parameters?: Parameter[], responses: Record<string, Response> }
interface Doc { paths: Record<string, Record<string, Operation>> }

/** A host with @fastify/swagger (registered first, as its docs say), the section and an untagged route of its own. */
async function hostWithSwagger (t: Test, plugin: Partial<FastifySchoolsResourcesOptions> = {}): Promise<{ app: FastifyInstance, doc: Doc }> {
  const { app } = await buildTestApp({
    plugin,
    extend: (host) => {
      host.get('/host/status', { schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async () => ({ ok: true }))
    },
    before: async (host) => { await host.register(fastifySwagger, { openapi: { info: { title: 'School site', version: '1.0.0' } } }) }
  })
  t.teardown(() => app.close())
  return { app, doc: app.swagger() as unknown as Doc }
}

const SECTION_PATHS = [
  '/schools/resources/assets/resources.css',
  '/schools/resources/',
  '/schools/resources',
  '/schools/resources/resources/{*}',
  '/schools/resources/files/{*}',
  '/Security/login',
  '/Security/logout'
]

/** Every operation of the document: `METHOD path` → its operation. */
function operations (doc: Doc): Map<string, Operation> {
  const found = new Map<string, Operation>()
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'delete', 'head'] as const) {
      const operation = item[method]
      if (operation !== undefined) found.set(`${method.toUpperCase()} ${path}`, operation)
    }
  }
  return found
}

const statuses = (operation: Operation | undefined) => Object.keys(operation?.responses ?? {}).map(Number)

t.test('by default the section is hidden; the host\'s untagged routes stay', async (t) => {
  const { doc } = await hostWithSwagger(t)
  t.same([...operations(doc).keys()], ['GET /host/status'], 'only the host\'s route')
  t.equal(operations(doc).get('GET /host/status')!.tags, undefined, 'untagged, and shown (no hideUntagged needed)')
  await SwaggerParser.validate(structuredClone(doc) as never)
})

t.test('openapi: true shows every route tagged, with its real answers, as valid OpenAPI', async (t) => {
  const { doc } = await hostWithSwagger(t, { openapi: true })
  const ops = operations(doc)
  const expected: Record<string, number[]> = {
    'GET /schools/resources/assets/resources.css': [200, 304],
    'GET /schools/resources/': [200, 503],
    'GET /schools/resources': [200, 503],
    // baseUrl is set (buildTestApp): no 400 from a Host header that cannot make an address.
    'GET /schools/resources/resources/{*}': [200, 302, 403, 414, 503],
    'GET /schools/resources/files/{*}': [200, 206, 302, 304, 403, 404, 412, 414, 416, 503],
    'GET /Security/login': [200, 503],
    'POST /Security/login': [303, 400, 401, 403, 429, 503],
    'POST /Security/logout': [303, 403, 503],
    'GET /host/status': [200]
  }
  t.same(Object.fromEntries([...ops].map(([key, op]) => [key, statuses(op).sort((a, b) => a - b)])), expected)
  for (const [key, op] of ops) {
    if (key === 'GET /host/status') continue
    t.same(op.tags, ['Resources'], `${key}: tagged`)
    t.match(op.summary, /\S/, `${key}: a summary`)
    t.match(op.description, /\S/, `${key}: a description`)
    for (const [status, response] of Object.entries(op.responses)) {
      t.notMatch(response.description, /^Default Response$/, `${key} ${status}: described`)
    }
  }
  t.equal(ops.get('GET /host/status')!.tags, undefined, 'the host\'s route is untouched')
  t.same(new Set(Object.keys(doc.paths)), new Set([...SECTION_PATHS, '/host/status']))

  // The wildcards are path parameters, described.
  for (const path of ['/schools/resources/resources/{*}', '/schools/resources/files/{*}']) {
    const [param] = ops.get(`GET ${path}`)!.parameters!
    t.match(param, { in: 'path', name: '*', required: true, schema: { type: 'string' } }, path)
    t.match(param.description, /slug/)
  }

  // The JSON answers are the schemas the routes serialize with; the pages are HTML.
  const json = (key: string, status: number) => (ops.get(key)!.responses[status]).content!
  t.match(json('GET /schools/resources/', 200)['application/json'].schema, { required: ['categories'], properties: { categories: { items: { required: ['slug', 'title', 'description', 'url', 'locked'] } } } })
  t.match(json('GET /schools/resources/resources/{*}', 200)['application/json'].schema, { required: ['category', 'resources', 'filter'] })
  t.match(json('GET /schools/resources/resources/{*}', 200)['text/html'].schema, { type: 'string' })
  t.match(json('GET /Security/login', 200)['application/json'].schema, { required: ['signedIn', 'csrfToken'] })
  t.match(json('POST /Security/login', 401)['application/json'].schema, { properties: { code: { type: 'string' } } })
  t.match(json('GET /schools/resources/files/{*}', 206)['application/octet-stream'].schema, { type: 'string', format: 'binary' })
  t.match(json('GET /schools/resources/assets/resources.css', 200)['text/css'].schema, { type: 'string' })
  const redirect = ops.get('POST /Security/login')!.responses[303]
  t.equal(redirect.content, undefined, 'a redirect has no body')
  t.ok(redirect.headers?.location, 'and a Location')

  // Valid OpenAPI 3 (swagger-parser checks the document against the specification's schema).
  const api = await SwaggerParser.validate(structuredClone(doc) as never) as unknown as Doc
  t.equal(Object.keys(api.paths).length, SECTION_PATHS.length + 1)
})

t.test('{ tag } names the tag; the answers follow the options', async (t) => {
  const { doc } = await hostWithSwagger(t, { openapi: { tag: 'Staff resources' }, baseUrl: undefined, restrictedCategories: 'hide', lockout: false, loginRateLimit: false })
  const ops = operations(doc)
  t.same(ops.get('GET /schools/resources/')!.tags, ['Staff resources'])
  t.same(statuses(ops.get('GET /schools/resources/resources/{*}')), [200, 302, 400, 414, 503], 'no baseUrl: the 400; hidden categories: no 403')
  t.same(statuses(ops.get('POST /Security/login')), [303, 400, 401, 403, 503], 'no limits: no 429')
  t.same(statuses(ops.get('POST /Security/logout')), [303, 400, 403, 503])
  t.match((ops.get('POST /Security/login')!.responses[400]).description, /FST_SR_BAD_HOST/)
  await SwaggerParser.validate(structuredClone(doc) as never)

  const bare = await hostWithSwagger(t, { openapi: true, signIn: false, stylesheet: false })
  t.same([...operations(bare.doc).keys()].sort(), ['GET /host/status', 'GET /schools/resources', 'GET /schools/resources/', 'GET /schools/resources/files/{*}', 'GET /schools/resources/resources/{*}'])
})

t.test('the option changes no answer: the same status, type and body with it on and off', async (t) => {
  const off = (await hostWithSwagger(t)).app
  const on = (await hostWithSwagger(t, { openapi: true })).app
  const sheet = '/schools/resources/files/maths/maths-fractions-wall/fraction-wall.pdf'
  const cookies = new Map([[off, await signIn(off)], [on, await signIn(on)]])
  const JSON_CLIENT = { accept: 'application/json' }
  const CSS = '/schools/resources/assets/resources.css'
  const requests: Array<(app: FastifyInstance) => InjectOptions | Promise<InjectOptions>> = [
    () => ({ url: '/schools/resources/', headers: JSON_CLIENT }),
    () => ({ url: '/schools/resources/' }),
    (app) => ({ url: '/schools/resources/resources/maths/?year=Year%203', headers: { ...JSON_CLIENT, cookie: cookies.get(app)! } }),
    (app) => ({ url: '/schools/resources/resources/staff-room/', headers: { ...JSON_CLIENT, cookie: cookies.get(app)! } }),
    (app) => ({ url: '/schools/resources/resources/no-such/', headers: { cookie: cookies.get(app)! } }),
    () => ({ url: '/schools/resources/resources/maths/' }),
    () => ({ url: `/schools/resources/resources/maths/?${'x'.repeat(1100)}`, headers: JSON_CLIENT }),
    (app) => ({ url: sheet, headers: { cookie: cookies.get(app)! } }),
    (app) => ({ url: sheet, headers: { cookie: cookies.get(app)!, range: 'bytes=0-9' } }),
    (app) => ({ url: sheet, headers: { cookie: cookies.get(app)!, range: 'bytes=99999999-' } }),
    (app) => ({ url: sheet, headers: { cookie: cookies.get(app)!, 'if-match': '"nope"' } }),
    (app) => ({ url: '/schools/resources/files/maths/nothing/here.pdf', headers: { ...JSON_CLIENT, cookie: cookies.get(app)! } }),
    () => ({ url: '/Security/login', headers: JSON_CLIENT }),
    async (app) => {
      const form = await openLoginForm(app)
      return { method: 'POST', url: '/Security/login', headers: { ...JSON_CLIENT, cookie: form.cookie }, payload: { _csrf: form.token, email: TEACHER.email, password: 'wrong' } }
    },
    () => ({ method: 'POST', url: '/Security/login', headers: JSON_CLIENT, payload: { email: TEACHER.email, password: 'wrong' } }),
    async (app) => {
      const form = await openLoginForm(app)
      return { method: 'POST', url: '/Security/login', headers: { ...JSON_CLIENT, cookie: form.cookie }, payload: { _csrf: form.token, ...TEACHER } }
    },
    async (app) => ({ url: CSS, headers: { 'if-none-match': (await app.inject(CSS)).headers.etag as string } })
  ]
  const volatile = /"csrfToken":"[^"]*"|name="_csrf" value="[^"]*"/g
  const seen = new Set<number>()
  for (const request of requests) {
    const [asked, a, b] = await Promise.all([off, on].map(async (app) => request(app))).then(async ([x, y]) => [x, await off.inject(x), await on.inject(y)] as const)
    const what = `${a.statusCode} ${asked.method ?? 'GET'} ${asked.url}`.slice(0, 90)
    t.equal(b.statusCode, a.statusCode, what)
    for (const header of ['content-type', 'location', 'content-range', 'content-disposition', 'cache-control']) t.equal(b.headers[header], a.headers[header], `${what}: ${header}`)
    t.equal(b.body.replace(volatile, ''), a.body.replace(volatile, ''), `${what}: body`)
    seen.add(a.statusCode)
  }
  t.same([...seen].sort((x, y) => x - y), [200, 206, 302, 303, 304, 401, 403, 404, 412, 414, 416], 'every kind of answer compared')
})

t.test('a host error handler\'s own fields on a section route reach the client with the option on', async (t) => {
  const answers = []
  for (const openapi of [false, true]) {
    const { app } = await buildTestApp({
      plugin: { openapi },
      before: async (host) => {
        host.setErrorHandler((error: { statusCode?: number }, request, reply) => reply.code(error.statusCode ?? 500).send({ statusCode: error.statusCode, reason: 'the host\'s words', requestId: request.id, nested: { a: [1] } }))
        await host.register(fastifySwagger, { openapi: { info: { title: 'School site', version: '1.0.0' } } })
      }
    })
    t.teardown(() => app.close())
    const res = await app.inject({ url: `/schools/resources/resources/maths/?${'x'.repeat(1100)}`, headers: { accept: 'application/json' } })
    t.equal(res.statusCode, 414)
    answers.push(res.json())
  }
  t.same(answers[1], answers[0])
  t.same(answers[1], { statusCode: 414, reason: 'the host\'s words', requestId: 'req-1', nested: { a: [1] } })
})

t.test('the option is checked at start-up', async (t) => {
  t.same(resolveOpenApi(undefined), false)
  t.same(resolveOpenApi(false), false)
  t.same(resolveOpenApi(true), { tag: 'Resources' })
  t.same(resolveOpenApi({}), { tag: 'Resources' })
  t.same(resolveOpenApi({ tag: 'Staff' }), { tag: 'Staff' })
  for (const bad of [null, 'Resources', 1, [], { tag: '' }, { tag: ' ' }, { tag: 3 }, { tags: ['x'] }]) {
    t.throws(() => resolveOpenApi(bad), new errorCodes.FST_SR_INVALID_OPTION('openapi', "must be true, false, or { tag: 'Resources' } (a non-empty tag)"), JSON.stringify(bad))
  }
  await t.rejects(buildTestApp({ plugin: { openapi: 'yes' as never } }), { code: 'FST_SR_INVALID_OPTION', message: /invalid option "openapi"/ })
})
