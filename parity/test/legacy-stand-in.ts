import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { gzipSync } from 'node:zlib'
import type { AddressInfo } from 'node:net'

/**
 * A stand-in for the legacy SilverStripe site, as far as an anonymous visitor sees it, written from its
 * documented rules (the spec, docs/legacy-differences.md) rather than from this package:
 * - Security::permissionFailure: 302 to `Director::absoluteURL('Security/login') . '?BackURL=' .
 *   urlencode($_SERVER['REQUEST_URI'])`, REQUEST_URI being the request target exactly as received;
 * - PHP's urlencode: `A-Z a-z 0-9 - _ .` kept, space as `+`, every other byte `%XX` (so `~` is `%7E`);
 * - a session (PHPSESSID) started for every visitor;
 * - HTTPCacheControlMiddleware's default state: `no-cache, no-store, must-revalidate`;
 * - major 5 (5.1+ with add_trailing_slash off, CanonicalURLMiddleware enforcing it): `/x/` answered
 *   301 to `/x` (query kept) before anything else.
 */
export interface StandInOptions {
  major?: 4 | 5
  /** The return parameter's name (default BackURL). */
  returnParam?: string
  /** The origin it writes in its Locations (its base URL); default: where it listens. */
  publicOrigin?: string
  /** Deliberate differences to plant, each on the category page whose slug is given. */
  plant?: {
    /** Answers this category with 301 rather than 302. */
    status?: string
    /** Writes this category's BackURL escapes in lower case (`%2f`): the same address, another encoding. */
    encoding?: string
    /** A relative Location for this category. */
    relativeLocation?: string
    /** No Cache-Control on the section index: a shared cache may keep it. */
    indexCacheable?: boolean
    /** Addresses whose connection is dropped without an answer. */
    hangUp?: string[]
    /** Addresses answered 503 with Retry-After: 1 the first time. */
    unavailableOnce?: string[]
    /** Category pages for a signed-in member without Cache-Control: a shared cache may keep them. */
    memberCacheable?: boolean
    /** Addresses answered 429 without Retry-After the first time. */
    busyOnce?: string[]
    /** Gives this category's BackURL without its query, as if built from the path alone. */
    dropQuery?: string
    /** Addresses never answered. */
    silent?: string[]
    /** Answers this category's redirect `public, max-age=300` beside PHP's `Pragma: no-cache`: a shared cache may keep it. */
    pragmaPublic?: string
    /** This category is gone: 404. */
    removed?: string
    /** Addresses answered 200 to anyone, as if made public. */
    open?: string[]
    /** Addresses answered without starting a session. */
    noSession?: string[]
    /** Addresses where a member's session is replaced by a new one (a new PHPSESSID value). */
    newSession?: string[]
  }
  /** Sends the session cookie again with every answer, its value unchanged (a rolling session). */
  rolling?: boolean
  /** A hostile site: */
  hostile?: {
    /** The login form's action (an absolute URL elsewhere). */
    loginAction?: string
    /** More `<loc>`s in the sitemap index (other origins, internal addresses). */
    indexLocs?: string[]
    /** More links on the section's index (other origins). */
    links?: string[]
  }
}

// A gzip bomb: about 1 MB on the wire, 1 GB once decompressed (gzip members one after another, each
// 10 MB of spaces), after a head that makes it look like what was asked for.
let spaces: Buffer | undefined
export function gzipBomb (head: string): Buffer {
  spaces ??= gzipSync(Buffer.alloc(10 * 1024 * 1024, ' '), { level: 9 })
  return Buffer.concat([gzipSync(head), ...Array.from({ length: 100 }, () => spaces!)])
}

