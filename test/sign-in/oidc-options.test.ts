// Issue 36: the oidc option's checks (FST_SR_INVALID_OPTION naming the path), the combinations with
// signIn, passwordSignIn and authenticate, the sections that share one sign-in, and the routes under openapi.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifySwagger from '@fastify/swagger'
import SwaggerParser from '@apidevtools/swagger-parser'
import schoolsResources, { InMemoryCatalog, type FastifySchoolsResourcesOptions } from '../../lib/index.js'
import { resolveOptions } from '../../lib/options.js'
import { buildTestApp, BASE_URL, SECRET, teacherOnly } from '../helpers/app.js'
import { demoCatalog, demoFiles } from '../../examples/demo-catalog.js'

const catalog = new InMemoryCatalog(demoCatalog)
const resolveMember = async () => null
const GOOGLE = { id: 'google', label: 'Google', issuer: 'https://accounts.google.com', clientId: 'c-1', clientSecret: 's-1' }

function options (oidc: unknown, extra: Record<string, unknown> = {}) {
  return { catalog, baseUrl: BASE_URL, files: demoFiles, authenticate: teacherOnly, oidc, ...extra }
}

function refused (t: Test, value: object, name: string, why: RegExp) {
  t.throws(() => resolveOptions(value), { code: 'FST_SR_INVALID_OPTION', message: new RegExp(`invalid option "${name.replace(/[[\].]/g, '\\$&')}": .*${why.source}`) }, name)
}

