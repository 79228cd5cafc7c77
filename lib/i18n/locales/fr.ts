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
  'error.FST_SR_MISSING_CREDENTIALS': 'Saisissez votre adresse e-mail et votre mot de passe.',
  'error.FST_SR_INVALID_CREDENTIALS': 'L’adresse e-mail ou le mot de passe est incorrect.',
  'error.FST_SR_LOGIN_RATE_LIMITED': 'Trop de connexions ont échoué depuis cette adresse. Réessayez après {time, time, short}.',
  'error.FST_SR_LOCKED_OUT': 'Trop de connexions ont échoué pour cette adresse e-mail. Réessayez après {time, time, short}.',
  'error.FST_SR_SESSION_RATE_LIMITED': 'Trop de connexions à ce compte au cours de la dernière minute. Réessayez après {time, time, short}.',
  'error.FST_SR_SIGN_IN_BUSY': 'La connexion est très sollicitée. Veuillez réessayer dans un instant.',
  'error.FST_SR_INSECURE_SIGN_IN': 'Vous ne pouvez pas être connecté par cette connexion : le site n’a pas pu garder votre session ouverte. Son administrateur peut en trouver la raison dans le journal du site.',
  'error.FST_SR_OIDC_UNAVAILABLE': 'La connexion avec {provider} est momentanément indisponible. Veuillez réessayer dans un instant.',
  'error.FST_SR_FORBIDDEN': 'Vous n’avez pas accès à {page}.',
  'error.formExpired': 'Ce formulaire a expiré. Veuillez réessayer.',
  'error.notFound': 'Il n’y a aucune page à cette adresse dans l’espace des ressources.',
  'login.error.oidcSchoolAccount': 'Utilisez votre compte de l’établissement pour vous connecter.',
  'login.error.oidcNoMember': 'Aucun compte membre ne correspond à cette adresse.',
  'login.error.oidcFailed': 'La connexion avec {provider} n’a pas pu aboutir. Veuillez réessayer.',
  'login.error.oidcCancelled': 'La connexion avec {provider} a été annulée.',
  'login.error.oidcCookieLost': 'Votre navigateur n’a pas conservé le cookie de connexion ; veuillez réessayer.',
  'login.notice.idle': 'Vous avez été déconnecté après {duration} d’inactivité. Reconnectez-vous pour continuer.',
  'login.notice.absolute': 'Vous avez été déconnecté {duration} après votre connexion. Reconnectez-vous pour continuer.',
  'duration.hours': '{n, plural, one {# heure} many {# heures} other {# heures}}',
  'duration.minutes': '{n, plural, one {# minute} many {# minutes} other {# minutes}}',
  'duration.seconds': '{n, plural, one {# seconde} many {# secondes} other {# secondes}}',
  'reset.error.emailMissing': 'Saisissez l’adresse e-mail avec laquelle vous vous connectez.',
  'reset.error.linkUnusable': 'Ce lien a expiré ou a déjà été utilisé. Demandez-en un nouveau ci-dessous.',
  'reset.error.linkIncomplete': 'Ce lien est incomplet : ouvrez-le à nouveau depuis votre e-mail, ou demandez-en un nouveau ci-dessous.',
  'reset.error.tooManyTries': 'Ce lien a été essayé trop de fois. Demandez-en un nouveau ci-dessous.',
  'reset.error.passwordsDiffer': 'Les deux mots de passe ne sont pas identiques. Saisissez deux fois le nouveau mot de passe.',
  'reset.error.notChanged': 'Votre mot de passe n’a pas pu être modifié. Veuillez réessayer dans un instant.',
  'reset.error.passwordTooShort': 'Choisissez un mot de passe d’au moins {min, plural, one {# caractère} many {# caractères} other {# caractères}} : quelques mots dont vous vous souviendrez conviennent très bien.',
  'reset.error.passwordTooLong': 'Choisissez un mot de passe d’au plus {max, plural, one {# caractère} many {# caractères} other {# caractères}}.',
  'reset.error.passwordIsEmail': 'Choisissez un mot de passe différent de votre adresse e-mail.',
  'reset.error.passwordCommon': 'Ce mot de passe fait partie des plus courants : il est donc facile à deviner. Choisissez-en un autre.',

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
