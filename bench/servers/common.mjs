// Shared by the bench servers: what every server answers, so the runner can check them all alike.
export const port = Number(process.env.PORT ?? 3000)
export const host = '127.0.0.1'
export const baseUrl = process.env.BASE_URL ?? 'https://www.example.org'
export const secret = process.env.SESSION_SECRET ?? 'bench-secret-bench-secret-bench-secret-0123'
export const member = { id: 'demo-teacher', name: 'Demo Teacher', email: 'teacher@example.org' }
export const categoryRoute = '/schools/resources/resources/'
export const loginPath = '/Security/login'

/** What a Node user writes: the path in BackURL with encodeURIComponent (same bytes as PHP's urlencode for our paths). */
export function loginUrl (url) {
  return `${baseUrl}${loginPath}?BackURL=${encodeURIComponent(url)}`
}

/** The peers' "small HTML page" for a signed-in member. */
export function smallPage (name, slug) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${slug}</title></head><body><p>Signed in as ${name}</p><h1>${slug}</h1></body></html>`
}

/** Answers the runner's questions over IPC (only when started with an IPC channel). */
export function answerStats (extra = () => ({})) {
  if (typeof process.send !== 'function') return
  process.on('message', (msg) => {
    if (msg?.type === 'stats') process.send({ type: 'stats', id: msg.id, ...extra() })
  })
  process.channel?.unref()
}

export function ready (address) {
  process.send?.({ type: 'ready', address })
}

// A clean exit on SIGTERM, so that a server run under `node --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0))
