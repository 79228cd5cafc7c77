/**
 * The edge cases of a category address (`<prefix>/resources/<slug>/`): without (or with) its trailing
 * slash, with a query string, with a letter percent-encoded and reserved characters added, and in upper
 * case. Other addresses have none.
 */
export function variantsOf (target: string, prefix: string): string[] {
  const match = new RegExp(`^(${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/resources/)([^/?]+)(/?)$`).exec(target)
  if (match === null) return []
  const [, base, slug, slash] = match
  const encodedFirst = `%${slug.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${slug.slice(1)}`
  return [
    `${base}${slug}${slash === '/' ? '' : '/'}`,
    `${base}${slug}/?utm_source=newsletter&page=2`,
    `${base}${encodedFirst}/`,
    `${base}${slug}~!'()*%20+%C3%A9;@/`,
    `${base}${slug.toUpperCase()}/`
  ]
}
