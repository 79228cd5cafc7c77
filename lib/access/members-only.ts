import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, preHandlerHookHandler, RouteOptions } from 'fastify'
import type { AnonymousRedirect, MembersOnlyOptions } from '../types.js'
import { errorCodes } from '../errors.js'
import { kMembersOnlyGuarded } from '../symbols.js'
import { isGroupList } from '../session/member.js'
import { shortCircuitMark } from '../session/anonymous-short-circuit.js'
import { fixedAccessGuard, isGranted, type AccessGuardDeps, type Protected } from './access-guard.js'

const { FST_SR_INVALID_OPTION, FST_SR_UNGUARDED_ROUTE } = errorCodes

/** What the 403 page names when the route gives no title. */
export const DEFAULT_TITLE = 'this page'
const SETTINGS = new Set(['groups', 'title'])

export interface MembersOnlyDeps extends Pick<AccessGuardDeps, 'memberOf' | 'pages' | 'answerError'> {
  /** The section's login redirect (then the refused index redirect), for visitors. */
  anonymous: AnonymousRedirect
  /** Whether members come from the session alone, so the anonymous short-circuit may answer for these routes. */
  sessionDecides: boolean
}

function fail (name: string, why: string, where: string): never {
  throw new FST_SR_INVALID_OPTION(name, `${why}, ${where}`)
}

/**
 * What `membersOnly` asks for, checked: undefined for an open route (`false` or absent). Anything that is
 * not `true`, `false` or `{ groups?, title? }` with the right shapes is refused, so that a typo cannot
 * leave a route open (`{ group: ['staff'] }`) or closed to everyone (`groups: []`).
 */
export function membersOnlyTarget (value: unknown, where: string): Protected | undefined {
  if (value === undefined || value === false) return undefined
  if (value === true) return { title: DEFAULT_TITLE }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('membersOnly', 'must be true, false or { groups?, title? }', where)
  for (const key of Object.keys(value)) {
    if (!SETTINGS.has(key)) fail(`membersOnly.${key}`, 'is not a setting of membersOnly (known: groups, title)', where)
  }
  const { groups, title } = value as Record<string, unknown>
  if (groups !== undefined && (!isGroupList(groups) || groups.length === 0)) fail('membersOnly.groups', 'must be a non-empty list of group names', where)
  if (title !== undefined && (typeof title !== 'string' || title.trim() === '')) fail('membersOnly.title', 'must be a non-empty string', where)
  const target: Protected = { title: title ?? DEFAULT_TITLE }
  if (groups !== undefined) target.audience = Object.freeze([...groups])
  return target
}

type Hooks = RouteOptions['preHandler']

function hookList (hooks: Hooks): unknown[] {
  return hooks === undefined ? [] : [hooks].flat()
}

/**
 * Members-only pages of the host, in the context the section is registered in and every context under
 * it: `config: { membersOnly }` on a route, or `preHandler: fastify.membersOnly()`. The first section
 * registered in a context owns them; a later one there (or in a child) leaves them to it, so no route
 * gets two guards or two sets of settings.
 *
 * - A route registered after the section is seen by its onRoute hook: the guard becomes the route's own
 *   first preHandler, so every instance hook of the host runs before it and the route's own preHandlers
 *   (which may load the member's data) after it. Its config is marked for the anonymous short-circuit.
 *   A bad `membersOnly` throws there, failing start-up.
 * - A route registered before it (onRoute never sees those) is still guarded: Fastify gives an instance
 *   hook to every route of the context and of its children, whenever they were registered, so an instance
 *   preHandler guards whatever the onRoute hook did not mark, on the first request checking its config.
 */
export function guardHostRoutes (fastify: FastifyInstance, deps: MembersOnlyDeps): void {
  if (fastify.hasDecorator('membersOnly')) return
  const fromDecorator = new WeakSet<object>()
  const guardDeps: AccessGuardDeps = { memberOf: deps.memberOf, pages: deps.pages, answerError: deps.answerError, ...deps.anonymous }

  fastify.decorate('membersOnly', function membersOnly (options?: MembersOnlyOptions): preHandlerHookHandler {
    const where = 'in fastify.membersOnly()'
    if (options !== undefined && (options === null || typeof options !== 'object')) fail('membersOnly', 'must be { groups?, title? } or nothing', where)
    const hook = fixedAccessGuard(guardDeps, membersOnlyTarget(options ?? true, where)!)
    fromDecorator.add(hook)
    return hook
  })

  fastify.addHook('onRoute', function membersOnlyRoute (route) {
    const where = `on the route ${String(route.method)} ${route.url}`
    const target = membersOnlyTarget(route.config?.membersOnly, where)
    const own = hookList(route.preHandler)
    const decorated = own.some((hook) => fromDecorator.has(hook as object))
    if (target === undefined && !decorated) return
    if (target !== undefined && decorated) fail('membersOnly', 'is given twice: use the route config or fastify.membersOnly(), not both', where)
    // A new object: the host may share one config object between routes, some of them seen here and some not.
    route.config = { ...route.config, [kMembersOnlyGuarded]: true, ...shortCircuitMark(deps.anonymous, deps.sessionDecides) }
    if (target !== undefined) route.preHandler = [fixedAccessGuard(guardDeps, target), ...own] as Hooks
    // The route is marked guarded, so the fallback below leaves it alone; should an onRoute hook added
    // after ours replace its preHandler list (guard and all), the handler refuses rather than serve open.
    const handler = route.handler
    const url = `${String(route.method)} ${route.url}`
    route.handler = function membersOnlyHandler (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      if (!isGranted(request)) throw new FST_SR_UNGUARDED_ROUTE(url)
      return handler.call(this, request, reply)
    }
  })

  // Per route (its config object): the guard, or null for `membersOnly: false`.
  const lateGuards = new WeakMap<object, preHandlerHookHandler | null>()
  fastify.addHook('preHandler', function membersOnlyEarlierRoutes (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const config = request.routeOptions.config
    // Marked: the route's own guard comes later. Granted: a section in an outer context guarded it first.
    if (config.membersOnly === undefined || config[kMembersOnlyGuarded] === true || isGranted(request)) {
      done()
      return
    }
    let guard = lateGuards.get(config)
    if (guard === undefined) {
      let target
      try {
        target = membersOnlyTarget(config.membersOnly, `on the route ${String(config.method)} ${config.url}`)
      } catch (error) {
        // Registered before the section, this route could not fail start-up: it fails closed instead.
        done(error as Error)
        return
      }
      guard = target === undefined ? null : fixedAccessGuard(guardDeps, target)
      lateGuards.set(config, guard)
    }
    if (guard === null) done()
    else guard.call(this, request, reply, done)
  })
}
