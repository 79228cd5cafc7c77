import type { Category, CategoryWithResources, FileResource, Member, Resource } from '../types.js'
import { applyFilter, resourceFilter, type ResourceFilter } from './filters.js'
import { html, SafeHtml, unsafeRaw } from './html.js'
import type { Pagination } from './pagination.js'
import type { PageLanguage } from './page-language.js'

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

/** "09:15 UTC": the time a locked-out visitor may try again. */
export function retryTime (date: Date): string {
  return `${date.toISOString().slice(11, 16)} UTC`
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
<p class="access-note" id="locked-${c.slug}">You don't have access to this category.</p></li>`
}

/** "Page 2 of 40" with its previous and next links (rel=prev/next), after a paged list. */
function pager (p: Pagination | undefined, label: string): SafeHtml | '' {
  if (p === undefined) return ''
  return html`<nav class="pager" aria-label="${label}"><p>Page ${p.page} of ${p.pages}</p>
<ul>${p.prev === undefined ? '' : html`<li><a href="${p.prev}" rel="prev">Previous page</a></li>`}${p.next === undefined ? '' : html`<li><a href="${p.next}" rel="next">Next page</a></li>`}</ul></nav>`
}

function range (p: Pagination): string {
  return `${p.from.toLocaleString('en')}\u2013${p.to.toLocaleString('en')}`
}

