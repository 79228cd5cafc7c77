// The plugin's options, as a host that `require`s the package sees them (dist/lib/index.d.ts).
import Fastify, { type FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import schoolsResources, { InMemoryCatalog, MemoryAttemptStore, type FastifySchoolsResourcesOptions, type Member } from 'fastify-schools-resources'

const catalog = new InMemoryCatalog({ categories: [] })
const authenticate = async ({ email }: { email: string, password: string }): Promise<Member | null> => email === 'a@b.c' ? { id: 1, name: 'A' } : null
const getMember = (request: FastifyRequest): Member | undefined => request.headers['x-member'] === undefined ? undefined : { id: 'm', name: 'M' }
const app = Fastify()

describe('the section serves sign-in (signIn left out or true)', () => {
  test('needs authenticate', () => {
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, authenticate })
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, authenticate, signIn: true })
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog })
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, signIn: true })
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog })
  })

  test('refuses logoutUrl, the host sign-out page of signIn: false', () => {
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, authenticate, logoutUrl: '/logout' })
  })

  test('authenticate resolves to a member or nothing', () => {
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, authenticate: async () => 'yes' })
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, authenticate: () => ({ id: 1, name: 'A' }) })
  })
})

describe('passwordReset: only with the section\'s own password form', () => {
  const passwordReset = {
    findMemberByEmail: async (email: string) => email === 'a@b.c' ? { id: 1, name: 'A' } : null,
    sendResetEmail: async ({ url, expiresAt }: { url: string, expiresAt: Date }) => { console.log(url, expiresAt) },
    setPassword: async (member: Member, password: string) => { console.log(member.id, password.length) }
  }
  test('takes the three hooks, and the optional rule', () => {
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, authenticate, baseUrl: 'https://a.b', passwordReset })
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, authenticate, passwordReset: { ...passwordReset, validatePassword: (password: string) => password.length < 20 ? 'Longer, please.' : undefined, signIn: false } })
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, authenticate, passwordReset: { findMemberByEmail: passwordReset.findMemberByEmail } })
  })
  test('not with signIn: false, nor without the password form', () => {
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, signIn: false as const, getMember, passwordReset })
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, passwordSignIn: false as const, oidc: { providers: [] }, passwordReset })
  })
})

describe('the host signs in (signIn: false)', () => {
  test('needs no authenticate, takes getMember and logoutUrl', () => {
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, signIn: false })
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, signIn: false, getMember, logoutUrl: '/Security/logout' })
    expect<FastifySchoolsResourcesOptions>().type.toBeAssignableFrom({ catalog, signIn: false as const, authenticate })
  })

  test('a signIn that is a boolean (a host setting) still needs authenticate', () => {
    const signIn: boolean = process.env.SIGN_IN === '1'
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, signIn, authenticate })
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, signIn })
  })

  test('getMember returns a member, or nothing', () => {
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, signIn: false, getMember: async () => 'nobody' })
  })
})

describe('the other options', () => {
  test('are typed', () => {
    expect<FastifySchoolsResourcesOptions>().type.toBeAssignableFrom({
      catalog,
      authenticate,
      prefix: '/resources',
      baseUrl: 'https://www.example.org',
      restrictedCategories: 'hide' as const,
      pageSize: 20,
      stylesheet: 'https://cdn.example.org/site.css',
      lockout: { maxAttempts: 5, store: new MemoryAttemptStore(), deviceSecret: 'x'.repeat(32) },
      loginRateLimit: false as const,
      passwordChecks: { concurrent: 2 },
      sessionPlugin: '@fastify/secure-session' as const,
      conflictLog: 'each' as const,
      files: { root: 'files' },
      openapi: { tag: 'Resources' },
      findMember: async (id: string | number) => ({ id, name: 'A' }),
      findMemberCache: { ttlMs: 0 }
    })
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, authenticate, restrictedCategories: 'show' })
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, authenticate, sessionPlugin: 'express-session' })
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, authenticate, files: 'files' })
    expect<FastifySchoolsResourcesOptions>().type.not.toBeAssignableFrom({ catalog, authenticate, pageSize: '20' })
  })

  test('an unknown option is an error in an object literal, as at start-up', () => {
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, authenticate, prefx: '/resources' })
  })

  test('catalog is required and must list and get categories', () => {
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { authenticate })
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog: { categories: [] }, authenticate })
  })
})

describe('sign-in with OpenID Connect (oidc)', () => {
  const oidc = {
    providers: [{ id: 'google', label: 'Google', issuer: 'https://accounts.google.com', clientId: 'c', clientSecret: 's', allowedDomains: ['school.example'] }],
    resolveMember: async (claims: { email?: string, hd?: string }) => claims.hd === 'school.example' ? { id: claims.email!, name: 'M' } : null
  }

  test('beside the password form, or alone with passwordSignIn: false', () => {
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, authenticate, oidc })
    expect(app.register).type.toBeCallableWith(schoolsResources, { catalog, passwordSignIn: false, oidc })
  })

  test('passwordSignIn: false takes no authenticate and needs oidc; signIn: false takes neither', () => {
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, passwordSignIn: false, oidc, authenticate })
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, passwordSignIn: false })
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, signIn: false, getMember, oidc })
  })

  test('resolveMember gives a member or nothing', () => {
    expect(app.register).type.not.toBeCallableWith(schoolsResources, { catalog, passwordSignIn: false, oidc: { providers: oidc.providers, resolveMember: async () => 'yes' } })
  })

  test('reply.signInMember takes a member and how', () => {
    app.get('/cb', async (_request, reply) => {
      expect(reply.signInMember).type.toBeCallableWith({ id: 1, name: 'A' }, { method: 'google-oauth', backUrl: '/x' })
      expect(reply.signInMember).type.not.toBeCallableWith({ id: 1, name: 'A' })
      expect(reply.signInMember).type.not.toBeCallableWith({ id: 1 }, { method: 'x' })
      return reply.signInMember({ id: 1, name: 'A' }, { method: 'x' })
    })
  })
})
