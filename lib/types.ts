// Shapes shared across the features, and every declaration this package merges into Fastify's types, in
// one place. Imports nothing of ours, nor any session plugin: a host may have none (docs/session-wiring.md).
import type { FastifyRequest, preHandlerHookHandler } from 'fastify'
import type { kAnonymousRedirect, kMembersOnlyGuarded, kOutageSignOut } from './symbols.js'

/** A signed-in member, as kept in the session. Keep it small and JSON-serialisable. */
export interface Member {
  /** A non-empty string or a finite number, as a database gives it (`42`, `'t-1'`, a UUID). */
  id: string | number
  name: string
  email?: string
  /**
   * The groups the member belongs to (`['staff']`), matched against a category's `audience`. Absent or
   * empty: the member sees only categories open to every member.
   */
  groups?: readonly string[]
}

export interface Credentials {
  email: string
  password: string
}

/** How a resource is delivered; free text is allowed for formats a school adds. */
export type ResourceFormat = 'Worksheet' | 'Lesson plan' | 'Slides' | 'Video' | 'Interactive' | 'Assessment' | 'Reading' | (string & {})

export interface Category {
  /** One lower-case path segment, e.g. `maths`. */
  slug: string
  title: string
  description: string
  /**
   * The groups that may open the category (`['staff']`): a member sees it when one of its groups is
   * listed. Absent: every signed-in member.
   */
  audience?: readonly string[]
}

interface ResourceFields {
  id: string
  title: string
  summary: string
  subject: string
  /** e.g. `['Year 7', 'Year 8']`. */
  yearLevels: readonly string[]
  format: ResourceFormat
}

/** A resource at an address of its own, open to anyone who has the link. */
export interface UrlResource extends ResourceFields {
  /** Where the resource lives: an absolute http(s) URL or a path on this site. */
  url: string
  file?: never
}

/** A resource the section serves itself, to members who may see its category (docs/files.md). */
export interface FileResource extends ResourceFields {
  /** Its path in the `files.root` directory, e.g. `maths/fraction-wall.pdf`. */
  file: string
  url?: never
}

/** Exactly one of `url` and `file`. */
export type Resource = UrlResource | FileResource

export interface CategoryWithResources extends Category {
  resources: readonly Resource[]
}

/** Which page of the index the section reads (docs/pages-and-views.md#paged-reads). */
export interface CategoriesPageQuery {
  /** How many categories to skip: a multiple of `limit`. */
  offset: number
  /** At most how many categories to give (the section's pageSize). */
  limit: number
  /**
   * Present when the index hides restricted categories (restrictedCategories: 'hide'): list only those
   * without an audience and those whose audience names one of these groups (empty: a visitor, or a
   * member without groups). Absent: list every category.
   */
  visibleTo?: readonly string[]
}

/** A page of the index: the categories from `offset`, at most `limit`, and how many there are in all. */
export interface CategoriesPage {
  categories: readonly Category[]
  /** How many categories the whole list has (those `visibleTo` may see, when it is given). */
  total: number
}

/** Which page of a category the section reads: the filters as asked, and where the page starts. */
export interface ResourcesPageQuery {
  /** How many matching resources to skip: a multiple of `limit`. */
  offset: number
  /** At most how many resources to give (the section's pageSize). */
  limit: number
  /** Only resources of this subject; absent: every subject. A value that is no subject of the category matches nothing. */
  subject?: string
  /** Only resources for this year level; absent: every year level. */
  year?: string
}

/** A page of a category: its own fields, the matching resources from `offset`, and the filters' choices. */
export interface ResourcesPage {
  category: Category
  /** The resources that match the filters, from `offset`, at most `limit`, in the category's order. */
  resources: readonly Resource[]
  /** How many resources match the filters. */
  total: number
  /** How many resources the category has, filters aside. */
  count: number
  /** Every subject of the category's resources (all of them, not only the matching ones). */
  subjects: readonly string[]
  /** Every year level of the category's resources. */
  years: readonly string[]
}

/** Source of categories and resources. Async so that a database or CMS can stand behind it. */
export interface Catalog {
  listCategories (): Promise<readonly Category[]>
  /** The category with its resources, or undefined when no category has that slug. */
  getCategory (slug: string): Promise<CategoryWithResources | undefined>
  /**
   * Optional: one page of the index, so that a catalog backed by a database reads only that page. The
   * section uses it for the index page (and JSON asking for a page); without it, `listCategories()`.
   */
  listCategoriesPage? (query: CategoriesPageQuery): Promise<CategoriesPage>
  /**
   * Optional: one page of a category, after the filters, or undefined when no category has that slug.
   * The section uses it for the category page (and JSON asking for a page); without it, `getCategory()`.
   */
  getCategoryPage? (slug: string, query: ResourcesPageQuery): Promise<ResourcesPage | undefined>
}

export interface CatalogData {
  categories: CategoryWithResources[]
}

/** Where an anonymous visitor of a members-only route is sent: the login page, then (refused) the index. */
export interface AnonymousRedirect {
  /** The site's origin, or undefined to use the request's own. */
  baseUrl: string | undefined
  loginPath: string
  indexPath: string
  /** The return address's query name (option returnParam, default `BackURL`). */
  returnParam: string
}

