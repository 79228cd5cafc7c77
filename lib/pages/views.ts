import type { Category, CategoryWithResources, FileResource, Member, Resource } from '../types.js'
import { applyFilter, resourceFilter, type ResourceFilter } from './filters.js'
import { html, SafeHtml, unsafeRaw } from './html.js'
import type { Pagination } from './pagination.js'
import type { PageLanguage } from './page-language.js'
import type { MessageKey } from '../i18n/locales/en.js'

/**
 * What every view knows about the request it renders for; with its language (`locale`, `dir`) and the
 * catalogue's messages in it (`t`, `tHtml`: docs/languages.md), so a host's view says what the section's do.
 */
export interface PageContext extends PageLanguage {
  /** The host's `siteName`, else the message `site.name` in the page's locale. */
  siteName: string
  /** The signed-in member, when there is one. */
  member: Member | undefined
  /** Whether the plugin serves the login and logout routes. */
  signIn: boolean
  /** CSRF token for the logout form, when a member is signed in. */
  csrfToken?: string
  paths: {
    index: string
    login: string
    logout: string
    category: (slug: string) => string
    /** Where a file resource of the category `slug` is downloaded (docs/files.md). */
    file: (slug: string, resource: FileResource) => string
  }
  /** URL of the section's stylesheet for the layout to link; undefined when the host turned it off. */
  stylesheet?: string
  /** The host's sign-out page (option `logoutUrl`) when the host owns sign-in: a plain link, GET. */
  logoutUrl?: string
  /** The name of the return address's field (option `returnParam`; `BackURL` when absent). */
  returnParam?: string
  /** Whether the logout form offers "Sign out on all devices" (option `signOutEverywhere`). */
  signOutEverywhere?: boolean
}

/** A rendered page body and its title; the layout wraps it in the document. */
export interface Page {
  title: string
  body: SafeHtml | string
}

export interface LoginViewData {
  /** A return address that passed the same-site check, to carry through the form. */
  backUrl?: string
  /** The email to put back into the form after a failed attempt. */
  email?: string
  /** A message for the visitor, e.g. after wrong credentials. */
  error?: string
  /** Not an error: why the visitor was signed out (a timeout), shown once. */
  notice?: string
  /** CSRF token for the form. */
  csrfToken?: string
  /** Set while the username is locked after too many failed attempts. */
  lockedUntil?: Date
  /** The OpenID providers' buttons (`oidc`): links to their start, carrying the return address. */
  providers?: Array<{ id: string, label: string, href: string }>
  /** Whether the page has the password form (false with `passwordSignIn: false`); true when left out. */
  passwordForm?: boolean
  /**
   * Whether the form offers "Keep me signed in on this device" (option `rememberMe`): a checkbox named
   * `remember`, value `1`. An OpenID button carries it as `remember=1` in its start address's query.
   */
  remember?: boolean
  /** The "Forgotten your password?" page (with `passwordReset`); no link when left out. */
  lostPasswordUrl?: string
}

/** The page that asks for an email address to send a reset link to (`passwordReset`). */
export interface LostPasswordViewData {
  /** CSRF token for the form. */
  csrfToken?: string
  /** The address to put back into the form after a mistake. */
  email?: string
  /** A message for the visitor: no address, or one too long. */
  error?: string
  /** True once a request was taken: the page says a link was sent, if the address has an account. */
  sent?: boolean
  /** The login page, to go back to. */
  loginUrl: string
  /** Where the form posts (this page itself). */
  action: string
}

/** The page a reset link leads to: a new password, twice (`passwordReset`). */
export interface ChangePasswordViewData {
  /** CSRF token for the form. */
  csrfToken?: string
  /** A message for the visitor: passwords that differ, a weak one, a change that failed. */
  error?: string
  /** False when the link cannot be used (expired, used, mistyped): the page offers a new one instead of the form. */
  linkValid: boolean
  /** Where to ask for a new link. */
  lostPasswordUrl: string
  /** Where the form posts (the change page itself). */
  action: string
}

/** A category on the index, as the visitor may open it. */
export interface IndexCategory extends Category {
  /**
   * True when the signed-in member is outside the category's audience (its link leads to the 403 page).
   * Always false for a visitor who is not signed in: they are asked to sign in first.
   */
  locked: boolean
}

