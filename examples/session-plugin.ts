// The example's session plugin, by its SESSION_PLUGIN setting: @fastify/session (sessions in a store, the
// default) or @fastify/secure-session (the session is an encrypted cookie; no store). The section finds
// whichever is registered (docs/session-wiring.md).
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fastifySession, { type SessionStore } from '@fastify/session'

export type SessionPluginSetting = 'session' | 'secure-session'

export interface SessionPluginConfig {
  secret: string
  /** Where @fastify/session keeps sessions (its memory store when undefined); secure-session keeps none. */
  store: SessionStore | undefined
  /** An https site: the cookie is always Secure. Otherwise Secure over https only, so the demo works on localhost. */
  https: boolean
  /** How long a session lasts from sign-in, in milliseconds. */
  maxAge: number
}

export async function registerSessionPlugin (app: FastifyInstance, plugin: SessionPluginSetting, config: SessionPluginConfig): Promise<void> {
  const cookie = { secure: config.https ? true : 'auto', httpOnly: true, sameSite: 'lax', path: '/' } as const
  if (plugin === 'secure-session') {
    // Loaded only when chosen: it brings sodium-native (a native addon), which a server on
    // @fastify/session would carry for nothing.
    const { default: fastifySecureSession } = await import('@fastify/secure-session')
    await app.register(fastifySecureSession, {
      // 32 bytes derived from the session secret, so every instance decrypts every other's cookies.
      key: createHash('sha256').update(`secure-session:${config.secret}`).digest(),
      // The cookie is the session, so a copy of it stays valid until this expiry even after sign-out: keep
      // it short. `expiry` is checked inside the cookie, so a browser that keeps the cookie longer gains nothing.
      expiry: Math.ceil(config.maxAge / 1000),
      cookie: { ...cookie, maxAge: Math.ceil(config.maxAge / 1000) }
    })
    return
  }
  await app.register(fastifySession, {
    secret: config.secret,
    // In Redis each session lives as long as its cookie (maxAge), then expires there too.
    store: config.store,
    // Anonymous visitors get no session until something is stored in it.
    saveUninitialized: false,
    // The cookie and the stored session are written at sign-in only, not again on every page: a
    // session lasts maxAge from sign-in (a school day), and a page view costs no store write.
    rolling: false,
    // An https site: @fastify/session then writes no cookie to a request it sees as plain http, so
    // behind a TLS proxy set trustProxy.
    cookie: { ...cookie, maxAge: config.maxAge }
  })
}
