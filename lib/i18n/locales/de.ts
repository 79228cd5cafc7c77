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
  'error.FST_SR_MISSING_CREDENTIALS': 'Geben Sie Ihre E-Mail-Adresse und Ihr Passwort ein.',
  'error.FST_SR_INVALID_CREDENTIALS': 'Die E-Mail-Adresse oder das Passwort ist falsch.',
  'error.FST_SR_LOGIN_RATE_LIMITED': 'Zu viele fehlgeschlagene Anmeldungen von dieser Adresse. Versuchen Sie es nach {time, time, short} erneut.',
  'error.FST_SR_LOCKED_OUT': 'Zu viele fehlgeschlagene Anmeldungen für diese E-Mail-Adresse. Versuchen Sie es nach {time, time, short} erneut.',
  'error.FST_SR_SESSION_RATE_LIMITED': 'Zu viele Anmeldungen bei diesem Konto in der letzten Minute. Versuchen Sie es nach {time, time, short} erneut.',
  'error.FST_SR_SIGN_IN_BUSY': 'Die Anmeldung ist gerade ausgelastet. Bitte versuchen Sie es gleich noch einmal.',
  'error.FST_SR_INSECURE_SIGN_IN': 'Über diese Verbindung können Sie nicht angemeldet werden: Die Website konnte Sie nicht angemeldet halten. Die Administration der Website findet den Grund im Protokoll der Website.',
  'error.FST_SR_OIDC_UNAVAILABLE': 'Die Anmeldung mit {provider} ist kurz nicht verfügbar. Bitte versuchen Sie es gleich noch einmal.',
  'error.FST_SR_FORBIDDEN': 'Sie haben keinen Zugriff auf {page}.',
  'error.formExpired': 'Dieses Formular ist abgelaufen. Bitte versuchen Sie es noch einmal.',
  'error.notFound': 'Unter dieser Adresse gibt es im Bereich der Materialien keine Seite.',
  'login.error.oidcSchoolAccount': 'Melden Sie sich mit Ihrem Schulkonto an.',
  'login.error.oidcNoMember': 'Zu dieser Adresse gibt es kein Mitgliedskonto.',
  'login.error.oidcFailed': 'Die Anmeldung mit {provider} konnte nicht abgeschlossen werden. Bitte versuchen Sie es noch einmal.',
  'login.error.oidcCancelled': 'Die Anmeldung mit {provider} wurde abgebrochen.',
  'login.error.oidcCookieLost': 'Ihr Browser hat das Anmelde-Cookie nicht behalten; bitte versuchen Sie es noch einmal.',
  'login.notice.idle': 'Sie wurden nach {duration} ohne Aktivität abgemeldet. Melden Sie sich erneut an, um fortzufahren.',
  'login.notice.absolute': 'Sie wurden {duration} nach der Anmeldung abgemeldet. Melden Sie sich erneut an, um fortzufahren.',
  'duration.hours': '{n, plural, one {# Stunde} other {# Stunden}}',
  'duration.minutes': '{n, plural, one {# Minute} other {# Minuten}}',
  'duration.seconds': '{n, plural, one {# Sekunde} other {# Sekunden}}',
  'reset.error.emailMissing': 'Geben Sie die E-Mail-Adresse ein, mit der Sie sich anmelden.',
  'reset.error.linkUnusable': 'Dieser Link ist abgelaufen oder wurde bereits verwendet. Fordern Sie unten einen neuen an.',
  'reset.error.linkIncomplete': 'Dieser Link ist unvollständig: Öffnen Sie ihn noch einmal aus Ihrer E-Mail, oder fordern Sie unten einen neuen an.',
  'reset.error.tooManyTries': 'Dieser Link wurde zu oft versucht. Fordern Sie unten einen neuen an.',
  'reset.error.passwordsDiffer': 'Die beiden Passwörter stimmen nicht überein. Geben Sie das neue Passwort zweimal ein.',
  'reset.error.notChanged': 'Ihr Passwort konnte nicht geändert werden. Bitte versuchen Sie es gleich noch einmal.',
  'reset.error.passwordTooShort': 'Wählen Sie ein Passwort mit mindestens {min, plural, one {# Zeichen} other {# Zeichen}}: Ein paar Wörter, die Sie sich gut merken können, eignen sich gut.',
  'reset.error.passwordTooLong': 'Wählen Sie ein Passwort mit höchstens {max, plural, one {# Zeichen} other {# Zeichen}}.',
  'reset.error.passwordIsEmail': 'Wählen Sie ein Passwort, das nicht Ihre E-Mail-Adresse ist.',
  'reset.error.passwordCommon': 'Dieses Passwort gehört zu den häufigsten und ist daher leicht zu erraten. Wählen Sie ein anderes.',

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