export interface IndexViewData {
  /** The categories on this page of the index (all of them when it has one page). */
  categories: readonly IndexCategory[]
  /** Where this page sits in the whole list, with links to its neighbours; absent when there is one page. */
  pagination?: Pagination
}

export interface ForbiddenViewData {
  /** What was refused: the category's title, or the host route's. */
  title: string
  /** The address asked for, to come back to after signing in as someone else. */
  backUrl: string
}

export interface CategoryViewData {
  category: CategoryWithResources
  /** The resources to list, after the filters; all of the category's when absent. */
  resources?: readonly Resource[]
  /** The filters asked for and the choices the category offers; computed from the category when absent. */
  filter?: ResourceFilter
  /**
   * How many resources the category has, filters aside; `category.resources.length` when absent. From a
   * catalog's paged read (getCategoryPage) `category.resources` holds this page's resources only.
   */
  count?: number
  /**
   * Where `resources` (this page's) sit in the filtered list, with links to its neighbours that keep the
   * filters; absent when the list has one page.
   */
  pagination?: Pagination
}

/**
 * Page renderers. Strings are sent as they are, so a replacement must escape what it interpolates (`html`
 * does). Any of them may return a promise (a template engine's async render); the plugin awaits it.
 */
export interface Views {
  layout (page: Page, ctx: PageContext): SafeHtml | string | Promise<SafeHtml | string>
  index (data: IndexViewData, ctx: PageContext): Page | Promise<Page>
  category (data: CategoryViewData, ctx: PageContext): Page | Promise<Page>
  login (data: LoginViewData, ctx: PageContext): Page | Promise<Page>
  notFound (data: Record<string, never>, ctx: PageContext): Page | Promise<Page>
  /** The 403 page for a member outside the audience. */
  forbidden (data: ForbiddenViewData, ctx: PageContext): Page | Promise<Page>
  /** "Forgotten your password?": the email address to send a link to (`passwordReset`). */
  lostPassword (data: LostPasswordViewData, ctx: PageContext): Page | Promise<Page>
  /** The reset link's page: a new password, twice (`passwordReset`). */
  changePassword (data: ChangePasswordViewData, ctx: PageContext): Page | Promise<Page>
}

/** The plugin's own views: synchronous, so a host's view can wrap one and use its result at once. */
export interface DefaultViews {
  layout (page: Page, ctx: PageContext): SafeHtml
  index (data: IndexViewData, ctx: PageContext): Page
  category (data: CategoryViewData, ctx: PageContext): Page
  login (data: LoginViewData, ctx: PageContext): Page
  notFound (data: Record<string, never>, ctx: PageContext): Page
  forbidden (data: ForbiddenViewData, ctx: PageContext): Page
  lostPassword (data: LostPasswordViewData, ctx: PageContext): Page
  changePassword (data: ChangePasswordViewData, ctx: PageContext): Page
}

function csrfField (token: string | undefined): SafeHtml | '' {
  return token === undefined ? '' : html`<input type="hidden" name="_csrf" value="${token}">`
}

/** The hidden field that carries the return address through a form. */
function returnField (ctx: PageContext, backUrl: string): SafeHtml {
  return html`<input type="hidden" name="${ctx.returnParam ?? 'BackURL'}" value="${backUrl}">`
}

/**
 * Sign-out: the section's form (a POST with its token), or with the host's own sign-in a link to the
 * host's page (`logoutUrl`), whose own form signs out there with the host's token (docs/sign-in.md).
 */
function signOut (ctx: PageContext): SafeHtml | '' {
  if (ctx.signIn) {
    const everywhere = ctx.signOutEverywhere === true ? html` <button type="submit" name="everywhere" value="1">${ctx.t('nav.signOutEverywhere')}</button>` : ''
    return html`<form method="post" action="${ctx.paths.logout}">${csrfField(ctx.csrfToken)}<button type="submit">${ctx.t('nav.signOut')}</button>${everywhere}</form>`
  }
  return ctx.logoutUrl === undefined ? '' : html`<a href="${ctx.logoutUrl}">${ctx.t('nav.signOut')}</a>`
}

