import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { ACCEPT_ANSWERS_KEPT, wantsJson } from '../../lib/pages/negotiation.js'

async function app (t: Test) {
  const fastify = Fastify()
  t.teardown(() => fastify.close())
  fastify.get('/', async (request) => ({ json: wantsJson(request) }))
  return async (accept?: string) => (await fastify.inject({ url: '/', headers: accept === undefined ? {} : { accept } })).json().json as boolean
}

t.test('HTML unless the client prefers JSON; HTML on a tie', async (t) => {
  const ask = await app(t)
  const cases: Array<[string | undefined, boolean]> = [
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
    ['application/json', true],
    ['application/json, text/plain, */*', true],
    ['application/*', true],
    ['text/html;q=0.5, application/json', true],
    ['text/html, application/json', false],
    ['text/html;q=0, */*;q=0.1', true],
    ['image/png', false]
  ]
  for (const [accept, json] of cases) {
    t.equal(await ask(accept), json, String(accept))
    t.equal(await ask(accept), json, `${String(accept)}, asked again`)
  }
})

t.test('at most ACCEPT_ANSWERS_KEPT headers are kept, and the answers stay right past it', async (t) => {
  const ask = await app(t)
  for (let i = 0; i < ACCEPT_ANSWERS_KEPT + 10; i++) {
    const json = i % 2 === 0
    t.equal(await ask(json ? `application/json, text/x-${i}` : `text/html, text/x-${i}`), json)
  }
  t.equal(await ask('application/json, text/x-0'), true, 'an answer that went is worked out again')
})
