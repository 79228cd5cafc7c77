// Keys of the state this package keeps on Fastify objects. Symbol.for, so that two installed copies of
// the package in one app (say, the host's and a dependency's) find each other's state; and PrivateSlot,
// for state one module keeps to itself. Imports nothing of the package.
import type { FastifyInstance } from 'fastify'

/** On a reply: the Location redirectOnce has sent it to, or null. */
export const kRedirectedTo = Symbol.for('fastify-schools-resources.redirectedTo')

/** On an instance: the options redirectOnce was first registered with. */
export const kRedirectOnceOptions = Symbol.for('fastify-schools-resources.redirectOnceOptions')

/** In a route's config: the login redirect an anonymous visitor gets there (the section's category route). */
export const kAnonymousRedirect = Symbol.for('fastify-schools-resources.anonymousRedirect')

/** In a route's config: set when the route's own first preHandler is the members-only guard (host routes). */
export const kMembersOnlyGuarded = Symbol.for('fastify-schools-resources.membersOnlyGuarded')

/** In a route's config: the sign-out route's CSRF check and session cookie, for a sign-out while the store is down. */
export const kOutageSignOut = Symbol.for('fastify-schools-resources.outageSignOut')

/** On the section's instance: the CSRF tokens already made per value of its own CSRF cookie (session/csrf.ts). */
export const kCsrfTokens = Symbol.for('fastify-schools-resources.csrfTokens')

// Opens a Box; assigned in Box's static block, so that nothing outside this module can.
let openBox: (box: unknown, owner: object) => unknown

/** A value held for one owner (a request or a reply); only this module can read it. */
class Box {
  readonly #owner: object
  readonly #value: unknown
  constructor (owner: object, value: unknown) {
    this.#owner = owner
    this.#value = value
  }

  static {
    openBox = (box, owner) => typeof box === 'object' && box !== null && #owner in box && box.#owner === owner ? box.#value : undefined
  }
}

/**
 * State one module keeps on every request or reply it serves (a guard's grant, a page's form token).
 * Under a symbol of its own, not Symbol.for: per copy of the package, as a WeakMap was. Declared with
 * decorateRequest or decorateReply, so that Fastify's objects keep one shape. Not a WeakMap: an entry
 * with a young key on every page view costs every scavenge (docs/performance.md). The value sits in a
 * Box, so code that finds the symbol can neither read it nor put one there; a box counts only on the
 * object it was made for. What other code can do is drop it, which reads as "nothing there".
 */
export class PrivateSlot<T> {
  readonly #key: symbol

  constructor (name: string) {
    this.#key = Symbol(`fastify-schools-resources.${name}`)
  }

  /** Declares the slot on the requests of `fastify`'s context and below (once per context). */
  declareOnRequests (fastify: FastifyInstance): void {
    if (!fastify.hasRequestDecorator(this.#key)) fastify.decorateRequest(this.#key, null)
  }

  /** Declares the slot on the replies of `fastify`'s context and below (once per context). */
  declareOnReplies (fastify: FastifyInstance): void {
    if (!fastify.hasReplyDecorator(this.#key)) fastify.decorateReply(this.#key, null)
  }

  /** The value set on `owner`; undefined when none was, or when what is there is not this module's. */
  get (owner: object): T | undefined {
    return openBox((owner as Record<symbol, unknown>)[this.#key], owner) as T | undefined
  }

  set (owner: object, value: T): void {
    // A request outside the contexts the slot was declared in gets the property here.
    (owner as Record<symbol, unknown>)[this.#key] = new Box(owner, value)
  }
}