/** The status codes `reply.redirectOnce` sends; any other throws FST_SR_INVALID_REDIRECT_CODE. */
export type RedirectStatusCode = 300 | 301 | 302 | 303 | 307 | 308

/**
 * What `reply.redirectOnce` takes as its code: a literal must be a redirect status, so `200` is a type
 * error; a plain `number` (a host's setting) still passes, and is checked when the call runs.
 */
export type RedirectCode<Code extends number> = number extends Code ? number : RedirectStatusCode

/** Who may open a members-only host route (`config.membersOnly` or `fastify.membersOnly()`). */
export interface MembersOnlyOptions {
  /** The groups that may open it (`['staff']`): a member sees it when one of its groups is listed. Absent: every signed-in member. */
  groups?: readonly string[]
  /** What the 403 page says the member has no access to (default `this page`). */
  title?: string
}

/** What `reply.signInMember` takes beside the member (docs/oidc.md#your-own-callback). */
export interface SignInMemberOptions {
  /**
   * How the member proved who they are, for the sign-in event: `'password'`, `'oidc'`, or your own word
   * (a–z, 0–9 and `-`, 1 to 32 characters, such as `'google-oauth'`); anything else is a TypeError.
   */
  method: string
  /** Where to go once signed in: a path (or URL) on this site; anything else ends on the section index. */
  backUrl?: string
  /** The provider's name for the event (same form as `method`). */
  provider?: string
}

/** The sign-out route's form check and the session cookie it expires when the store cannot be reached. */
export interface OutageSignOut {
  verifyCsrf: preHandlerHookHandler
  cookieName: string
  /** The remember cookie's name for the request (`rememberMe` on): expired too, so the device is forgotten here. */
  rememberCookie?: ((request: FastifyRequest) => string) | undefined
}

/** The options of `app.schoolsResources.signOutEverywhere`. */
export interface SignOutEverywhereCall {
  /** Who asked (an admin's id, `'password-reset'`): the event's `requestedBy`. */
  by?: string | number
}

/** `app.schoolsResources`: the section's host API. */
export interface SchoolsResourcesApi {
  /**
   * Signs the member with `memberId` (as the host's members have it: compared as `String(id)`) out of
   * every session, on every device and instance: each ends at its next request (within 5 s on another
   * instance). Rejects with FST_SR_INVALID_MEMBER_ID (a TypeError) for an id that is none, and with
   * FST_SR_STORE_UNAVAILABLE in a store outage.
   */
  signOutEverywhere (memberId: string | number, options?: SignOutEverywhereCall): Promise<void>
}

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Redirects unless this reply is already directed elsewhere. A different target is refused with a
     * `UserWarning` and `undefined`; the same target (after resolving both against the site's base URL)
     * redirects once and returns the reply.
     */
    redirectOnce<Code extends number = 302>(url: string, code?: Code & RedirectCode<Code>): FastifyReply | undefined
    /**
     * Signs `member` in as the section's own sign-in does (a new session keeping the host's data, the
     * member or its id stored, the sign-in event with `method`, a new CSRF cookie) and answers 303 to
     * `backUrl` when it stays on this site, else to the section index. Decorated where the section keeps
     * its members in the session (no `getMember`), `signIn` on or off: the end of a host's own callback.
     */
    signInMember(member: Member, options: SignInMemberOptions): Promise<FastifyReply>
  }
  interface FastifyRequest {
    /**
     * The member the section's guard let in on this request (a `membersOnly` route, a category page), as
     * it is now: with `findMember`, freshly loaded. Undefined where no guard ran (docs/host-routes.md).
     */
    readonly schoolsMember: Member | undefined
  }
  interface FastifyInstance {
    /**
     * The section's members-only guard for a host route, as its first `preHandler`: the login redirect
     * for visitors, a 403 for members outside `groups`, the route's own hooks and handler for the others.
     */
    membersOnly(options?: MembersOnlyOptions): preHandlerHookHandler
    /** The section's host API (`signOutEverywhere`), where the section keeps its members in the session. */
    schoolsResources: SchoolsResourcesApi
  }
  interface FastifyContextConfig {
    /** Makes a host route members-only, for members of `groups` when given (docs/host-routes.md). */
    membersOnly?: boolean | MembersOnlyOptions
    /** Set by the section on its category route (and members-only host routes); read by the anonymous short-circuit. */
    [kAnonymousRedirect]?: AnonymousRedirect
    /** Set by the section on a members-only host route it put its guard on. */
    [kMembersOnlyGuarded]?: true
    /** Set by the section on its sign-out route: what a sign-out needs while the store is down. */
    [kOutageSignOut]?: OutageSignOut
  }
  // @fastify/session's session data, where it is installed; an interface of its own (unused) where not.
  interface Session {
    /** Set at sign-in under the default `sessionKey`; with `findMember` only `{ id, sessionVersion? }`: read `request.schoolsMember`. */
    member?: Member
  }
}
