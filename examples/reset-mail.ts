// The example's reset emails (the section's passwordReset.sendResetEmail). With SMTP_URL, through
// nodemailer to that server; nodemailer is loaded only then, so a site without mail needs no mail
// package. Without it (development), the link goes to the log instead: examples/settings.ts refuses an
// https BASE_URL without SMTP_URL, so a production site never logs a link that signs someone in.
import type { ResetEmail } from 'fastify-schools-resources'

export interface ResetMailSettings {
  /** smtp:// or smtps:// with any user and password in it; unset: the link is logged. */
  smtpUrl?: string
  /** The mails' From (default `Riverside School <no-reply@localhost>`). */
  from?: string
}

/** The text of the mail: the link, until when it works, and what to do if it was not you. */
function body (siteName: string, { member, url, expiresAt }: ResetEmail): string {
  return `Hello ${member.name},

Someone (we hope you) asked to choose a new password for ${siteName}. Open this link to choose one:

${url}

The link works until ${expiresAt.toUTCString()}, once. If you did not ask, ignore this email: your
password stays as it is.
`
}

/** The sendResetEmail for `settings`: nodemailer's transport is made once, on the first mail. */
export function resetMailer (settings: ResetMailSettings, siteName: string): (mail: ResetEmail) => Promise<void> {
  const { smtpUrl, from = `${siteName} <no-reply@localhost>` } = settings
  if (smtpUrl === undefined) {
    return async ({ member, url, request }) => {
      request.log.info({ memberId: member.id, url }, 'password reset link (no SMTP_URL, so it is logged rather than sent; development only)')
    }
  }
  let transport: Promise<{ sendMail: (mail: object) => Promise<unknown> }> | undefined
  return async (mail) => {
    transport ??= import('nodemailer').then((nodemailer) => nodemailer.createTransport(smtpUrl))
    const to = mail.member.email
    if (typeof to !== 'string') throw new Error(`member ${String(mail.member.id)} has no email address to send the link to`)
    await (await transport).sendMail({ from, to, subject: `Choose a new password for ${siteName}`, text: body(siteName, mail) })
  }
}
