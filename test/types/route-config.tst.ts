// What the section reads from a route's config and adds to the request and the instance.
import Fastify, { type FastifyContextConfig, type FastifyRequest, type preHandlerHookHandler } from 'fastify'
import { expect, test } from 'tstyche'
import type { Member, MembersOnlyOptions } from 'fastify-schools-resources'

const app = Fastify()

test('config.membersOnly: true, or the groups and the 403 title', () => {
  expect<FastifyContextConfig['membersOnly']>().type.toBe<boolean | MembersOnlyOptions | undefined>()
  expect(app.get).type.toBeCallableWith('/members', { config: { membersOnly: true } }, async () => 'members')
  expect(app.get).type.toBeCallableWith('/staff', { config: { membersOnly: { groups: ['staff'], title: 'Staff room' } } }, async () => 'staff')
  expect(app.get).type.not.toBeCallableWith('/staff', { config: { membersOnly: { groups: 'staff' } } }, async () => 'staff')
  // Inline, Fastify infers the route's ContextConfig from the object and intersects it with this one, so a
  // string or a misspelt key there passes the compiler (start-up refuses the string); typed, neither does.
  expect<FastifyContextConfig>().type.not.toBeAssignableFrom({ membersOnly: 'staff' })
  expect<FastifyContextConfig>().type.not.toBeAssignableFrom({ membersOnly: { group: ['staff'] } })
  expect<FastifyContextConfig>().type.not.toBeAssignableFrom({ membersOnly: { groups: ['staff'], title: 403 } })
})

test('fastify.membersOnly() is a preHandler', () => {
  expect(app.membersOnly()).type.toBe<preHandlerHookHandler>()
  expect(app.membersOnly).type.toBeCallableWith({ groups: ['staff'] })
  expect(app.get).type.toBeCallableWith('/staff', { preHandler: [app.membersOnly({ groups: ['staff'] })] }, async () => 'staff')
})

test('request.schoolsMember is the member the guard let in, read-only', () => {
  expect<FastifyRequest['schoolsMember']>().type.toBe<Member | undefined>()
  expect<FastifyRequest>().type.toHaveProperty('schoolsMember')
})

test('the section\'s own marks are symbols, not names a host could clash with', () => {
  type Names = Extract<keyof FastifyContextConfig, string>
  expect<Names>().type.toBe<'membersOnly'>()
})