function memberNav (ctx: PageContext): SafeHtml {
  if (ctx.member !== undefined) {
    return html`<p class="signed-in">${ctx.tHtml('nav.signedInAs', { name: ctx.member.name }, { strong })}</p>
      ${signOut(ctx)}`
  }
  // The section's login page, or the host's (loginPath), where the login redirect sends visitors too.
  return html`<a href="${ctx.paths.login}">${ctx.t('nav.signIn')}</a>`
}

/** `<strong>` of a message (`nav.signedInAs`): its content, escaped. */
function strong (content: SafeHtml): SafeHtml {
  return html`<strong>${content}</strong>`
}

function layout (page: Page, ctx: PageContext): SafeHtml {
  const body = page.body instanceof SafeHtml ? page.body : unsafeRaw(page.body)
  return html`<!doctype html>
<html lang="${ctx.locale}" dir="${ctx.dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${ctx.t('layout.title', { page: page.title, site: ctx.siteName })}</title>
${ctx.stylesheet === undefined ? '' : html`<link rel="stylesheet" href="${ctx.stylesheet}">`}
</head>
<body>
<a class="skip-link" href="#main">${ctx.t('layout.skipLink')}</a>
<header class="site-header">
<div class="site-header-inner">
<p class="site-name"><a href="${ctx.paths.index}">${ctx.siteName}</a></p>
<nav class="account" aria-label="${ctx.t('layout.accountNav')}">${memberNav(ctx)}</nav>
</div>
</header>
<main id="main" class="site-main" tabindex="-1">
${body}
</main>
<footer class="site-footer">
<div class="site-footer-inner"><p><a href="${ctx.paths.index}">${ctx.t('layout.allResources')}</a> &middot; ${ctx.siteName}</p></div>
</footer>
</body>
</html>
`
}

function indexEntry (c: IndexCategory, ctx: PageContext): SafeHtml {
  if (!c.locked) {
    return html`
<li><h2><a href="${ctx.paths.category(c.slug)}">${c.title}</a></h2><p>${c.description}</p></li>`
  }
  // Still a link (to the 403 page, with its way to sign in as someone else), said in words as well as looks.
  return html`
<li class="locked"><h2><a href="${ctx.paths.category(c.slug)}" aria-describedby="locked-${c.slug}">${c.title}</a></h2><p>${c.description}</p>
<p class="access-note" id="locked-${c.slug}">${ctx.t('index.locked')}</p></li>`
}

/** "Page 2 of 40" with its previous and next links (rel=prev/next), after a paged list. */
function pager (p: Pagination | undefined, label: MessageKey, ctx: PageContext): SafeHtml | '' {
  if (p === undefined) return ''
  return html`<nav class="pager" aria-label="${ctx.t(label)}"><p>${ctx.t('pager.position', { page: p.page, pages: p.pages })}</p>
<ul>${p.prev === undefined ? '' : html`<li><a href="${p.prev}" rel="prev">${ctx.t('pager.previous')}</a></li>`}${p.next === undefined ? '' : html`<li><a href="${p.next}" rel="next">${ctx.t('pager.next')}</a></li>`}</ul></nav>`
}

function index ({ categories, pagination }: IndexViewData, ctx: PageContext): Page {
  const list = categories.length === 0
    ? html`<p>${ctx.t('index.empty')}</p>`
    : html`${pagination === undefined ? '' : html`<p class="result-count">${ctx.t('index.count', { from: pagination.from, to: pagination.to, total: pagination.total })}</p>`}
<ul class="categories">${categories.map((c) => indexEntry(c, ctx))}
</ul>
${pager(pagination, 'pager.categories', ctx)}`
  const lead = ctx.member === undefined ? `${ctx.t('index.lead')} ${ctx.t('index.leadSignIn')}` : ctx.t('index.lead')
  return {
    title: pagination === undefined || pagination.page === 1 ? ctx.t('index.title') : ctx.t('index.titlePage', { page: pagination.page, pages: pagination.pages }),
    body: html`<h1>${ctx.t('index.title')}</h1>
<p class="lead">${lead}</p>
${list}`
  }
}

