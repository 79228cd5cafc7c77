// ESM entry: the CommonJS build re-exported, so that both module systems share one copy of the plugin.
import cjs from './index.js'
import type {
  InMemoryCatalog as InMemoryCatalogInstance,
  SafeHtml as SafeHtmlInstance,
  MemoryAttemptStore as MemoryAttemptStoreInstance,
  CachedSigner as CachedSignerInstance
} from './index.js'

export type * from './index.js'
// Classes are both a value and a type; the destructured consts below carry only the value.
export type InMemoryCatalog = InMemoryCatalogInstance
export type SafeHtml = SafeHtmlInstance
export type MemoryAttemptStore = MemoryAttemptStoreInstance
export type CachedSigner = CachedSignerInstance
export const {
  fastifySchoolsResources,
  redirectOnce,
  anonymousFastPath,
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
  CONTENT_SECURITY_POLICY,
  FST_SR_INVALID_OPTION,
  FST_SR_INVALID_REDIRECT_CODE,
  FST_SR_INVALID_REDIRECT_URL,
  FST_SR_INVALID_MEMBER,
  FST_SR_BAD_HOST,
  REDIRECT_CONFLICT_WARNING
} = cjs
export default fastifySchoolsResources
