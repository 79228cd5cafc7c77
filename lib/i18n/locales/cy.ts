// Welsh: every key of en.ts, in the same sections (docs/languages.md says who reviewed it).
import type { Catalogue } from './en.js'

const cy: Catalogue = {
  // --- The layout and what every page shares (lib/pages/views.ts) ---
  'site.name': 'Adnoddau ysgolion',
  'layout.skipLink': 'Neidio i’r cynnwys',
  'layout.title': '{page} | {site}',
  'layout.accountNav': 'Cyfrif',
  'layout.allResources': 'Pob adnodd',
  'nav.signedInAs': 'Wedi mewngofnodi fel <strong>{name}</strong>',
  'nav.signIn': 'Mewngofnodi',
  'nav.signOut': 'Allgofnodi',
  'nav.signOutEverywhere': 'Allgofnodi ar bob dyfais',

  // --- Pages (lib/pages/views.ts) ---

  // --- Sign-in, password reset and JSON messages (lib/sign-in, lib/password-reset, lib/access) ---

  // --- The 500 and 503 pages (lib/pages/server-error.ts, lib/pages/unavailable.ts) ---
  'serverError.title': 'Aeth rhywbeth o’i le',
  'serverError.message': 'Aeth rhywbeth o’i le ar ein hochr ni. Rhowch gynnig arall arni yn nes ymlaen.',
  'serverError.code': 'Cod gwall: {code}',
  'unavailable.title': 'Ddim ar gael dros dro',
  'unavailable.message': 'Nid yw’r rhan hon o’r wefan ar gael am ychydig. Rhowch gynnig arall arni mewn munud.',
  'unavailable.signedOut.title': 'Wedi allgofnodi ar y porwr hwn',
  'unavailable.signedOut.message': 'Rydych wedi allgofnodi ar y porwr hwn. Nid yw rhan o’r wefan ar gael am ychydig, felly efallai nad yw’r allgofnodi wedi cyrraedd pob gweinydd eto: ar gyfrifiadur a rennir, caewch y porwr hefyd.',
  'unavailable.othersKept.title': 'Wedi allgofnodi ar y porwr hwn yn unig',
  'unavailable.othersKept.message': 'Rydych wedi allgofnodi ar y porwr hwn, ond nid ar eich dyfeisiau eraill: nid yw rhan o’r wefan ar gael am ychydig. Ymhen ychydig funudau, mewngofnodwch eto a dewiswch “Allgofnodi ar bob dyfais” unwaith eto.'
}

export default cy
