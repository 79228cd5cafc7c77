// Spanish: every key of en.ts, in the same sections (docs/languages.md says who reviewed it).
import type { Catalogue } from './en.js'

const es: Catalogue = {
  // --- The layout and what every page shares (lib/pages/views.ts) ---
  'site.name': 'Recursos escolares',
  'layout.skipLink': 'Ir al contenido',
  'layout.title': '{page} | {site}',
  'layout.accountNav': 'Cuenta',
  'layout.allResources': 'Todos los recursos',
  'nav.signedInAs': 'Sesión iniciada como <strong>{name}</strong>',
  'nav.signIn': 'Iniciar sesión',
  'nav.signOut': 'Cerrar sesión',
  'nav.signOutEverywhere': 'Cerrar sesión en todos los dispositivos',

  // --- Pages (lib/pages/views.ts) ---

  // --- Sign-in, password reset and JSON messages (lib/sign-in, lib/password-reset, lib/access) ---

  // --- The 500 and 503 pages (lib/pages/server-error.ts, lib/pages/unavailable.ts) ---
  'serverError.title': 'Algo ha salido mal',
  'serverError.message': 'Algo ha salido mal por nuestra parte. Vuelva a intentarlo más tarde.',
  'serverError.code': 'Código de error: {code}',
  'unavailable.title': 'No disponible temporalmente',
  'unavailable.message': 'Esta parte del sitio no está disponible por un momento. Vuelva a intentarlo en unos instantes.',
  'unavailable.signedOut.title': 'Sesión cerrada en este navegador',
  'unavailable.signedOut.message': 'Ha cerrado la sesión en este navegador. Una parte del sitio no está disponible por un momento, así que puede que el cierre de sesión aún no haya llegado a todos los servidores: en un ordenador compartido, cierre también el navegador.',
  'unavailable.othersKept.title': 'Sesión cerrada solo en este navegador',
  'unavailable.othersKept.message': 'Ha cerrado la sesión en este navegador, pero no en sus otros dispositivos: una parte del sitio no está disponible por un momento. Dentro de unos minutos, vuelva a iniciar sesión y elija de nuevo «Cerrar sesión en todos los dispositivos».'
}

export default es
