import createError from '@fastify/error'

/** A plugin option is missing or has the wrong shape; fails `app.ready()`. */
export const FST_SR_INVALID_OPTION = createError<[string, string]>(
  'FST_SR_INVALID_OPTION',
  'fastify-schools-resources: invalid option "%s": %s',
  500,
  TypeError
)

/** `reply.redirectOnce` was given a status code that is not a redirect. */
export const FST_SR_INVALID_REDIRECT_CODE = createError<[string]>(
  'FST_SR_INVALID_REDIRECT_CODE',
  'redirectOnce: %s is not a redirect status code (use 300, 301, 302, 303, 307 or 308)',
  500,
  TypeError
)

/** `reply.redirectOnce` was given a URL that cannot be sent as a Location header. */
export const FST_SR_INVALID_REDIRECT_URL = createError<[string]>(
  'FST_SR_INVALID_REDIRECT_URL',
  'redirectOnce: %s cannot be sent as a Location header',
  500,
  TypeError
)

/** The host's `authenticate` option resolved to something that is not a member. */
export const FST_SR_INVALID_MEMBER = createError<[string]>(
  'FST_SR_INVALID_MEMBER',
  'fastify-schools-resources: authenticate() must resolve to a member with a string "id" and "name", or to null; got %s',
  500,
  TypeError
)

/** Code of the Node warning raised when a second, different redirect is refused. */
export const REDIRECT_CONFLICT_WARNING = 'FST_SR_REDIRECT_CONFLICT'

/** Without `baseUrl`, a Host header that is not a plain host[:port] cannot be used to build a Location. */
export const FST_SR_BAD_HOST = createError<[string]>(
  'FST_SR_BAD_HOST',
  'fastify-schools-resources: the Host header %s is not a valid host name; set the baseUrl option to stop using it',
  400
)
