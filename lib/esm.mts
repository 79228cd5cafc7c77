// ESM entry: the CommonJS build re-exported, so that both module systems share one copy of the plugin.
import cjs from './index.js'
import type {
  InMemoryCatalog as InMemoryCatalogInstance,
  SafeHtml as SafeHtmlInstance,
  MemoryAttemptStore as MemoryAttemptStoreInstance,
  CachedSigner as CachedSignerInstance,
  RedisSessionStore as RedisSessionStoreInstance,
  RedisAttemptStore as RedisAttemptStoreInstance
} from './index.js'

export type * from './index.js'
// Classes are both a value and a type; the destructured consts below carry only the value.
export type InMemoryCatalog = InMemoryCatalogInstance
export type SafeHtml = SafeHtmlInstance
export type MemoryAttemptStore = MemoryAttemptStoreInstance
export type CachedSigner = CachedSignerInstance
export type RedisSessionStore = RedisSessionStoreInstance
export type RedisAttemptStore = RedisAttemptStoreInstance
export const {
  fastifySchoolsResources,
  redirectOnce,
  anonymousFastPath,
  resourcesSession,
  CachedSigner,
  REDIRECT_STATUS_CODES,
  InMemoryCatalog,
  isSlug,
  defaultViews,
  defaultStylesheet,
  html,
  unsafeRaw,
  SafeHtml,
  phpUrlencode,
  loginRedirectUrl,
  safeBackUrl,
  MAX_BACK_URL_LENGTH,
  MemoryAttemptStore,
  RedisSessionStore,
  RedisAttemptStore,
  redisRateLimitStore,
  FST_SR_STORE_UNAVAILABLE,
  isStoreUnavailable,
  sendStoreUnavailable,
  storeErrorHandler,
  STORE_RETRY_AFTER_SECONDS,
  CONTENT_SECURITY_POLICY,
  FST_SR_INVALID_OPTION,
  FST_SR_INVALID_REDIRECT_CODE,
  FST_SR_INVALID_REDIRECT_URL,
  FST_SR_INVALID_MEMBER,
  FST_SR_BAD_HOST,
  REDIRECT_CONFLICT_WARNING
} = cjs
export default fastifySchoolsResources
