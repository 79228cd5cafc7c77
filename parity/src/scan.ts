/** One start or end tag of an HTML page, with its attributes (names in lower case, entities decoded). */
export interface Tag {
  name: string
  closing: boolean
  attributes: Record<string, string>
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'", '#x27': "'" }
export const decodeEntities = (text: string) => text.replace(/&(amp|lt|gt|quot|apos|#39|#x27);/g, (_m, name: string) => ENTITIES[name])

const SPACE = /[\t\n\f\r ]/
const NAME_START = /[A-Za-z]/

/**
 * The tags of a page, in order, read in one pass: every character is looked at a bounded number of
 * times, whatever the page holds (an unclosed quote, comment or tag ends the scan), so a hostile page
 * costs time in proportion to its size. Comments are skipped; text is not returned.
 */
export function * tags (html: string): Generator<Tag> {
  const n = html.length
  let i = 0
  for (;;) {
    const lt = html.indexOf('<', i)
    if (lt === -1) return
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4)
      if (end === -1) return
      i = end + 3
      continue
    }
    let j = lt + 1
    const closing = html[j] === '/'
    if (closing) j++
    if (!NAME_START.test(html[j] ?? '')) { i = lt + 1; continue }
    const nameStart = j
    while (j < n && !SPACE.test(html[j]) && html[j] !== '/' && html[j] !== '>') j++
    const name = html.slice(nameStart, j).toLowerCase()
    const attributes: Record<string, string> = Object.create(null)
    for (;;) {
      while (j < n && (SPACE.test(html[j]) || html[j] === '/')) j++
      if (j >= n) return
      if (html[j] === '>') { j++; break }
      const attrStart = j
      while (j < n && !SPACE.test(html[j]) && html[j] !== '/' && html[j] !== '>' && (html[j] !== '=' || j === attrStart)) j++
      const attr = html.slice(attrStart, j).toLowerCase()
      while (j < n && SPACE.test(html[j])) j++
      let value = ''
      if (html[j] === '=') {
        j++
        while (j < n && SPACE.test(html[j])) j++
        const quote = html[j]
        if (quote === '"' || quote === "'") {
          const end = html.indexOf(quote, j + 1)
          if (end === -1) return
          value = html.slice(j + 1, end)
          j = end + 1
        } else {
          const start = j
          while (j < n && !SPACE.test(html[j]) && html[j] !== '>') j++
          value = html.slice(start, j)
        }
      }
      // The first of two attributes with one name counts, as in a browser.
      if (!(attr in attributes)) attributes[attr] = decodeEntities(value)
    }
    yield { name, closing, attributes }
    i = j
  }
}