t.test('the oidc option\'s shape: each mistake names its path', async (t) => {
  const p = (extra: Record<string, unknown>) => options({ providers: [{ ...GOOGLE, ...extra }], resolveMember })
  refused(t, options('yes'), 'oidc', /must be \{ providers/)
  refused(t, options({ providers: [GOOGLE], resolveMember, extra: 1 }), 'oidc.extra', /is not an oidc setting/)
  refused(t, options({ providers: [], resolveMember }), 'oidc.providers', /non-empty list/)
  refused(t, options({ providers: [GOOGLE] }), 'oidc.resolveMember', /is required/)
  refused(t, options({ providers: [GOOGLE, { ...GOOGLE }], resolveMember }), 'oidc.providers[1].id', /given twice/)
  refused(t, options({ providers: ['google'], resolveMember }), 'oidc.providers[0]', /must be \{ id, label/)
  for (const id of ['Google', '-g', 'g-', 'a'.repeat(33), 'g_1', '', 1]) refused(t, p({ id }), 'oidc.providers[0].id', /lower-case slug/)
  refused(t, p({ colour: 'red' }), 'oidc.providers[0].colour', /is not a provider setting/)
  refused(t, p({ label: '' }), 'oidc.providers[0].label', /non-empty string/)
  refused(t, p({ clientId: undefined }), 'oidc.providers[0].clientId', /client id/)
  refused(t, p({ clientSecret: '' }), 'oidc.providers[0].clientSecret', /non-empty string/)
  refused(t, p({ scopes: ['email'] }), 'oidc.providers[0].scopes', /must include "openid"/)
  for (const key of ['scopes', 'allowedDomains', 'allowedEmailDomains', 'allowedTenants']) {
    for (const value of [[], 'school.example', [''], [1]]) refused(t, p({ [key]: value }), `oidc.providers[0].${key}`, /non-empty list of non-empty strings/)
  }
  refused(t, p({ endSession: 'yes' }), 'oidc.providers[0].endSession', /true or false/)
  for (const issuer of [42, 'http://idp.example', 'ftp://idp.example', 'not a url', 'https://idp.example/?x=1', 'https://u:p@idp.example']) {
    refused(t, p({ issuer }), 'oidc.providers[0].issuer', /must (be https|be the provider's issuer URL)/)
  }
  for (const tenant of ['common', 'organizations']) {
    refused(t, p({ issuer: `https://login.microsoftonline.com/${tenant}/v2.0` }), 'oidc.providers[0].allowedTenants', /is required with Entra/)
  }
  refused(t, options({ providers: [GOOGLE], resolveMember }, { baseUrl: undefined }), 'baseUrl', /is required with oidc/)
})

t.test('what the checks let through, resolved', async (t) => {
  const resolved = resolveOptions(options({
    providers: [
      { ...GOOGLE, allowedDomains: ['School.Example'] },
      { id: 'entra', label: 'Microsoft', issuer: 'https://login.microsoftonline.com/common/v2.0', clientId: 'c-2', allowedTenants: ['ABC'], scopes: ['openid', 'email'], endSession: true },
      { id: 'dev', label: 'Dev', issuer: 'http://127.0.0.1:4000', clientId: 'c-3' },
      { id: 'dev6', label: 'Dev', issuer: 'http://[::1]:4000', clientId: 'c-4' },
      { id: 'devname', label: 'Dev', issuer: 'http://localhost:4000/oidc', clientId: 'c-5' }
    ],
    resolveMember
  })).oidc!
  t.match(resolved.providers, [
    { id: 'google', scopes: ['openid', 'email', 'profile'], allowedDomains: ['school.example'], endSession: false, insecure: false, clientSecret: 's-1' },
    { id: 'entra', scopes: ['openid', 'email'], allowedTenants: ['abc'], endSession: true, clientSecret: undefined },
    { id: 'dev', insecure: true },
    { id: 'dev6', insecure: true },
    { id: 'devname', insecure: true }
  ])
  t.equal(resolveOptions(options(undefined)).oidc, undefined)
})

t.test('signIn, passwordSignIn and authenticate: the combinations that cannot work fail start-up', async (t) => {
  const oidc = { providers: [GOOGLE], resolveMember }
  refused(t, options(oidc, { signIn: false, authenticate: undefined }), 'oidc', /signIn: false turns off/)
  refused(t, options(undefined, { signIn: false, passwordSignIn: false }), 'passwordSignIn', /signIn: false turns off/)
  refused(t, options(undefined, { passwordSignIn: false, authenticate: undefined }), 'passwordSignIn', /false needs oidc/)
  refused(t, options(oidc, { passwordSignIn: false }), 'authenticate', /is not used with passwordSignIn: false/)
  refused(t, options(oidc, { passwordSignIn: 'no' }), 'passwordSignIn', /true or false/)
  refused(t, options(oidc, { authenticate: undefined }), 'authenticate', /is required while signIn is on/)
  t.equal(resolveOptions(options(oidc, { passwordSignIn: false, authenticate: undefined })).passwordSignIn, false)
})

t.test('oidc needs @fastify/cookie\'s secret for its state cookie', async (t) => {
  await t.rejects(buildTestApp({ plugin: { oidc: { providers: [GOOGLE], resolveMember } } }), { code: 'FST_SR_INVALID_OPTION', message: /"oidc": needs @fastify\/cookie registered with a secret/ })
})

t.test('sections that share one sign-in must agree on oidc and passwordSignIn (FST_SR_SHARED_SIGN_IN)', async (t) => {
  async function two (second: Record<string, unknown>) {
    const app = Fastify()
    await app.register(fastifyCookie, { secret: SECRET })
    await app.register(fastifySession, { secret: SECRET, saveUninitialized: false, cookie: { secure: false } })
    const oidc = { providers: [GOOGLE], resolveMember }
    await app.register(schoolsResources, options(oidc) as FastifySchoolsResourcesOptions)
    await app.register(schoolsResources, { ...options(oidc), prefix: '/more', ...second } as FastifySchoolsResourcesOptions)
    await app.ready()
    return app
  }
  await t.rejects(two({ oidc: { providers: [{ ...GOOGLE, label: 'Other' }], resolveMember } }), { code: 'FST_SR_SHARED_SIGN_IN' })
  await t.rejects(two({ oidc: undefined }), { code: 'FST_SR_SHARED_SIGN_IN' })
})

t.test('the two routes in a host\'s OpenAPI document, described like the others', async (t) => {
  const { app } = await buildTestApp({
    cookie: { secret: SECRET },
    plugin: { openapi: true, oidc: { providers: [GOOGLE], resolveMember } },
    before: async (host) => { await host.register(fastifySwagger, { openapi: { info: { title: 'School site', version: '1.0.0' } } }) }
  })
  t.teardown(() => app.close())
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { tags: string[], summary: string, responses: Record<string, unknown> }>> }
  const start = doc.paths['/Security/login/oidc/{id}'].get
  const callback = doc.paths['/Security/login/oidc/{id}/callback'].get
  t.same(start.tags, ['Resources'])
  t.same(Object.keys(start.responses).sort(), ['302', '404', '503'])
  t.same(Object.keys(callback.responses).sort(), ['302', '303', '403', '404', '429', '503'])
  await SwaggerParser.validate(structuredClone(doc) as never)
  const signIn = doc.paths['/Security/login'].post
  for (const [route, responses] of [['callback', callback.responses], ['password sign-in', signIn.responses]] as const) {
    t.match(responses['429'], { description: /FST_SR_LOGIN_RATE_LIMITED.*FST_SR_SESSION_RATE_LIMITED/ }, `${route}: the bound on new sessions is one of its 429s`)
  }
})

t.test('with the lockout off, no 429 for new sessions is documented (there is no bound)', async (t) => {
  const { app } = await buildTestApp({
    cookie: { secret: SECRET },
    plugin: { openapi: true, lockout: false, oidc: { providers: [GOOGLE], resolveMember } },
    before: async (host) => { await host.register(fastifySwagger, { openapi: { info: { title: 'School site', version: '1.0.0' } } }) }
  })
  t.teardown(() => app.close())
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> }
  for (const responses of [doc.paths['/Security/login/oidc/{id}/callback'].get.responses, doc.paths['/Security/login'].post.responses]) {
    t.match(responses['429'].description, 'FST_SR_LOGIN_RATE_LIMITED', 'the address limit is still on')
    t.notMatch(responses['429'].description, 'FST_SR_SESSION_RATE_LIMITED')
  }
})
