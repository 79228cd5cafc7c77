// German: every key of en.ts, in the same sections (docs/languages.md says who reviewed it).
import type { Catalogue } from './en.js'

const de: Catalogue = {
  // --- The layout and what every page shares (lib/pages/views.ts) ---
  'site.name': 'Schulmaterialien',
  'layout.skipLink': 'Zum Inhalt springen',
  'layout.title': '{page} | {site}',
  'layout.accountNav': 'Konto',
  'layout.allResources': 'Alle Materialien',
  'nav.signedInAs': 'Angemeldet als <strong>{name}</strong>',
  'nav.signIn': 'Anmelden',
  'nav.signOut': 'Abmelden',
  'nav.signOutEverywhere': 'Auf allen Geräten abmelden',

  // --- Pages (lib/pages/views.ts) ---

  // --- Sign-in, password reset and JSON messages (lib/sign-in, lib/password-reset, lib/access) ---

  // --- The 500 and 503 pages (lib/pages/server-error.ts, lib/pages/unavailable.ts) ---
  'serverError.title': 'Etwas ist schiefgelaufen',
  'serverError.message': 'Bei uns ist etwas schiefgelaufen. Bitte versuchen Sie es später noch einmal.',
  'serverError.code': 'Fehlercode: {code}',
  'unavailable.title': 'Vorübergehend nicht verfügbar',
  'unavailable.message': 'Dieser Teil der Website ist kurz nicht verfügbar. Bitte versuchen Sie es gleich noch einmal.',
  'unavailable.signedOut.title': 'In diesem Browser abgemeldet',
  'unavailable.signedOut.message': 'Sie sind in diesem Browser abgemeldet. Ein Teil der Website ist kurz nicht verfügbar, daher hat die Abmeldung möglicherweise noch nicht alle Server erreicht: Schließen Sie an einem gemeinsam genutzten Computer auch den Browser.',
  'unavailable.othersKept.title': 'Nur in diesem Browser abgemeldet',
  'unavailable.othersKept.message': 'Sie sind in diesem Browser abgemeldet, auf Ihren anderen Geräten jedoch nicht: Ein Teil der Website ist kurz nicht verfügbar. Melden Sie sich in ein paar Minuten wieder an und wählen Sie noch einmal „Auf allen Geräten abmelden“.'
}

export default de
