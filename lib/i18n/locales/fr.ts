// French: every key of en.ts, in the same sections (docs/languages.md says who reviewed it).
import type { Catalogue } from './en.js'

const fr: Catalogue = {
  // --- The layout and what every page shares (lib/pages/views.ts) ---
  'site.name': 'Ressources scolaires',
  'layout.skipLink': 'Aller au contenu',
  'layout.title': '{page} | {site}',
  'layout.accountNav': 'Compte',
  'layout.allResources': 'Toutes les ressources',
  'nav.signedInAs': 'Connecté en tant que <strong>{name}</strong>',
  'nav.signIn': 'Se connecter',
  'nav.signOut': 'Se déconnecter',
  'nav.signOutEverywhere': 'Se déconnecter de tous les appareils',

  // --- Pages (lib/pages/views.ts) ---

  // --- Sign-in, password reset and JSON messages (lib/sign-in, lib/password-reset, lib/access) ---

  // --- The 500 and 503 pages (lib/pages/server-error.ts, lib/pages/unavailable.ts) ---
  'serverError.title': 'Une erreur est survenue',
  'serverError.message': 'Une erreur est survenue de notre côté. Veuillez réessayer plus tard.',
  'serverError.code': 'Code d’erreur : {code}',
  'unavailable.title': 'Temporairement indisponible',
  'unavailable.message': 'Cette partie du site est brièvement indisponible. Veuillez réessayer dans un instant.',
  'unavailable.signedOut.title': 'Déconnecté sur ce navigateur',
  'unavailable.signedOut.message': 'Vous êtes déconnecté sur ce navigateur. Une partie du site est brièvement indisponible, la déconnexion n’a donc peut-être pas encore atteint tous les serveurs : sur un ordinateur partagé, fermez aussi le navigateur.',
  'unavailable.othersKept.title': 'Déconnecté sur ce navigateur seulement',
  'unavailable.othersKept.message': 'Vous êtes déconnecté sur ce navigateur, mais vos autres appareils ne l’ont pas été : une partie du site est brièvement indisponible. Dans quelques minutes, reconnectez-vous et choisissez de nouveau « Se déconnecter de tous les appareils ».'
}

export default fr
