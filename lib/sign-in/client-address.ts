import { isIPv4, isIPv6 } from 'node:net'

/** The eight 16-bit groups of a valid IPv6 address (any spelling: `::`, upper case, a dotted IPv4 tail). */
function groups (address: string): number[] {
  let text = address.toLowerCase()
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (v4 !== null) {
    const [a, b, c, d] = v4.slice(1).map(Number)
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...fill, ...right].map((group) => parseInt(group, 16))
}

/**
 * The client a per-address count belongs to: an IPv4 address as it is, an IPv4-mapped IPv6 address as
 * its IPv4 address, and an IPv6 address as its /64 (whoever holds one address of a /64 usually holds
 * all of it, so a fresh address in it gets no fresh budget). Anything else (no address) is one client.
 */
export function clientKey (ip: string | undefined): string {
  const address = (ip ?? '').split('%')[0]
  if (isIPv4(address)) return address
  if (!isIPv6(address)) return 'unknown'
  const g = groups(address)
  if (g.slice(0, 5).every((n) => n === 0) && g[5] === 0xffff) return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`
  return `${g.slice(0, 4).map((n) => n.toString(16)).join(':')}::/64`
}