function index ({ categories, pagination }: IndexViewData, ctx: PageContext): Page {
  const list = categories.length === 0
    ? html`<p>No categories have been published yet.</p>`
    : html`${pagination === undefined ? '' : html`<p class="result-count">Showing categories ${range(pagination)} of ${pagination.total.toLocaleString('en')}.</p>`}
<ul class="categories">${categories.map((c) => indexEntry(c, ctx))}
</ul>
${pager(pagination, 'Pages of categories')}`
  return {
    title: pagination === undefined || pagination.page === 1 ? 'Resources' : `Resources (page ${pagination.page} of ${pagination.pages})`,
    body: html`<h1>Resources</h1>
<p class="lead">Teaching and learning resources for our school community, grouped by category.${ctx.member === undefined ? ' Members sign in to open a category.' : ''}</p>
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

function resourceItem (r: Resource, slug: string, ctx: PageContext): SafeHtml {
  return html`
<li class="resource">
<h3><a href="${resourceHref(r, slug, ctx.paths)}">${r.title}</a></h3>
<p>${r.summary}</p>
<dl class="resource-meta">
<dt>Subject</dt><dd>${r.subject}</dd>
<dt>Year levels</dt><dd>${r.yearLevels.join(', ')}</dd>
<dt>Format</dt><dd>${r.format}</dd>
${isFileResource(r) ? html`<dt>Download</dt><dd>${fileName(r.file)}</dd>` : ''}
</dl>
</li>`
}

function select (id: string, name: string, label: string, all: string, options: readonly string[], chosen: string | undefined): SafeHtml {
  return html`<div class="field"><label for="${id}">${label}</label>
<select id="${id}" name="${name}"><option value="">${all}</option>${options.map((o) => html`<option${o === chosen ? html` selected` : ''}>${o}</option>`)}</select></div>`
}

function plural (n: number): string {
  return n === 1 ? '1 resource' : `${n.toLocaleString('en')} resources`
}

/** The line above the list: how many resources there are, which of them this page shows, for which filters. */
function resultCount (shown: number, all: number, chosen: readonly string[], p: Pagination | undefined): string {
  const filters = chosen.join(', ')
  if (p === undefined) return chosen.length > 0 ? `Showing ${shown} of ${plural(all)} for ${filters}.` : `${plural(shown)}.`
  return chosen.length > 0
    ? `Showing ${range(p)} of the ${p.total.toLocaleString('en')} for ${filters} (${plural(all)} in all).`
    : `Showing ${range(p)} of ${plural(p.total)}.`
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
    listing = html`<p>No resources in this category yet.</p>`
  } else {
    listing = html`<form class="filters" method="get" action="${here}">
<fieldset><legend>Filter resources</legend>
${select('filter-subject', 'subject', 'Subject', 'All subjects', filter.subjects, filter.subject)}
${select('filter-year', 'year', 'Year level', 'All year levels', filter.years, filter.year)}
<div class="filter-actions"><button type="submit">Show resources</button>${filtered ? html`<a href="${here}">Clear filters</a>` : ''}</div>
</fieldset>
</form>
<h2 id="resources-heading">Resources</h2>
<p class="result-count">${resultCount(resources.length, count, chosen, data.pagination)}</p>
${resources.length === 0
  ? html`<p>No resources match these filters. <a href="${here}">Show all resources in ${category.title}</a>.</p>`
  : html`<ul class="resources" aria-labelledby="resources-heading">${resources.map((r) => resourceItem(r, category.slug, ctx))}
</ul>
${pager(data.pagination, 'Pages of resources')}`}`
  }
  const page = data.pagination === undefined || data.pagination.page === 1 ? '' : `page ${data.pagination.page} of ${data.pagination.pages}`
  const qualifiers = [...chosen, page].filter((q) => q !== '')
  return {
    title: qualifiers.length > 0 ? `${category.title} (${qualifiers.join(', ')})` : category.title,
    body: html`<nav class="breadcrumbs" aria-label="Breadcrumb"><ol><li><a href="${ctx.paths.index}">Resources</a></li><li><a href="${here}" aria-current="page">${category.title}</a></li></ol></nav>
<h1>${category.title}</h1>
<p class="lead">${category.description}</p>
${listing}`
  }
}

function login (data: LoginViewData, ctx: PageContext): Page {
  const message = data.lockedUntil !== undefined
    ? `Too many failed sign-in attempts. Try again after ${retryTime(data.lockedUntil)}.`
    : data.error
  const alert = message === undefined ? '' : html`<p class="error" role="alert" id="login-error">${message}</p>`
  const notice = data.notice === undefined ? '' : html`<p class="notice" role="status">${data.notice}</p>`
  if (ctx.member !== undefined) {
    return {
      title: 'Sign in',
      body: html`<div class="login">
<h1>Sign in</h1>
${alert}
<p>You are signed in as <strong>${ctx.member.name}</strong>.</p>
<p><a href="${data.backUrl ?? ctx.paths.index}">Continue</a></p>
</div>`
    }
  }
  return {
    title: 'Sign in',
    body: html`<div class="login">
<h1>Sign in</h1>
<p>${data.backUrl === undefined
  ? 'Sign in with your school email address to open the members-only resources.'
  : 'That page is for members. Sign in and you will go straight to it.'}</p>
${notice}
${alert}
${providerButtons(data.providers)}
${data.passwordForm === false
? ''
: html`<form method="post" action="${ctx.paths.login}"${message === undefined ? '' : html` aria-describedby="login-error"`}>
${csrfField(data.csrfToken)}
${data.backUrl === undefined ? '' : returnField(ctx, data.backUrl)}
<p><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${data.email ?? ''}"></p>
<p><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required></p>
${data.remember === true ? rememberBox() : ''}<p><button type="submit">Sign in</button></p>
</form>
${data.lostPasswordUrl === undefined ? '' : html`<p><a href="${data.lostPasswordUrl}">Forgotten your password?</a></p>`}`}
</div>`
  }
}

/** "Keep me signed in on this device", off by default, with the warning its hint says to screen readers too. */
function rememberBox (): SafeHtml {
  return html`<p><input id="remember" name="remember" type="checkbox" value="1" aria-describedby="remember-hint">
<label for="remember">Keep me signed in on this device</label></p>
<p class="hint" id="remember-hint">Don't use this on a shared or public computer: anyone who uses it after you would be signed in as you.</p>
`
}

/** One link per OpenID provider, above the password form: "Sign in with Google". */
function providerButtons (providers: LoginViewData['providers']): SafeHtml | '' {
  if (providers === undefined || providers.length === 0) return ''
  return html`<ul class="providers">
${providers.map((p) => html`<li><a class="button" href="${p.href}">Sign in with ${p.label}</a></li>`)}
</ul>`
}

function notFound (_data: Record<string, never>, ctx: PageContext): Page {
  return {
    title: 'Page not found',
    body: html`<h1>Page not found</h1>
<p class="lead">There is no page at this address in the resources section. The link may be mistyped, or the page may have moved.</p>
<p><a href="${ctx.paths.index}">Go to all resources</a></p>`
  }
}

function forbidden (data: ForbiddenViewData, ctx: PageContext): Page {
  const who = ctx.member === undefined ? '' : html` You are signed in as <strong>${ctx.member.name}</strong>.`
  return {
    title: `You don't have access to ${data.title}`,
    body: html`<h1>You don't have access to ${data.title}</h1>
<p class="lead">This page is only for some members of the school community.${who}</p>
${ctx.signIn
  ? html`<form method="post" action="${ctx.paths.logout}" class="switch-account">${csrfField(ctx.csrfToken)}${returnField(ctx, data.backUrl)}
<p>If you have another account that may see it, sign in with that one and you will come straight back.</p>
<p><button type="submit">Sign in as someone else</button></p>
</form>`
  : ''}
<p><a href="${ctx.paths.index}">Go to all resources</a></p>`
  }
}

