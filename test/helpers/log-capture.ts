import { Writable } from 'node:stream'
import type { FastifyServerOptions } from 'fastify'

/** One line of the app's pino log, as written. */
export interface LogLine {
  level: number
  msg: string
  reqId?: string
  code?: string
  err?: { message?: string, stack?: string, type?: string }
  [field: string]: unknown
}

export const WARN = 40
export const ERROR = 50

/** Fastify's `logger` option writing every line (at `level` and above) into `lines`, to assert on. */
export function capturedLog (level = 'warn'): { lines: LogLine[], logger: FastifyServerOptions['logger'] } {
  const lines: LogLine[] = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as LogLine)
      done()
    }
  })
  return { lines, logger: { level, stream } }
}