/** Whether `r` is a file of the site's own: a host catalog may give `file: null` for a link elsewhere. */
export function isFileResource (r: Resource): r is FileResource {
  return typeof r.file === 'string'
}

/** A file resource's own name (`maths/sheet.pdf` → `sheet.pdf`): last in its address, and its download's name. */
export function fileName (file: string): string {
  return file.slice(file.lastIndexOf('/') + 1)
}

/** Where a resource's link points: its own address, or the section's download of its file. */
function resourceHref (r: Resource, slug: string, paths: PageContext['paths']): string {
  return isFileResource(r) ? paths.file(slug, r) : r.url
}

/** The formats the catalog type names (ResourceFormat), each shown through its message. */
const FORMAT_KEYS: ReadonlyMap<string, MessageKey> = new Map(([
  'Worksheet', 'Lesson plan', 'Slides', 'Video', 'Interactive', 'Assessment', 'Reading'
] as const).map((format) => [format, `resource.format.${format}`]))

/** A resource's format in the page's language: a known one by its message, a school's own as it is given. */
function formatLabel (format: string, ctx: PageContext): string {
  const key = FORMAT_KEYS.get(format)
  return key === undefined ? format : ctx.t(key)
}

// The catalog's own data (titles, summaries, subjects, year levels) is the host's and shown as given.
function resourceItem (r: Resource, slug: string, ctx: PageContext): SafeHtml {
  return html`
<li class="resource">
<h3><a href="${resourceHref(r, slug, ctx.paths)}">${r.title}</a></h3>
<p>${r.summary}</p>
<dl class="resource-meta">
<dt>${ctx.t('resource.subject')}</dt><dd>${r.subject}</dd>
<dt>${ctx.t('resource.yearLevels')}</dt><dd>${r.yearLevels.join(', ')}</dd>
<dt>${ctx.t('resource.format')}</dt><dd>${formatLabel(r.format, ctx)}</dd>
${isFileResource(r) ? html`<dt>${ctx.t('resource.download')}</dt><dd>${fileName(r.file)}</dd>` : ''}
</dl>
</li>`
}

function select (id: string, name: string, label: string, all: string, options: readonly string[], chosen: string | undefined): SafeHtml {
  return html`<div class="field"><label for="${id}">${label}</label>
<select id="${id}" name="${name}"><option value="">${all}</option>${options.map((o) => html`<option${o === chosen ? html` selected` : ''}>${o}</option>`)}</select></div>`
}

/**
 * The line above the list: how many resources there are, which of them this page shows, for which filters
 * (the chosen subject and year level, catalog data, as they are). Numbers and plurals come from the message.
 */
function resultCount (shown: number, all: number, chosen: readonly string[], p: Pagination | undefined, ctx: PageContext): string {
  const filters = chosen.join(', ')
  if (p === undefined) return chosen.length > 0 ? ctx.t('category.countFiltered', { shown, all, filters }) : ctx.t('category.count', { count: shown })
  return chosen.length > 0
    ? ctx.t('category.countPagedFiltered', { from: p.from, to: p.to, total: p.total, filters, all })
    : ctx.t('category.countPaged', { from: p.from, to: p.to, total: p.total })
}

