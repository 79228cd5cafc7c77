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
  'error.FST_SR_MISSING_CREDENTIALS': 'Introduzca su dirección de correo electrónico y su contraseña.',
  'error.FST_SR_INVALID_CREDENTIALS': 'La dirección de correo electrónico o la contraseña no son correctas.',
  'error.FST_SR_LOGIN_RATE_LIMITED': 'Demasiados intentos fallidos de inicio de sesión desde esta dirección. Vuelva a intentarlo después de las {time, time, short}.',
  'error.FST_SR_LOCKED_OUT': 'Demasiados intentos fallidos de inicio de sesión para esta dirección de correo electrónico. Vuelva a intentarlo después de las {time, time, short}.',
  'error.FST_SR_SESSION_RATE_LIMITED': 'Demasiados inicios de sesión en esta cuenta en el último minuto. Vuelva a intentarlo después de las {time, time, short}.',
  'error.FST_SR_SIGN_IN_BUSY': 'El inicio de sesión está ocupado. Vuelva a intentarlo en un momento.',
  'error.FST_SR_INSECURE_SIGN_IN': 'No se puede iniciar su sesión a través de esta conexión: el sitio no ha podido mantenerla abierta. Su administrador puede encontrar el motivo en el registro del sitio.',
  'error.FST_SR_OIDC_UNAVAILABLE': 'El inicio de sesión con {provider} no está disponible por unos instantes. Vuelva a intentarlo en un momento.',
  'error.FST_SR_FORBIDDEN': 'No tiene acceso a {page}.',
  'error.formExpired': 'Este formulario ha caducado. Vuelva a intentarlo.',
  'error.notFound': 'No hay ninguna página en esta dirección de la sección de recursos.',
  'login.error.oidcSchoolAccount': 'Utilice la cuenta del centro educativo para iniciar sesión.',
  'login.error.oidcNoMember': 'No hay ninguna cuenta de miembro para esta dirección.',
  'login.error.oidcFailed': 'No se ha podido completar el inicio de sesión con {provider}. Vuelva a intentarlo.',
  'login.error.oidcCancelled': 'Se ha cancelado el inicio de sesión con {provider}.',
  'login.error.oidcCookieLost': 'Su navegador no ha conservado la cookie de inicio de sesión; vuelva a intentarlo.',
  'login.notice.idle': 'Se ha cerrado su sesión tras {duration} sin actividad. Vuelva a iniciar sesión para continuar.',
  'login.notice.absolute': 'Se ha cerrado su sesión {duration} después de iniciarla. Vuelva a iniciar sesión para continuar.',
  'duration.hours': '{n, plural, one {# hora} many {# horas} other {# horas}}',
  'duration.minutes': '{n, plural, one {# minuto} many {# minutos} other {# minutos}}',
  'duration.seconds': '{n, plural, one {# segundo} many {# segundos} other {# segundos}}',
  'reset.error.emailMissing': 'Introduzca la dirección de correo electrónico con la que inicia sesión.',
  'reset.error.linkUnusable': 'Este enlace ha caducado o ya se ha utilizado. Solicite uno nuevo a continuación.',
  'reset.error.linkIncomplete': 'Este enlace no está completo: vuelva a abrirlo desde su correo electrónico o solicite uno nuevo a continuación.',
  'reset.error.tooManyTries': 'Este enlace se ha probado demasiadas veces. Solicite uno nuevo a continuación.',
  'reset.error.passwordsDiffer': 'Las dos contraseñas no coinciden. Escriba la nueva contraseña dos veces.',
  'reset.error.notChanged': 'No se ha podido cambiar su contraseña. Vuelva a intentarlo en un momento.',
  'reset.error.passwordTooShort': 'Elija una contraseña de al menos {min, plural, one {# carácter} many {# caracteres} other {# caracteres}}: unas cuantas palabras que vaya a recordar funcionan bien.',
  'reset.error.passwordTooLong': 'Elija una contraseña de como máximo {max, plural, one {# carácter} many {# caracteres} other {# caracteres}}.',
  'reset.error.passwordIsEmail': 'Elija una contraseña que no sea su dirección de correo electrónico.',
  'reset.error.passwordCommon': 'Esa contraseña es una de las más comunes, por lo que es fácil de adivinar. Elija otra.',

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
