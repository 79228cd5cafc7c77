import { SMTPServer } from 'smtp-server'
import nodemailer from 'nodemailer'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

/** One mail as it reached the SMTP server: its recipients and its raw text, quoted-printable undone. */
export interface ArrivedMail { to: string[], text: string }

/**
 * A real SMTP server in the test process and a nodemailer transport that sends to it, as a host's
 * `sendResetEmail` would: the test reads what arrived. Closed at the test's end.
 */
export async function mailServer (t: Test) {
  const arrived: ArrivedMail[] = []
  const waiting: Array<(mail: ArrivedMail) => void> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData (stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        // Long lines come soft-broken and `=` encoded (quoted-printable); a link must be read whole.
        const text = Buffer.concat(chunks).toString('utf8').replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
        const mail = { to: session.envelope.rcptTo.map((r) => r.address), text }
        const waiter = waiting.shift()
        if (waiter === undefined) arrived.push(mail)
        else waiter(mail)
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as AddressInfo
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true })
  t.teardown(async () => {
    transport.close()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return {
    transport,
    /** The mails that arrived and nobody waited for. */
    arrived,
    /** The next mail to arrive (or the oldest one not yet taken). */
    next (): Promise<ArrivedMail> {
      const mail = arrived.shift()
      return mail === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(mail)
    }
  }
}

/** The reset link in a mail. */
export function resetLink (mail: ArrivedMail): string {
  const match = /https:\/\/\S+\/changepassword\?m=[\w-]+&t=[\w-]+/.exec(mail.text)
  if (match === null) throw new Error(`no reset link in the mail: ${mail.text}`)
  return match[0]
}