function category (data: CategoryViewData, ctx: PageContext): Page {
  const { category } = data
  const filter = data.filter ?? resourceFilter(category, {})
  const resources = data.resources ?? applyFilter(category.resources, filter)
  const here = ctx.paths.category(category.slug)
  const chosen = [filter.subject, filter.year].filter((v) => v !== undefined)
  const filtered = chosen.length > 0
  const count = data.count ?? category.resources.length

  let listing: SafeHtml
  if (count === 0) {
    listing = html`<p>${ctx.t('category.empty')}</p>`
  } else {
    const showAll = (content: SafeHtml): SafeHtml => html`<a href="${here}">${content}</a>`
    listing = html`<form class="filters" method="get" action="${here}">
<fieldset><legend>${ctx.t('filter.legend')}</legend>
${select('filter-subject', 'subject', ctx.t('filter.subject'), ctx.t('filter.allSubjects'), filter.subjects, filter.subject)}
${select('filter-year', 'year', ctx.t('filter.year'), ctx.t('filter.allYears'), filter.years, filter.year)}
<div class="filter-actions"><button type="submit">${ctx.t('filter.submit')}</button>${filtered ? html`<a href="${here}">${ctx.t('filter.clear')}</a>` : ''}</div>
</fieldset>
</form>
<h2 id="resources-heading">${ctx.t('category.resources')}</h2>
<p class="result-count">${resultCount(resources.length, count, chosen, data.pagination, ctx)}</p>
${resources.length === 0
  ? html`<p>${ctx.tHtml('category.noMatch', { category: category.title }, { link: showAll })}</p>`
  : html`<ul class="resources" aria-labelledby="resources-heading">${resources.map((r) => resourceItem(r, category.slug, ctx))}
</ul>
${pager(data.pagination, 'pager.resources', ctx)}`}`
  }
  const page = data.pagination === undefined || data.pagination.page === 1 ? '' : ctx.t('category.titlePage', { page: data.pagination.page, pages: data.pagination.pages })
  const qualifiers = [...chosen, page].filter((q) => q !== '')
  return {
    title: qualifiers.length > 0 ? ctx.t('category.titleQualified', { title: category.title, qualifiers: qualifiers.join(', ') }) : category.title,
    body: html`<nav class="breadcrumbs" aria-label="${ctx.t('category.breadcrumb')}"><ol><li><a href="${ctx.paths.index}">${ctx.t('category.breadcrumbIndex')}</a></li><li><a href="${here}" aria-current="page">${category.title}</a></li></ol></nav>
<h1>${category.title}</h1>
<p class="lead">${category.description}</p>
${listing}`
  }
}

