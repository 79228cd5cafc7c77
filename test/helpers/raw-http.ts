import { connect } from 'node:net'

/**
 * A GET with `path` as raw bytes on the request line, over a socket of its own: what scanners and
 * broken clients send, which app.inject() (it parses the URL) would normalise first.
 */
export function rawRequest (port: number, path: string, cookie?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(Buffer.concat([
        Buffer.from('GET '), Buffer.from(path, 'utf8'),
        Buffer.from(` HTTP/1.1\r\nHost: localhost\r\n${cookie === undefined ? '' : `Cookie: ${cookie}\r\n`}Connection: close\r\n\r\n`)
      ]))
    })
    let data = ''
    socket.on('data', (chunk) => { data += chunk.toString('latin1') })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
  })
}

export function statusOf (raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1])
}

export function locationOf (raw: string): string | undefined {
  return /\r\nlocation: ([^\r]*)\r\n/i.exec(raw)?.[1]
}
