import t from 'tap'
import { inspect } from 'node:util'
import Fastify from 'fastify'
import { PrivateSlot } from '../lib/symbols.js'

// PrivateSlot: per-request state that only the module holding the slot can read or write, on real
// Fastify requests (what the guard's grant and a page's form token live in).

/** The symbols an outsider can find on an object, with what is under each. */
function visible (owner: object) {
  return Object.getOwnPropertySymbols(owner).map((key) => ({ key, value: (owner as Record<symbol, unknown>)[key] }))
}

t.test('declared once per context: every request has the slot, empty until set', async (t) => {
  const slot = new PrivateSlot<{ name: string }>('test-slot')
  const app = Fastify()
  slot.declareOnRequests(app)
  slot.declareOnRequests(app)
  const seen: unknown[] = []
  app.get('/', async (request) => {
    seen.push(slot.get(request))
    slot.set(request, { name: 'Demo Teacher' })
    seen.push(slot.get(request)?.name)
    return 'ok'
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/')).statusCode, 200)
  t.equal((await app.inject('/')).statusCode, 200)
  t.same(seen, [undefined, 'Demo Teacher', undefined, 'Demo Teacher'], 'nothing carries over from one request to the next')
})

t.test('a slot on replies, and one used where it was never declared', async (t) => {
  const slot = new PrivateSlot<string>('reply-slot')
  const app = Fastify()
  slot.declareOnReplies(app)
  slot.declareOnReplies(app)
  app.get('/', async (_request, reply) => {
    slot.set(reply, 'token')
    return slot.get(reply)
  })
  const undeclared = new PrivateSlot<string>('undeclared')
  app.get('/undeclared', async (request) => {
    const before = undeclared.get(request)
    undeclared.set(request, 'added')
    return `${before}, ${undeclared.get(request)}`
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/')).body, 'token')
  t.equal((await app.inject('/undeclared')).body, 'undefined, added')
})

t.test('other code finds the symbol but can neither read, forge nor move the value', async (t) => {
  const slot = new PrivateSlot<{ member: string }>('grant-like')
  const a = {}
  const b = {}
  slot.set(a, { member: 'Demo Teacher' })
  const [{ key, value: box }] = visible(a)
  t.equal(key.description, 'fastify-schools-resources.grant-like')
  t.same(Object.keys(box as object), [], 'the box has no fields to read')
  t.equal(JSON.stringify(box), '{}')
  t.notMatch(inspect(box, { showHidden: true, depth: 5 }), 'Demo Teacher', 'nor does inspecting it show the value')

  ;(b as Record<symbol, unknown>)[key] = box
  t.equal(slot.get(b), undefined, 'a box moved to another object counts for nothing there')
  ;(b as Record<symbol, unknown>)[key] = { member: 'Forged' }
  t.equal(slot.get(b), undefined, 'a plain value put under the symbol is not the slot\'s')
  ;(b as Record<symbol, unknown>)[key] = Object.create(Object.getPrototypeOf(box) as object)
  t.equal(slot.get(b), undefined, 'nor is an object made from the box\'s prototype, and reading it does not throw')
  t.equal(slot.get(a)?.member, 'Demo Teacher', 'the owner\'s own value is untouched')

  const other = new PrivateSlot<{ member: string }>('grant-like')
  t.equal(other.get(a), undefined, 'another slot of the same name (another copy of the package) has its own symbol')
})
