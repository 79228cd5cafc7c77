// ESM entry: the CommonJS build re-exported, so that both module systems share one copy of the plugin.
// test/exports.test.ts checks that it exposes exactly what `require` does.
import cjs from './index.js'
import type {
  InMemoryCatalog as InMemoryCatalogInstance,
  MemoryAttemptStore as MemoryAttemptStoreInstance,
  MemoryTokenStore as MemoryTokenStoreInstance,
  SafeHtml as SafeHtmlInstance
} from './index.js'

export type * from './index.js'
// Classes are both a value and a type; the destructured consts below carry only the value.
export type InMemoryCatalog = InMemoryCatalogInstance
export type SafeHtml = SafeHtmlInstance
export type MemoryAttemptStore = MemoryAttemptStoreInstance
export type MemoryTokenStore = MemoryTokenStoreInstance
export const {
  fastifySchoolsResources,
  redirectOnce,
  anonymousShortCircuit,
  InMemoryCatalog,
  defaultViews,
  html,
  unsafeRaw,
  SafeHtml,
  CONTENT_SECURITY_POLICY,
  safeBackUrl,
  signInLimitKeys,
  MemoryAttemptStore,
  MemoryTokenStore,
  storeErrorHandler,
  errorCodes,
  REDIRECT_CONFLICT_WARNING,
  eventChannels,
  subscribeEvent
} = cjs
export default fastifySchoolsResources
