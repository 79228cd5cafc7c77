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
  'error.FST_SR_MISSING_CREDENTIALS': 'Rhowch eich cyfeiriad e-bost a’ch cyfrinair.',
  'error.FST_SR_INVALID_CREDENTIALS': 'Mae’r cyfeiriad e-bost neu’r cyfrinair yn anghywir.',
  'error.FST_SR_LOGIN_RATE_LIMITED': 'Gormod o ymdrechion aflwyddiannus i fewngofnodi o’r cyfeiriad hwn. Rhowch gynnig arall arni ar ôl {time, time, short}.',
  'error.FST_SR_LOCKED_OUT': 'Gormod o ymdrechion aflwyddiannus i fewngofnodi ar gyfer y cyfeiriad e-bost hwn. Rhowch gynnig arall arni ar ôl {time, time, short}.',
  'error.FST_SR_SESSION_RATE_LIMITED': 'Gormod o fewngofnodi i’r cyfrif hwn yn ystod y funud ddiwethaf. Rhowch gynnig arall arni ar ôl {time, time, short}.',
  'error.FST_SR_SIGN_IN_BUSY': 'Mae’r mewngofnodi’n brysur. Rhowch gynnig arall arni mewn munud.',
  'error.FST_SR_INSECURE_SIGN_IN': 'Ni ellir eich mewngofnodi dros y cysylltiad hwn: ni allai’r wefan eich cadw wedi mewngofnodi. Gall gweinyddwr y wefan weld pam yng nghofnod y wefan.',
  'error.FST_SR_OIDC_UNAVAILABLE': 'Nid yw mewngofnodi gyda {provider} ar gael am ychydig. Rhowch gynnig arall arni mewn munud.',
  'error.FST_SR_FORBIDDEN': 'Nid oes gennych fynediad at {page}.',
  'error.formExpired': 'Mae’r ffurflen hon wedi dod i ben. Rhowch gynnig arall arni.',
  'error.notFound': 'Nid oes tudalen yn y cyfeiriad hwn yn adran yr adnoddau.',
  'login.error.oidcSchoolAccount': 'Defnyddiwch eich cyfrif ysgol i fewngofnodi.',
  'login.error.oidcNoMember': 'Nid oes cyfrif aelod ar gyfer y cyfeiriad hwn.',
  'login.error.oidcFailed': 'Nid oedd modd cwblhau’r mewngofnodi gyda {provider}. Rhowch gynnig arall arni.',
  'login.error.oidcCancelled': 'Cafodd y mewngofnodi gyda {provider} ei ganslo.',
  'login.error.oidcCookieLost': 'Ni chadwodd eich porwr y cwci mewngofnodi; rhowch gynnig arall arni.',
  'login.notice.idle': 'Cawsoch eich allgofnodi ar ôl {duration} heb weithgarwch. Mewngofnodwch eto i barhau.',
  'login.notice.absolute': 'Cawsoch eich allgofnodi {duration} ar ôl mewngofnodi. Mewngofnodwch eto i barhau.',
  'duration.hours': '{n, plural, zero {# awr} one {# awr} two {# awr} few {# awr} many {# awr} other {# awr}}',
  'duration.minutes': '{n, plural, zero {# munud} one {# munud} two {# funud} few {# munud} many {# munud} other {# munud}}',
  'duration.seconds': '{n, plural, zero {# eiliad} one {# eiliad} two {# eiliad} few {# eiliad} many {# eiliad} other {# eiliad}}',
  'reset.error.emailMissing': 'Rhowch y cyfeiriad e-bost rydych yn mewngofnodi ag ef.',
  'reset.error.linkUnusable': 'Mae’r ddolen hon wedi dod i ben neu wedi cael ei defnyddio eisoes. Gofynnwch am un newydd isod.',
  'reset.error.linkIncomplete': 'Nid yw’r ddolen hon yn gyflawn: agorwch hi o’ch e-bost eto, neu gofynnwch am un newydd isod.',
  'reset.error.tooManyTries': 'Mae gormod o ymdrechion wedi’u gwneud gyda’r ddolen hon. Gofynnwch am un newydd isod.',
  'reset.error.passwordsDiffer': 'Nid yw’r ddau gyfrinair yr un fath. Teipiwch y cyfrinair newydd ddwywaith.',
  'reset.error.notChanged': 'Nid oedd modd newid eich cyfrinair. Rhowch gynnig arall arni mewn munud.',
  'reset.error.passwordTooShort': 'Dewiswch gyfrinair o {min, plural, zero {# nod} one {# nod} two {# nod} few {# nod} many {# nod} other {# nod}} o leiaf: mae ychydig eiriau y byddwch yn eu cofio yn gweithio’n dda.',
  'reset.error.passwordTooLong': 'Dewiswch gyfrinair o {max, plural, zero {# nod} one {# nod} two {# nod} few {# nod} many {# nod} other {# nod}} ar y mwyaf.',
  'reset.error.passwordIsEmail': 'Dewiswch gyfrinair nad yw’n gyfeiriad e-bost i chi.',
  'reset.error.passwordCommon': 'Mae’r cyfrinair hwnnw’n un o’r rhai mwyaf cyffredin, felly mae’n hawdd ei ddyfalu. Dewiswch un arall.',

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
