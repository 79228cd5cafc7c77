import type { FastifySchema } from 'fastify'
import { invalidOption } from '../option-checks.js'

/**
 * The `openapi` option resolved: `false`, the section's routes are hidden from a host's @fastify/swagger
 * (`schema.hide`, which it honours); otherwise they are shown under this tag with their real answers.
 */
export type OpenApi = false | { tag: string }

const DEFAULT_TAG = 'Resources'

export function resolveOpenApi (value: unknown): OpenApi {
  if (value === undefined || value === false) return false
  if (value === true) return { tag: DEFAULT_TAG }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).every((key) => key === 'tag')) {
    const { tag = DEFAULT_TAG } = value as { tag?: unknown }
    if (typeof tag === 'string' && tag.trim() !== '') return { tag }
  }
  invalidOption('openapi', `must be true, false, or { tag: '${DEFAULT_TAG}' } (a non-empty tag)`)
}

const STRING = { type: 'string' } as const

// Fastify's error shape, as the section sends it (sendJsonError, the 404) and as Fastify's own handler
// does for the errors passed on to the host's. Nothing required and more allowed: with the option on,
// Fastify serializes a host error handler's answer on these routes with it, which must not lose a field.
const ERROR_JSON = {
  type: 'object',
  properties: { statusCode: { type: 'integer' }, code: STRING, error: STRING, message: STRING },
  additionalProperties: true
} as const

/**
 * One answer of a route: a page (HTML, or JSON for JSON clients), an error the host's error handler
 * answers (Fastify's own answers JSON), a redirect, a file, or no body.
 */
export type Answer =
  | { kind: 'page', description: string, json?: object }
  | { kind: 'host-error' | 'redirect' | 'empty' | 'file' | 'css', description: string }

export const page = (description: string, json?: object): Answer => ({ kind: 'page', description, json })
export const hostError = (description: string): Answer => ({ kind: 'host-error', description })
export const redirect = (description: string): Answer => ({ kind: 'redirect', description })
export const noBody = (description: string): Answer => ({ kind: 'empty', description })
export const file = (description: string): Answer => ({ kind: 'file', description })
export const css = (description: string): Answer => ({ kind: 'css', description })

/** What a host's OpenAPI document says of a route. */
export interface RouteDoc {
  summary: string
  description: string
  /** The wildcard (`*`) of the route's path, described. */
  wildcard?: string
  /** By status; `undefined` entries (an answer the options rule out) are left out. */
  answers: Record<number, Answer | undefined>
}

function responseSchema (answer: Answer): object {
  const description = answer.description
  switch (answer.kind) {
    case 'page':
      return { description, content: { 'text/html': { schema: STRING }, 'application/json': { schema: answer.json ?? ERROR_JSON } } }
    case 'host-error':
      return { description, content: { 'application/json': { schema: ERROR_JSON } } }
    case 'redirect':
      return { description, type: 'null', headers: { location: { type: 'string', description: 'The absolute address redirected to' } } }
    case 'empty':
      return { description, type: 'null' }
    case 'css':
      return { description, content: { 'text/css': { schema: STRING } } }
    default:
      return { description, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } }
  }
}

/**
 * A route's schema. Hidden (the default): `hide`, and the JSON serialization it has anyway (`serialize`,
 * its 200). Shown: tagged and described, every answer with its media types; the 200's JSON schema is the
 * same, so a JSON client gets the same fields either way.
 */
export function routeSchema (openapi: OpenApi, doc: RouteDoc, serialize?: object): FastifySchema {
  // @fastify/swagger's keys (hide, tags, summary) are not in Fastify's own schema type.
  if (openapi === false) return (serialize === undefined ? { hide: true } : { hide: true, response: { 200: serialize } }) as FastifySchema & { hide: true }
  const response: Record<number, object> = {}
  for (const [status, answer] of Object.entries(doc.answers)) {
    if (answer !== undefined) response[Number(status)] = responseSchema(answer)
  }
  const schema: Record<string, unknown> = { tags: [openapi.tag], summary: doc.summary, description: doc.description, response }
  // Describes the path parameter @fastify/swagger makes of `*`; a string always, so it never refuses a request.
  if (doc.wildcard !== undefined) schema.params = { type: 'object', properties: { '*': { type: 'string', description: doc.wildcard } } }
  return schema as FastifySchema
}

/** What every route that reads the session may answer: the store (Redis) down or slow. */
export const STORE_DOWN = page('Service Unavailable: the session store or the sign-in limits store is down or slow (FST_SR_STORE_UNAVAILABLE, with Retry-After)')
