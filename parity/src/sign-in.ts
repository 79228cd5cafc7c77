import { ParityInputError, printable } from './errors.js'
import type { Answer } from './politeness.js'
import { tags } from './scan.js'

/** A member's address and password for one site; the password comes from the environment, never argv. */
export interface Credentials {
  user: string
  password: string
}

/** The cookies a site set, by name, as a browser keeps them for one origin. */
export type CookieJar = Map<string, string>

function keepCookies (jar: CookieJar, headers: Headers): void {
  for (const cookie of headers.getSetCookie()) {
    const [pair, ...attributes] = cookie.split(';')
    const eq = pair.indexOf('=')
    const name = pair.slice(0, eq).trim()
    const value = pair.slice(eq + 1).trim()
    if (value === '' || attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a))) jar.delete(name)
    else jar.set(name, value)
  }
}

export const cookieHeader = (jar: CookieJar) => [...jar].map(([name, value]) => `${name}=${value}`).join('; ')

/**
 * The login form as a browser would fill it: the form with a password field, its hidden fields (the
 * CSRF token, whatever its name) as they are, the first email (else text) field for the user, the
 * password field, and the named submit button. Field names differ between the two sites; types do not.
 */
export function fillLoginForm (html: string, pageUrl: string, credentials: Credentials): { action: string, body: string } | undefined {
  let form: { action?: string, inputs: Array<Record<string, string>> } | undefined
  for (const tag of tags(html)) {
    if (tag.name === 'form' && !tag.closing) {
      // A form inside a form is ignored, as a browser does.
      form ??= { action: tag.attributes.action, inputs: [] }
    } else if (form !== undefined && !tag.closing && (tag.name === 'input' || tag.name === 'button')) {
      form.inputs.push({ element: tag.name, ...tag.attributes })
    } else if (form !== undefined && tag.name === 'form' && tag.closing) {
      const filled = fill(form.inputs, credentials)
      if (filled !== undefined) return { action: URL.parse(form.action ?? '', pageUrl)?.href ?? String(form.action), body: filled }
      form = undefined
    }
  }
  return undefined
}

function fill (inputs: Array<Record<string, string>>, credentials: Credentials): string | undefined {
  const type = (i: Record<string, string>) => (i.type ?? (i.element === 'button' ? 'submit' : 'text')).toLowerCase()
  const password = inputs.find((i) => type(i) === 'password')
  if (password === undefined) return undefined
  const user = inputs.find((i) => type(i) === 'email') ?? inputs.find((i) => type(i) === 'text')
  const fields = new URLSearchParams()
  for (const input of inputs) {
    if (input.name === undefined) continue
    if (input === password) fields.append(input.name, credentials.password)
    else if (input === user) fields.append(input.name, credentials.user)
    else if (type(input) === 'hidden' || type(input) === 'submit') fields.append(input.name, input.value ?? '')
  }
  return fields.toString()
}

/** One site as the sign-in sees it: where it runs, and every origin its own pages may name (its public one). */
export interface SignInSite {
  name: 'legacy' | 'candidate'
  origin: string
  origins: string[]
}

/** A request for a path of this one site, with its own headers added: it can reach no other origin. */
export type Requester = (target: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string) => Promise<Answer>

/**
 * Signs in to one site through its login page, as a browser does; resolves to the cookies of the signed-in
 * session. Success is a redirect away from the login page (both sites send a failure back to the form).
 * The password goes only where the site runs: a form whose action names another origin (a hostile or
 * misconfigured page) is refused before anything is posted; one naming its public origin is posted to
 * where it runs, as the sitemap's addresses are fetched.
 */
export async function signIn ({ name, origin, origins }: SignInSite, loginPath: string, credentials: Credentials, request: Requester): Promise<CookieJar> {
  const jar: CookieJar = new Map()
  const pageUrl = origin + loginPath
  const page = await request(loginPath, 'GET', {})
  keepCookies(jar, page.headers)
  const form = fillLoginForm(page.body, pageUrl, credentials)
  if (form === undefined) {
    const cut = page.cut ? ', cut at --max-body' : ''
    throw new ParityInputError(`cannot sign in to the ${name} site: ${pageUrl} has no form with a password field (answered ${page.status}${cut})`)
  }
  const action = URL.parse(form.action)
  if (action === null || !origins.includes(action.origin)) {
    throw new ParityInputError(`cannot sign in to the ${name} site: its login form posts to ${printable(form.action)}, which is not ${origins.join(' or ')}; nothing was sent there`)
  }
  const answer = await request(action.pathname + action.search, 'POST', { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' }, form.body)
  keepCookies(jar, answer.headers)
  const location = answer.headers.get('location')
  if (answer.status < 300 || answer.status > 399 || location === null || new URL(location, pageUrl).pathname === loginPath) {
    throw new ParityInputError(`cannot sign in to the ${name} site as ${credentials.user}: the login form answered ${answer.status}${location === null ? '' : ` to ${location}`}`)
  }
  return jar
}
