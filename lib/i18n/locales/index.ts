// The locales the package ships: English, the source, and its translations (docs/languages.md says which
// were reviewed by a fluent speaker). Each has every key of English (the type and a test see to it).
import en, { type Catalogue } from './en.js'
import cy from './cy.js'
import de from './de.js'
import es from './es.js'
import fr from './fr.js'

export const shippedCatalogues: Readonly<Record<string, Catalogue>> = { en, cy, de, es, fr }
