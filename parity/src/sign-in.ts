import { ParityInputError } from './errors.js'
import type { Answer } from './politeness.js'

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

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" }
const decode = (text: string) => text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_m, name: string) => ENTITIES[name])

function attributes (tag: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [, name, ...values] of tag.matchAll(/([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    out[name.toLowerCase()] = decode(values.find((v) => v !== undefined) ?? '')
  }
  return out
}

/**
 * The login form as a browser would fill it: the form with a password field, its hidden fields (the
 * CSRF token, whatever its name) as they are, the first email (else text) field for the user, the
 * password field, and the named submit button. Field names differ between the two sites; types do not.
 */
export function fillLoginForm (html: string, pageUrl: string, credentials: Credentials): { action: string, body: string } | undefined {
  for (const [, formTag, inner] of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const inputs = [...inner.matchAll(/<(input|button)\b([^>]*)>/gi)].map(([, element, tag]) => ({ element: element.toLowerCase(), ...attributes(tag) } as Record<string, string>))
    const type = (i: Record<string, string>) => (i.type ?? (i.element === 'button' ? 'submit' : 'text')).toLowerCase()
    const password = inputs.find((i) => type(i) === 'password')
    if (password === undefined) continue
    const user = inputs.find((i) => type(i) === 'email') ?? inputs.find((i) => type(i) === 'text')
    const fields = new URLSearchParams()
    for (const input of inputs) {
      if (input.name === undefined) continue
      if (input === password) fields.append(input.name, credentials.password)
      else if (input === user) fields.append(input.name, credentials.user)
      else if (type(input) === 'hidden' || type(input) === 'submit') fields.append(input.name, input.value ?? '')
    }
    return { action: new URL(attributes(formTag).action ?? '', pageUrl).href, body: fields.toString() }
  }
  return undefined
}

export type Requester = (url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string) => Promise<Answer>

/**
 * Signs in to one site through its login page, as a browser does; resolves to the cookies of the signed-in
 * session. Success is a redirect away from the login page (both sites send a failure back to the form).
 */
export async function signIn (name: string, origin: string, loginPath: string, headers: Record<string, string>, credentials: Credentials, request: Requester): Promise<CookieJar> {
  const jar: CookieJar = new Map()
  const pageUrl = origin + loginPath
  const page = await request(pageUrl, 'GET', headers)
  keepCookies(jar, page.headers)
  const form = fillLoginForm(page.body, pageUrl, credentials)
  if (form === undefined) throw new ParityInputError(`cannot sign in to the ${name} site: ${pageUrl} has no form with a password field (answered ${page.status})`)
  const answer = await request(form.action, 'POST', { ...headers, cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' }, form.body)
  keepCookies(jar, answer.headers)
  const location = answer.headers.get('location')
  if (answer.status < 300 || answer.status > 399 || location === null || new URL(location, pageUrl).pathname === loginPath) {
    throw new ParityInputError(`cannot sign in to the ${name} site as ${credentials.user}: the login form answered ${answer.status}${location === null ? '' : ` to ${location}`}`)
  }
  return jar
}
