// Loaded first by the example server, before anything else it loads: keeps one of Node's own
// process.nextTick objects alive for the life of the process.
//
// Why: Node builds each tick object as an object literal with computed (symbol) keys, and V8 remembers
// the hidden class seen at each key once. When a full garbage collection finds no tick object alive, it
// drops those hidden classes; the next tick builds new ones, V8 marks the literal megamorphic for good,
// and from then on every process.nextTick goes through V8's runtime. The example's start-up does such a
// collection, so every request paid for it (measured in docs/performance.md). A tick object kept alive
// keeps its hidden classes. Nothing is written to it; it is only referenced. The upstream fix is written
// up in docs/upstream-next-tick.md; this file goes once Node has it.
import { executionAsyncId, executionAsyncResource } from 'node:async_hooks'

/** The tick object kept, and the async id it ran under; set once the tick below has run. */
export const keptTick: { resource?: object, asyncId?: number } = {}

// Queued now, so that a tick object is alive (in Node's queue) through the synchronous loading that
// follows; when it runs, the resource it runs under is that tick object.
process.nextTick(function keepTickObject () {
  keptTick.resource = executionAsyncResource()
  keptTick.asyncId = executionAsyncId()
})
