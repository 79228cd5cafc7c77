// reply.redirectOnce and the redirectOnce plugin, as the package declares them into Fastify's types.
import Fastify, { type FastifyReply } from 'fastify'
import { expect, test } from 'tstyche'
import { redirectOnce, type RedirectOnceOptions, type RedirectStatusCode } from 'fastify-schools-resources'

const app = Fastify()

test('the plugin takes baseUrl and conflictLog', () => {
  expect(app.register).type.toBeCallableWith(redirectOnce)
  expect(app.register).type.toBeCallableWith(redirectOnce, { baseUrl: 'https://www.example.org', conflictLog: { summaryIntervalMs: 60_000 } })
  expect<RedirectOnceOptions>().type.not.toBeAssignableFrom({ conflictLog: 'sometimes' })
})

test('returns the reply, or undefined when it refused a second target', () => {
  expect<ReturnType<FastifyReply['redirectOnce']>>().type.toBe<FastifyReply | undefined>()
})

test('takes the redirect status codes as literals', () => {
  expect<RedirectStatusCode>().type.toBe<300 | 301 | 302 | 303 | 307 | 308>()
  const reply = {} as FastifyReply
  expect(reply.redirectOnce).type.toBeCallableWith('/next')
  expect(reply.redirectOnce).type.toBeCallableWith('/next', 300)
  expect(reply.redirectOnce).type.toBeCallableWith('/next', 301)
  expect(reply.redirectOnce).type.toBeCallableWith('/next', 302)
  expect(reply.redirectOnce).type.toBeCallableWith('/next', 303)
  expect(reply.redirectOnce).type.toBeCallableWith('/next', 307)
  expect(reply.redirectOnce).type.toBeCallableWith('/next', 308)
  expect(reply.redirectOnce).type.not.toBeCallableWith('/next', 200)
  expect(reply.redirectOnce).type.not.toBeCallableWith('/next', 304)
  expect(reply.redirectOnce).type.not.toBeCallableWith('/next', 404)
  expect(reply.redirectOnce).type.not.toBeCallableWith('/next', '302')
})

test('still takes a number a host has (checked when it runs: FST_SR_INVALID_REDIRECT_CODE)', () => {
  const reply = {} as FastifyReply
  const fromSettings: number = Number(process.env.REDIRECT_CODE ?? 302)
  expect(reply.redirectOnce).type.toBeCallableWith('/next', fromSettings)
  const union: 301 | 302 = fromSettings === 301 ? 301 : 302
  expect(reply.redirectOnce).type.toBeCallableWith('/next', union)
  const wrong: 302 | 200 = fromSettings === 200 ? 200 : 302
  expect(reply.redirectOnce).type.not.toBeCallableWith('/next', wrong)
})

test('the target is a string', () => {
  const reply = {} as FastifyReply
  expect(reply.redirectOnce).type.not.toBeCallableWith(42)
  expect(reply.redirectOnce).type.not.toBeCallableWith(new URL('https://www.example.org/'))
})