/** The message of a form, tied to it for screen readers as the login page's is. */
function formError (error: string | undefined, id: string): { alert: SafeHtml | '', describedBy: SafeHtml | '' } {
  if (error === undefined) return { alert: '', describedBy: '' }
  return { alert: html`<p class="error" role="alert" id="${id}">${error}</p>`, describedBy: html` aria-describedby="${id}"` }
}

function lostPassword (data: LostPasswordViewData, _ctx: PageContext): Page {
  if (data.sent === true) {
    return {
      title: 'Check your email',
      body: html`<div class="login">
<h1>Check your email</h1>
<p role="status">If that address has an account, we have sent a link to it. The link works for a limited time; if nothing arrives, look in your junk mail, then ask again.</p>
<p><a href="${data.loginUrl}">Back to sign in</a></p>
</div>`
    }
  }
  const { alert, describedBy } = formError(data.error, 'lost-password-error')
  return {
    title: 'Forgotten your password?',
    body: html`<div class="login">
<h1>Forgotten your password?</h1>
<p>Give the email address you sign in with, and we will send a link to choose a new password.</p>
${alert}
<form method="post" action="${data.action}"${describedBy}>
${csrfField(data.csrfToken)}
<p><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${data.email ?? ''}"></p>
<p><button type="submit">Send me a link</button></p>
</form>
<p><a href="${data.loginUrl}">Back to sign in</a></p>
</div>`
  }
}

function changePassword (data: ChangePasswordViewData, _ctx: PageContext): Page {
  const { alert, describedBy } = formError(data.error, 'change-password-error')
  if (!data.linkValid) {
    return {
      title: 'Choose a new password',
      body: html`<div class="login">
<h1>Choose a new password</h1>
${alert}
<p><a href="${data.lostPasswordUrl}">Ask for a new link</a></p>
</div>`
    }
  }
  return {
    title: 'Choose a new password',
    body: html`<div class="login">
<h1>Choose a new password</h1>
<p>Choose a password you use nowhere else: a few words you will remember work well.</p>
${alert}
<form method="post" action="${data.action}"${describedBy}>
${csrfField(data.csrfToken)}
<p><label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required></p>
<p><label for="confirm">New password again</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required></p>
<p><button type="submit">Change password</button></p>
</form>
</div>`
  }
}

export const defaultViews: DefaultViews = { layout, index, category, login, notFound, forbidden, lostPassword, changePassword }
