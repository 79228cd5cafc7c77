import type { FastifyInstance } from 'fastify'
import { subscribeEvent, type SectionEventName } from 'fastify-schools-resources'

/**
 * The audit trail: what the section's events say, one pino line each (info for what went through, warn
 * for refusals and lockouts), naming the member's id and the client address. Store outages and refused
 * redirects are left out: the section's own log already summarises them, and a refused redirect is
 * every anonymous visitor.
 */
const AUDITED: Partial<Record<SectionEventName, { level: 'info' | 'warn', msg: string }>> = {
  signInSucceeded: { level: 'info', msg: 'audit: signed in' },
  signInFailed: { level: 'warn', msg: 'audit: sign-in refused' },
  lockedOut: { level: 'warn', msg: 'audit: locked out' },
  signedOut: { level: 'info', msg: 'audit: signed out' },
  accessRefused: { level: 'warn', msg: 'audit: access refused' },
  fileDownloaded: { level: 'info', msg: 'audit: file downloaded' }
}

/**
 * Writes `app`'s events to its log (events of other apps in the process are theirs); stops when it closes.
 * Through subscribeEvent, so that a log sink that throws loses a line, not the process.
 */
export function auditLog (app: FastifyInstance): void {
  const stops = Object.entries(AUDITED).map(([name, { level, msg }]) =>
    subscribeEvent(name as SectionEventName, ({ app: from, requestId, ...fields }) => {
      if (from.server !== app.server) return
      app.log[level]({ audit: name, reqId: requestId, ...fields }, msg)
    }))
  app.addHook('onClose', async () => { for (const stop of stops) stop() })
}
