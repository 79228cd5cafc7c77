// The source catalogue: every text a person reads on the section's pages and in its JSON answers, by
// key, in ICU MessageFormat (docs/languages.md lists the keys; renaming one is a breaking change).
// Every other locale has every key (a test), with the same placeholders and tags.

const en = {
  // --- The layout and what every page shares (lib/pages/views.ts) ---
  'site.name': 'Schools resources',
  'layout.skipLink': 'Skip to content',
  'layout.title': '{page} | {site}',
  'layout.accountNav': 'Account',
  'layout.allResources': 'All resources',
  'nav.signedInAs': 'Signed in as <strong>{name}</strong>',
  'nav.signIn': 'Sign in',
  'nav.signOut': 'Sign out',
  'nav.signOutEverywhere': 'Sign out on all devices',

  // --- Pages (lib/pages/views.ts) ---

  // --- Sign-in, password reset and JSON messages (lib/sign-in, lib/password-reset, lib/access) ---
  'error.FST_SR_MISSING_CREDENTIALS': 'Enter your email address and password.',
  'error.FST_SR_INVALID_CREDENTIALS': 'The email address or password is incorrect.',
  'error.FST_SR_LOGIN_RATE_LIMITED': 'Too many failed sign-ins from this address. Try again after {time, time, short}.',
  'error.FST_SR_LOCKED_OUT': 'Too many failed sign-ins for this email address. Try again after {time, time, short}.',
  'error.FST_SR_SESSION_RATE_LIMITED': 'Too many sign-ins to this account in the last minute. Try again after {time, time, short}.',
  'error.FST_SR_SIGN_IN_BUSY': 'Sign-in is busy. Please try again in a moment.',
  'error.FST_SR_INSECURE_SIGN_IN': 'You cannot be signed in over this connection: the site could not keep you signed in. Its administrator can find why in the site\'s log.',
  'error.FST_SR_OIDC_UNAVAILABLE': 'Sign-in with {provider} is briefly unavailable. Please try again in a moment.',
  'error.FST_SR_FORBIDDEN': 'You don\'t have access to {page}.',
  'error.formExpired': 'This form has expired. Please try again.',
  'error.notFound': 'There is no page at this address in the resources section.',
  'login.error.oidcSchoolAccount': 'Use your school account to sign in.',
  'login.error.oidcNoMember': 'No member account for this address.',
  'login.error.oidcFailed': 'Sign-in with {provider} could not be completed. Please try again.',
  'login.error.oidcCancelled': 'Sign-in with {provider} was cancelled.',
  'login.error.oidcCookieLost': 'Your browser did not keep the sign-in cookie; please try again.',
  'login.notice.idle': 'You were signed out after {duration} without activity. Sign in again to go on.',
  'login.notice.absolute': 'You were signed out {duration} after signing in. Sign in again to go on.',
  'duration.hours': '{n, plural, one {# hour} other {# hours}}',
  'duration.minutes': '{n, plural, one {# minute} other {# minutes}}',
  'duration.seconds': '{n, plural, one {# second} other {# seconds}}',
  'reset.error.emailMissing': 'Enter the email address you sign in with.',
  'reset.error.linkUnusable': 'This link has expired or has already been used. Ask for a new one below.',
  'reset.error.linkIncomplete': 'This link is not complete: open it from your email again, or ask for a new one below.',
  'reset.error.tooManyTries': 'This link has been tried too many times. Ask for a new one below.',
  'reset.error.passwordsDiffer': 'The two passwords are not the same. Type the new password twice.',
  'reset.error.notChanged': 'Your password could not be changed. Please try again in a moment.',
  'reset.error.passwordTooShort': 'Choose a password of at least {min, plural, one {# character} other {# characters}}: a few words you will remember work well.',
  'reset.error.passwordTooLong': 'Choose a password of at most {max, plural, one {# character} other {# characters}}.',
  'reset.error.passwordIsEmail': 'Choose a password that is not your email address.',
  'reset.error.passwordCommon': 'That password is one of the most common ones, so it is easy to guess. Choose another.',

  // --- The 500 and 503 pages (lib/pages/server-error.ts, lib/pages/unavailable.ts) ---
  'serverError.title': 'Something went wrong',
  'serverError.message': 'Something went wrong on our side. Please try again later.',
  'serverError.code': 'Error code: {code}',
  'unavailable.title': 'Temporarily unavailable',
  'unavailable.message': 'This part of the site is briefly unavailable. Please try again in a moment.',
  'unavailable.signedOut.title': 'Signed out on this browser',
  'unavailable.signedOut.message': 'You are signed out on this browser. Part of the site is briefly unavailable, so the sign-out may not have reached every server yet: on a shared computer, also close the browser.',
  'unavailable.othersKept.title': 'Signed out on this browser only',
  'unavailable.othersKept.message': 'You are signed out on this browser, but your other devices were not signed out: part of the site is briefly unavailable. In a few minutes, sign in again and choose "Sign out on all devices" once more.'
} as const

export default en

/** A message's key (docs/languages.md). */
export type MessageKey = keyof typeof en

/** A whole catalogue: every key, as a shipped locale has them. */
export type Catalogue = Record<MessageKey, string>
