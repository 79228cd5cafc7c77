import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, preHandlerHookHandler, RouteOptions } from 'fastify'
import type { MembersOnlyOptions } from '../types.js'
import { errorCodes } from '../errors.js'
import { invalidOption } from '../option-checks.js'
import { kMembersOnlyGuarded } from '../symbols.js'
import { warnHostMistakeOnce } from '../warnings.js'
import { isGroupList } from '../session/member.js'
import { grantedAccess, isGranted, type Protected } from './access-guard.js'
import { hostRouteKit, type HostRouteDeps } from './members-only-kit.js'

const { FST_SR_SECTION_ENCAPSULATED, FST_SR_UNGUARDED_ROUTE } = errorCodes

const SETTINGS = new Set(['groups', 'title'])

/**
 * What `membersOnly` asks for, checked: undefined for an open route (`false` or absent). Anything that is
 * not `true`, `false` or `{ groups?, title? }` with the right shapes is refused, so that a typo cannot
 * leave a route open (`{ group: ['staff'] }`) or closed to everyone (`groups: []`).
 */
function membersOnlyTarget (value: unknown, where: string): Protected | undefined {
  if (value === undefined || value === false) return undefined
  // No title: the 403 page names "this page" in its own language (message forbidden.thisPage).
  if (value === true) return {}
  if (value === null || typeof value !== 'object' || Array.isArray(value)) invalidOption('membersOnly', `must be true, false or { groups?, title? }, ${where}`)
  for (const key of Object.keys(value)) {
    if (!SETTINGS.has(key)) invalidOption(`membersOnly.${key}`, `is not a setting of membersOnly (known: groups, title), ${where}`)
  }
  const { groups, title } = value as Record<string, unknown>
  if (groups !== undefined && (!isGroupList(groups) || groups.length === 0)) invalidOption('membersOnly.groups', `must be a non-empty list of group names, ${where}`)
  if (title !== undefined && (typeof title !== 'string' || title.trim() === '')) invalidOption('membersOnly.title', `must be a non-empty string, ${where}`)
  const target: Protected = title === undefined ? {} : { title }
  if (groups !== undefined) target.audience = Object.freeze([...groups])
  return target
}

type Hooks = RouteOptions['preHandler']

function hookList (hooks: Hooks): unknown[] {
  return hooks === undefined ? [] : [hooks].flat()
}

/**
 * Right after the guard on a route whose schema is validated after it (`attachValidation` set by the
 * section): the validation error Fastify attached, for a request the guard let in. So a visitor gets the
 * login redirect and an outsider the 403, never a 400 naming the route's schema; a member gets the same
 * 400 as without the guard, before the route's own preHandlers run.
 */
function validationAfterGuard (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(request.validationError)
}

/** What a section registered inside an encapsulated plugin does: fail start-up (the default), or start and warn. */
export type MembersOnlyOutsideSection = 'fail' | 'warn'

/** The `membersOnlyOutsideSection` option: left out (fail closed), or `'warn'` to start with today's warning. */
export function parseMembersOnlyOutsideSection (value: unknown, name = 'membersOnlyOutsideSection'): MembersOnlyOutsideSection {
  if (value === undefined) return 'fail'
  if (value !== 'warn') invalidOption(name, '\'warn\' starts a section inside an encapsulated plugin with a warning; leave it out to fail start-up there')
  return value
}

/**
 * The section sees the routes of its own context and of the contexts under it, never those of a sibling.
 * Fastify names the plugins of a context from its root: the app's own context starts with `fastify`, an
 * encapsulated plugin's with that plugin (fastify-plugin plugins join their parent's). Registered inside
 * an encapsulated plugin (an @fastify/autoload file without fastify-plugin, say), a `config.membersOnly`
 * route outside it would be served open: start-up fails naming the plugin and the fixes, or, with
 * `membersOnlyOutsideSection: 'warn'`, the same is said once in the log.
 */
