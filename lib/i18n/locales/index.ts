// The locales the package ships: English, the source, and its translations (docs/languages.md says which
// were reviewed by a fluent speaker). Each has every key of English (the type and a test see to it).
import en, { type Catalogue } from './en.js'

export const shippedCatalogues: Readonly<Record<string, Catalogue>> = { en }
