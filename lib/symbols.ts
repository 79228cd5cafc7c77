// Keys of the state this package keeps on Fastify objects. Symbol.for, so that two installed copies of
// the package in one app (say, the host's and a dependency's) find each other's state. Imports nothing of
// the package.

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

/** On an instance: the section's answer language (pages/answer-language.ts), for its 500 and 503 pages. */
export const kAnswerLanguage = Symbol.for('fastify-schools-resources.answerLanguage')
