import type { Category, CategoryWithResources, Resource } from './catalog.js'
import type { Member } from './member.js'
import { html, SafeHtml, unsafeRaw } from './html.js'

/** What every view knows about the request it renders for. */
export interface PageContext {
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
  }
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
  /** CSRF token for the form. */
  csrfToken?: string
  /** Set while the username is locked after too many failed attempts. */
  lockedUntil?: Date
}

/** Page renderers. Strings are sent as they are, so a replacement must escape what it interpolates (`html` does). */
export interface Views {
  layout (page: Page, ctx: PageContext): SafeHtml | string
  index (data: { categories: readonly Category[] }, ctx: PageContext): Page
  category (data: { category: CategoryWithResources }, ctx: PageContext): Page
  login (data: LoginViewData, ctx: PageContext): Page
}

function csrfField (token: string | undefined): SafeHtml | '' {
  return token === undefined ? '' : html`<input type="hidden" name="_csrf" value="${token}">`
}

/** "09:15 UTC": the time a locked-out visitor may try again. */
export function retryTime (date: Date): string {
  return `${date.toISOString().slice(11, 16)} UTC`
}

function memberNav (ctx: PageContext): SafeHtml {
  if (ctx.member !== undefined) {
    return html`<p class="signed-in">Signed in as <strong>${ctx.member.name}</strong></p>
      ${ctx.signIn ? html`<form method="post" action="${ctx.paths.logout}">${csrfField(ctx.csrfToken)}<button type="submit">Sign out</button></form>` : ''}`
  }
  return ctx.signIn ? html`<a href="${ctx.paths.login}">Sign in</a>` : html``
}

function layout (page: Page, ctx: PageContext): SafeHtml {
  const body = page.body instanceof SafeHtml ? page.body : unsafeRaw(page.body)
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} | ${ctx.siteName}</title>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header>
<p class="site-name"><a href="${ctx.paths.index}">${ctx.siteName}</a></p>
<nav aria-label="Account">${memberNav(ctx)}</nav>
</header>
<main id="main">
${body}
</main>
</body>
</html>
`
}

function index ({ categories }: { categories: readonly Category[] }, ctx: PageContext): Page {
  const list = categories.length === 0
    ? html`<p>No categories have been published yet.</p>`
    : html`<ul class="categories">${categories.map((c) => html`
<li><h2><a href="${ctx.paths.category(c.slug)}">${c.title}</a></h2><p>${c.description}</p></li>`)}
</ul>`
  return {
    title: 'Resources',
    body: html`<h1>Resources</h1>
<p>Teaching and learning resources for our school community, grouped by category.${ctx.member === undefined ? ' Members sign in to open a category.' : ''}</p>
${list}`
  }
}

function resourceItem (r: Resource): SafeHtml {
  return html`
<li class="resource">
<h2><a href="${r.url}">${r.title}</a></h2>
<p>${r.summary}</p>
<dl>
<dt>Subject</dt><dd>${r.subject}</dd>
<dt>Year levels</dt><dd>${r.yearLevels.join(', ')}</dd>
<dt>Format</dt><dd>${r.format}</dd>
</dl>
</li>`
}

function category ({ category }: { category: CategoryWithResources }, ctx: PageContext): Page {
  return {
    title: category.title,
    body: html`<nav aria-label="Breadcrumb"><a href="${ctx.paths.index}">Resources</a></nav>
<h1>${category.title}</h1>
<p>${category.description}</p>
${category.resources.length === 0
  ? html`<p>No resources in this category yet.</p>`
  : html`<ul class="resources">${category.resources.map(resourceItem)}
</ul>`}`
  }
}

function login (data: LoginViewData, ctx: PageContext): Page {
  const message = data.lockedUntil !== undefined
    ? `Too many failed sign-in attempts. Try again after ${retryTime(data.lockedUntil)}.`
    : data.error
  const alert = message === undefined ? '' : html`<p class="error" role="alert" id="login-error">${message}</p>`
  if (ctx.member !== undefined) {
    return {
      title: 'Sign in',
      body: html`<h1>Sign in</h1>
${alert}
<p>You are signed in as <strong>${ctx.member.name}</strong>.</p>
<p><a href="${data.backUrl ?? ctx.paths.index}">Continue</a></p>`
    }
  }
  return {
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
${alert}
<form method="post" action="${ctx.paths.login}"${message === undefined ? '' : html` aria-describedby="login-error"`}>
${csrfField(data.csrfToken)}
${data.backUrl === undefined ? '' : html`<input type="hidden" name="BackURL" value="${data.backUrl}">`}
<p><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${data.email ?? ''}"></p>
<p><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button></p>
</form>`
  }
}

export const defaultViews: Views = { layout, index, category, login }
