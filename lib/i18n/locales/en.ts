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