function refuseIfEncapsulated (fastify: FastifyInstance, outside: MembersOnlyOutsideSection): void {
  const plugin = fastify.pluginName.split(' -> ')[0]
  if (plugin === 'fastify') return
  const error = new FST_SR_SECTION_ENCAPSULATED(JSON.stringify(plugin))
  if (outside === 'fail') throw error
  warnHostMistakeOnce(fastify.log, `${error.code}:${plugin}`, { code: error.code, plugin, pluginName: fastify.pluginName },
    `${error.message} (membersOnlyOutsideSection: 'warn' keeps this a warning)`)
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
export function guardHostRoutes (fastify: FastifyInstance, deps: HostRouteDeps, outside: MembersOnlyOutsideSection): void {
  if (fastify.hasDecorator('membersOnly')) return
  refuseIfEncapsulated(fastify, outside)
  // Each decorated guard and what it lets in.
  const fromDecorator = new WeakMap<object, Protected>()
  // The host route gets the section's headers on the 403 page the section answers there.
  const kit = hostRouteKit(deps)

  // The member a guard admitted, for the route's own hooks and handler: host code never reads the session.
  fastify.decorateRequest('schoolsMember', { getter (this: FastifyRequest) { return grantedAccess(this)?.member } })

  fastify.decorate('membersOnly', function membersOnly (options?: MembersOnlyOptions): preHandlerHookHandler {
    const where = 'in fastify.membersOnly()'
    if (options !== undefined && (options === null || typeof options !== 'object')) invalidOption('membersOnly', `must be { groups?, title? } or nothing, ${where}`)
    const target = membersOnlyTarget(options ?? true, where)!
    const hook = kit.guard(target)
    fromDecorator.set(hook, target)
    return hook
  })

  fastify.addHook('onRoute', function membersOnlyRoute (route) {
    const where = `on the route ${String(route.method)} ${route.url}`
    const target = membersOnlyTarget(route.config?.membersOnly, where)
    const own = hookList(route.preHandler)
    const decorated = own.flatMap((hook) => fromDecorator.get(hook as object) ?? [])
    if (target === undefined && decorated.length === 0) return
    if (target !== undefined && decorated.length > 0) invalidOption('membersOnly', `is given twice: use the route config or fastify.membersOnly(), not both, ${where}`)
    // A new object: the host may share one config object between routes, some of them seen here and some not.
    route.config = { ...route.config, [kMembersOnlyGuarded]: true, ...kit.config() }
    const hooks = target === undefined ? own : [kit.guard(target), ...own]
    // Fastify validates the schema before every preHandler: with the guard first in the list (the config
    // form, or the decorator put first), validation waits until the guard has let the request in. A
    // host that set attachValidation itself reads request.validationError in its handler, as before.
    const guardFirst = target !== undefined || fromDecorator.has(own[0] as object)
    if (guardFirst && route.attachValidation !== true) {
      route.attachValidation = true
      hooks.splice(1, 0, validationAfterGuard)
    }
    route.preHandler = hooks as Hooks
    // The route is marked guarded, so the fallback below leaves it alone; should an onRoute hook added
    // after ours replace its preHandler list (guard and all), or put another guard in its place, the
    // handler refuses rather than serve it: it needs the approval of this route's own guards.
    const targets = target === undefined ? decorated : [target]
    const handler = route.handler
    const url = `${String(route.method)} ${route.url}`
    route.handler = function membersOnlyHandler (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      if (!isGranted(request, targets)) throw new FST_SR_UNGUARDED_ROUTE(url)
      return handler.call(this, request, reply)
    }
  })

  // Per route (its config object): the guard, or null for `membersOnly: false`.
  const lateGuards = new WeakMap<object, preHandlerHookHandler | null>()
  fastify.addHook('preHandler', function membersOnlyEarlierRoutes (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const config = request.routeOptions.config
    // Marked: the route's own guard comes later. Granted: a section in an outer context guarded it first
    // (the only guard that runs before this hook: another section's hook like this one, reading the same config).
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
      guard = target === undefined ? null : kit.guard(target)
      lateGuards.set(config, guard)
    }
    if (guard === null) done()
    else guard.call(this, request, reply, done)
  })
}
