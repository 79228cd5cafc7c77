// Which part of a Node process a native symbol belongs to, for the profiles that read symbols
// (bench/instructions.mjs from callgrind, bench/time-split.mjs from perf). Anchored to V8's own
// namespaces: Node's HTTP parser (node::http_parser::Parser) and V8's allocation (Heap::Allocate...) are a
// request's own work and stay out of both.

/** V8's compilers, its JavaScript parser and its bytecode generator. */
export const COMPILERS = /v8::internal::(?:compiler::|maglev::|baseline::|Compiler::|Parser|ParserBase|PreParser|Scanner|interpreter::BytecodeGenerator|BytecodeArrayBuilder|OptimizingCompileDispatcher|wasm::)/

/** V8's garbage collector (and cppgc, the collector of C++ objects). */
export const COLLECTOR = /v8::internal::(?:Scavenge|Scavenger|MarkCompact|MinorMarkSweep|MinorMS|ConcurrentMarking|MarkingVisitor|MainMarkingVisitor|ConcurrentMarkingVisitor|MarkingBarrier|MarkingWorklist|IncrementalMarking|Sweeper|Evacuat|RememberedSet|EphemeronRememberedSet|GCTracer|\(anonymous namespace\)::IterateObjectCache|LiveObjectVisitor|PointersUpdatingVisitor|RootScavengeVisitor|Heap::(?:CollectGarbage|PerformGarbageCollection|Scavenge|MarkCompact|IterateRoots))|heap::base::|cppgc::/
