import type { SessionStore } from '@fastify/session'

type Callback = (err?: unknown) => void

/**
 * A session store that answers on a later turn of the event loop and keeps sessions as JSON, like
 * Redis would. The built-in memory store answers synchronously, which hides races in onSend.
 */
export class AsyncStore implements SessionStore {
  readonly sessions = new Map<string, string>()
  sets = 0

  set (sessionId: string, session: unknown, callback: Callback): void {
    setTimeout(() => {
      this.sets++
      this.sessions.set(sessionId, JSON.stringify(session))
      callback()
    }, 1)
  }

  get (sessionId: string, callback: (err: unknown, result?: any) => void): void {
    setImmediate(() => {
      const json = this.sessions.get(sessionId)
      callback(null, json === undefined ? null : JSON.parse(json))
    })
  }

  destroy (sessionId: string, callback: Callback): void {
    setImmediate(() => {
      this.sessions.delete(sessionId)
      callback()
    })
  }
}
