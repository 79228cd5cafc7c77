import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { FastifyInstance } from 'fastify'
import { eventChannels, type SectionEvent } from 'fastify-schools-resources'

type Name = keyof typeof eventChannels

/**
 * The audit trail: what the section's events say, one pino line each (info for what went through, warn
 * for refusals and lockouts), naming the member's id and the client address. Store outages and refused
 * redirects are left out: the section's own log already summarises them, and a refused redirect is
 * every anonymous visitor.
 */
const AUDITED: Partial<Record<Name, { level: 'info' | 'warn', msg: string }>> = {
  signInSucceeded: { level: 'info', msg: 'audit: signed in' },
  signInFailed: { level: 'warn', msg: 'audit: sign-in refused' },
  lockedOut: { level: 'warn', msg: 'audit: locked out' },
  signedOut: { level: 'info', msg: 'audit: signed out' },
  accessRefused: { level: 'warn', msg: 'audit: access refused' },
  fileDownloaded: { level: 'info', msg: 'audit: file downloaded' }
}

/** Writes `app`'s events to its log (events of other apps in the process are theirs); stops when it closes. */
export function auditLog (app: FastifyInstance): void {
  const listeners = Object.entries(AUDITED).map(([name, { level, msg }]) => {
    const listener = (message: unknown) => {
      const { app: from, requestId, ...fields } = message as SectionEvent & Record<string, unknown>
      if (from.server !== app.server) return
      app.log[level]({ audit: name, reqId: requestId, ...fields }, msg)
    }
    subscribe(eventChannels[name as Name], listener)
    return () => unsubscribe(eventChannels[name as Name], listener)
  })
  app.addHook('onClose', async () => { for (const stop of listeners) stop() })
}