/** A 1 MB sitemap of 20,000 addresses, every one on an internal address (and so skipped). */
export const HUGE_SITEMAP = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${
  Array.from({ length: 20_000 }, (_, i) => `<url><loc>http://10.0.0.1/schools/resources/resources/c${i}/</loc></url>`).join('\n')}</urlset>`
/** 1 MB of `<loc>`s never closed: what a regular expression looking for `</loc>` takes quadratic time over. */
export const OPEN_SITEMAP = `<urlset>${'<loc>http://a/'.repeat(75_000)}</urlset>`

export function phpUrlencode (value: string): string {
  let out = ''
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte)
    if (/[A-Za-z0-9_.-]/.test(c)) out += c
    else if (c === ' ') out += '+'
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

const SS_NO_CACHE = 'no-cache, no-store, must-revalidate'
const CATEGORIES = ['maths', 'english', 'science', 'humanities', 'wellbeing', 'staff-room']

export interface StandIn {
  origin: string
  /** When each request arrived (performance.now()), and its target. */
  log: Array<{ at: number, target: string, method: string, headers: IncomingMessage['headers'] }>
  close: () => Promise<void>
}

/** The one member of the stand-in. */
export const MEMBER = { email: 'teacher@example.org', password: 'correct horse battery staple' }

export async function startStandIn (options: StandInOptions = {}): Promise<StandIn> {
  const log: StandIn['log'] = []
  const sessions = new Map<string, { token: string, member: boolean }>()
  const plant = options.plant ?? {}
  let publicOrigin = ''
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = req.url!
    log.push({ at: performance.now(), target, method: req.method!, headers: req.headers })
    if (plant.hangUp?.includes(target)) { req.socket.destroy(); return }
    if (plant.silent?.includes(target)) return
    const first = log.filter((l) => l.target === target).length === 1
    if (first && plant.unavailableOnce?.includes(target)) { res.writeHead(503, { 'retry-after': '1' }).end(); return }
    if (first && plant.busyOnce?.includes(target)) { res.writeHead(429).end(); return }
    const [path, query] = target.split(/\?(.*)/s)
    // Its session: PHPSESSID, started on the first request; signing in marks it.
    let session = /(?:^|;\s*)PHPSESSID=([^;]+)/.exec(req.headers.cookie ?? '')?.[1]
    const start = session === undefined || !sessions.has(session)
    if (start) session = randomBytes(12).toString('hex')
    const state = sessions.get(session!) ?? { token: randomBytes(8).toString('hex'), member: false }
    if (plant.newSession?.includes(target) && state.member) session = randomBytes(12).toString('hex')
    if (!plant.noSession?.includes(target)) {
      sessions.set(session!, state)
      if (start || options.rolling === true || plant.newSession?.includes(target)) res.setHeader('set-cookie', `PHPSESSID=${session}; path=/; HttpOnly`)
    }
    res.setHeader('cache-control', SS_NO_CACHE)
    if (options.major === 5 && path.length > 1 && path.endsWith('/')) {
      res.writeHead(301, { location: `${publicOrigin}${path.slice(0, -1)}${query === undefined ? '' : `?${query}`}` }).end()
      return
    }
    const category = /^\/schools\/resources\/resources\/([^/]*)/.exec(path)
    if (plant.open?.includes(target) || (category !== null && state.member)) {
      if (plant.memberCacheable === true) res.removeHeader('cache-control')
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<h1>${category?.[1] ?? path}</h1>`)
      return
    }
    // MemberLoginForm: the SecurityID token of the session, Email and Password, the doLogin action;
    // a failure goes back to the form.
    if (path === '/Security/LoginForm' && req.method === 'POST') {
      let body = ''
      req.on('data', (chunk) => { body += chunk })
      req.on('end', () => {
        const form = new URLSearchParams(body)
        const ok = form.get('SecurityID') === state.token && form.has('action_doLogin') &&
          form.get('Email') === MEMBER.email && form.get('Password') === MEMBER.password
        state.member = ok
        res.writeHead(302, { location: `${publicOrigin}${ok ? '/schools/resources/' : '/Security/login'}` }).end()
      })
      return
    }
    if (category !== null && category[1] === plant.removed) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<h1>Page not found</h1>')
      return
    }
    if (category !== null) {
      const slug = category[1]
      if (slug === plant.pragmaPublic) res.setHeader('cache-control', 'public, max-age=300').setHeader('pragma', 'no-cache')
      const uri = slug === plant.dropQuery ? path : target
      const backUrl = slug === plant.encoding ? phpUrlencode(uri).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()) : phpUrlencode(uri)
      const login = `/Security/login?${options.returnParam ?? 'BackURL'}=${backUrl}`
      res.writeHead(slug === plant.status ? 301 : 302, { location: slug === plant.relativeLocation ? login : publicOrigin + login }).end()
      return
    }
    if (path === '/schools/resources/' || path === '/schools/resources') {
      if (plant.indexCacheable === true) res.removeHeader('cache-control')
      const links = CATEGORIES.map((slug) => `<li><a href="/schools/resources/resources/${slug}/">${slug}</a></li>`).join('')
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><title>Resources</title><a href="/Security/login">Log in</a><a href="#main">skip</a><ul>${links}</ul><a href="https://elsewhere.example/x">out</a>${
          (options.hostile?.links ?? []).map((href) => `<a href="${href}">more</a>`).join('')}`)
      return
    }
    // What a hostile site sends: bodies that never end once decompressed, sitemaps built to be slow.
    if (path === '/schools/resources/bomb/' || path === '/bomb.xml' || path === '/gone-bomb.xml') {
      const html = path.endsWith('/')
      res.writeHead(path === '/gone-bomb.xml' ? 404 : 200, { 'content-type': html ? 'text/html' : 'application/xml', 'content-encoding': 'gzip' })
        .end(gzipBomb(html ? '<!doctype html><a href="/schools/resources/resources/maths/">maths</a>' : '<?xml version="1.0"?><urlset>'))
      return
    }
    if (path === '/huge-sitemap.xml' || path === '/open-sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' }).end(path === '/huge-sitemap.xml' ? HUGE_SITEMAP : OPEN_SITEMAP)
      return
    }
    // The googlesitemaps module's index, and the one sitemap it lists.
    if (path === '/sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' })
        .end(`<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${publicOrigin}/sitemap-pages.xml</loc></sitemap>${
          (options.hostile?.indexLocs ?? []).map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`).join('')}</sitemapindex>`)
      return
    }
    if (path === '/sitemap-of-indexes.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' })
        .end(`<sitemapindex><sitemap><loc>${publicOrigin}/sitemap.xml</loc></sitemap></sitemapindex>`)
      return
    }
    if (path === '/sitemap-pages.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' })
        .end(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${publicOrigin}/schools/resources/</loc></url></urlset>`)
      return
    }
    if (path === '/Security/login') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<form id="search" action="/search"><input type="text" name="q"></form>' +
          '<form method="post" action="' + (options.hostile?.loginAction ?? '/Security/LoginForm') + '"><input type="hidden" name="SecurityID" value="' + state.token + '">' +
          '<input type="text" name="Email"><input type="password" name="Password"><input type="checkbox" name="Remember" value="1">' +
          '<button type="submit" name="action_doLogin">Log in</button></form>')
      return
    }
    res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<h1>Page not found</h1>')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  publicOrigin = options.publicOrigin ?? origin
  return {
    origin,
    log,
    close: async () => { server.closeAllConnections(); server.close(); await once(server, 'close') }
  }
}