function login (data: LoginViewData, ctx: PageContext): Page {
  // The time in the page's language and the app's time zone (option timeZone), by the message's format.
  const message = data.lockedUntil !== undefined
    ? ctx.t('login.lockedOut', { time: data.lockedUntil })
    : data.error
  const alert = message === undefined ? '' : html`<p class="error" role="alert" id="login-error">${message}</p>`
  const notice = data.notice === undefined ? '' : html`<p class="notice" role="status">${data.notice}</p>`
  const title = ctx.t('login.title')
  if (ctx.member !== undefined) {
    return {
      title,
      body: html`<div class="login">
<h1>${title}</h1>
${alert}
<p>${ctx.tHtml('login.signedInAs', { name: ctx.member.name }, { strong })}</p>
<p><a href="${data.backUrl ?? ctx.paths.index}">${ctx.t('login.continue')}</a></p>
</div>`
    }
  }
  return {
    title,
    body: html`<div class="login">
<h1>${title}</h1>
<p>${data.backUrl === undefined ? ctx.t('login.intro') : ctx.t('login.introReturn')}</p>
${notice}
${alert}
${providerButtons(data.providers, ctx)}
${data.passwordForm === false
? ''
: html`<form method="post" action="${ctx.paths.login}"${message === undefined ? '' : html` aria-describedby="login-error"`}>
${csrfField(data.csrfToken)}
${data.backUrl === undefined ? '' : returnField(ctx, data.backUrl)}
<p><label for="email">${ctx.t('login.email')}</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${data.email ?? ''}"></p>
<p><label for="password">${ctx.t('login.password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required></p>
${data.remember === true ? rememberBox(ctx) : ''}<p><button type="submit">${ctx.t('login.submit')}</button></p>
</form>
${data.lostPasswordUrl === undefined ? '' : html`<p><a href="${data.lostPasswordUrl}">${ctx.t('login.lostPassword')}</a></p>`}`}
</div>`
  }
}

/** "Keep me signed in on this device", off by default, with the warning its hint says to screen readers too. */
function rememberBox (ctx: PageContext): SafeHtml {
  return html`<p><input id="remember" name="remember" type="checkbox" value="1" aria-describedby="remember-hint">
<label for="remember">${ctx.t('login.remember')}</label></p>
<p class="hint" id="remember-hint">${ctx.t('login.rememberHint')}</p>
`
}

/** One link per OpenID provider, above the password form: "Sign in with Google". */
function providerButtons (providers: LoginViewData['providers'], ctx: PageContext): SafeHtml | '' {
  if (providers === undefined || providers.length === 0) return ''
  return html`<ul class="providers">
${providers.map((p) => html`<li><a class="button" href="${p.href}">${ctx.t('login.provider', { provider: p.label })}</a></li>`)}
</ul>`
}

function notFound (_data: Record<string, never>, ctx: PageContext): Page {
  return {
    title: ctx.t('notFound.title'),
    body: html`<h1>${ctx.t('notFound.title')}</h1>
<p class="lead">${ctx.t('notFound.message')}</p>
<p><a href="${ctx.paths.index}">${ctx.t('notFound.allResources')}</a></p>`
  }
}

function forbidden (data: ForbiddenViewData, ctx: PageContext): Page {
  const who = ctx.member === undefined ? '' : html` ${ctx.tHtml('forbidden.signedInAs', { name: ctx.member.name }, { strong })}`
  const title = ctx.t('forbidden.title', { title: data.title })
  return {
    title,
    body: html`<h1>${title}</h1>
<p class="lead">${ctx.t('forbidden.lead')}${who}</p>
${ctx.signIn
  ? html`<form method="post" action="${ctx.paths.logout}" class="switch-account">${csrfField(ctx.csrfToken)}${returnField(ctx, data.backUrl)}
<p>${ctx.t('forbidden.switchHint')}</p>
<p><button type="submit">${ctx.t('forbidden.switch')}</button></p>
</form>`
  : ''}
<p><a href="${ctx.paths.index}">${ctx.t('forbidden.allResources')}</a></p>`
  }
}

/** The message of a form, tied to it for screen readers as the login page's is. */
function formError (error: string | undefined, id: string): { alert: SafeHtml | '', describedBy: SafeHtml | '' } {
  if (error === undefined) return { alert: '', describedBy: '' }
  return { alert: html`<p class="error" role="alert" id="${id}">${error}</p>`, describedBy: html` aria-describedby="${id}"` }
}

function lostPassword (data: LostPasswordViewData, ctx: PageContext): Page {
  if (data.sent === true) {
    return {
      title: ctx.t('lostPassword.sentTitle'),
      body: html`<div class="login">
<h1>${ctx.t('lostPassword.sentTitle')}</h1>
<p role="status">${ctx.t('lostPassword.sentMessage')}</p>
<p><a href="${data.loginUrl}">${ctx.t('lostPassword.backToSignIn')}</a></p>
</div>`
    }
  }
  const { alert, describedBy } = formError(data.error, 'lost-password-error')
  return {
    title: ctx.t('lostPassword.title'),
    body: html`<div class="login">
<h1>${ctx.t('lostPassword.title')}</h1>
<p>${ctx.t('lostPassword.intro')}</p>
${alert}
<form method="post" action="${data.action}"${describedBy}>
${csrfField(data.csrfToken)}
<p><label for="email">${ctx.t('lostPassword.email')}</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${data.email ?? ''}"></p>
<p><button type="submit">${ctx.t('lostPassword.submit')}</button></p>
</form>
<p><a href="${data.loginUrl}">${ctx.t('lostPassword.backToSignIn')}</a></p>
</div>`
  }
}

function changePassword (data: ChangePasswordViewData, ctx: PageContext): Page {
  const { alert, describedBy } = formError(data.error, 'change-password-error')
  const title = ctx.t('changePassword.title')
  if (!data.linkValid) {
    return {
      title,
      body: html`<div class="login">
<h1>${title}</h1>
${alert}
<p><a href="${data.lostPasswordUrl}">${ctx.t('changePassword.newLink')}</a></p>
</div>`
    }
  }
  return {
    title,
    body: html`<div class="login">
<h1>${title}</h1>
<p>${ctx.t('changePassword.intro')}</p>
${alert}
<form method="post" action="${data.action}"${describedBy}>
${csrfField(data.csrfToken)}
<p><label for="password">${ctx.t('changePassword.password')}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required></p>
<p><label for="confirm">${ctx.t('changePassword.confirm')}</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required></p>
<p><button type="submit">${ctx.t('changePassword.submit')}</button></p>
</form>
</div>`
  }
}

export const defaultViews: DefaultViews = { layout, index, category, login, notFound, forbidden, lostPassword, changePassword }
