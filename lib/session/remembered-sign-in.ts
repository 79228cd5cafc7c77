// How a remembered device is signed in (remember-me.ts): through the step every sign-in shares, with
// method 'remembered', and what a stolen copy of its token sets off. Apart from remember-me.ts so that
// the sign-in step, which issues tokens, and the tokens do not import each other.
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { Member } from '../types.js'
import { signedOutEverywhere } from '../events.js'
import { REMEMBER_STORE_NOT_SHARED_WARNING, warnHostMistakeOnce } from '../warnings.js'
import { MemoryAttemptStore, type AttemptStore } from '../stores/attempt-store.js'
import { MemoryTokenStore, type TokenStore } from '../stores/token-store.js'
import { sessionCookieWritten, signInSession, type SignInStepDeps } from './sign-in-step.js'
import { forgetStoredMember } from './member.js'
import { STOLEN_TOKEN, type RememberedSignIn, type RememberMe } from './remember-me.js'

/** Signs the member out everywhere: every session (sign out everywhere's generation) and every remembered device. */
export type SignOutEverywhereNow = (memberId: Member['id'], request: FastifyRequest, by?: string) => Promise<void>

/**
 * The section's side of a remembered sign-in, for withRememberMe. `everywhere` is sign out everywhere's,
 * when that is on; without it a stolen copy still forgets every device of the member (the caller did)
 * and says so in the same event, but other sessions run on to their timeouts.
 */
export function rememberedSignIn (step: SignInStepDeps, everywhere: SignOutEverywhereNow | undefined): RememberedSignIn {
  return {
    async signIn (request, reply, member, fresh, checked) {
      // `fresh`: the session a timeout ended this request is replaced, and nothing of it is kept. The session
      // takes the generation and version the token was checked against: a sign out everywhere since then ends it.
      await signInSession(request, reply, member, { method: 'remembered', checked }, fresh ? { ...step, keepSessionData: false } : step, 'findMember')
    },
    canKeepSession: (request) => sessionCookieWritten(request, step.session.of(request), request.server.log, step.baseUrl),
    findNow: step.finder === undefined ? undefined : (request, id) => step.finder!.findNow(request, id),
    generationNow: step.generations === undefined ? undefined : (id) => step.generations!.now(id),
    async everywhere (id, request, by) {
      if (everywhere !== undefined) return everywhere(id, request, by)
      if (signedOutEverywhere.hasSubscribers) {
        signedOutEverywhere.publish({ app: request.server, section: step.section, requestId: request.id, clientAddress: request.ip, memberId: id, requestedBy: STOLEN_TOKEN })
      }
    },
    endSession: (request) => forgetStoredMember(request, step.session)
  }
}

/**
 * findMember's `gone`: a member it no longer finds loses every remembered device. A store error is said
 * in the log and the request goes on as a visitor's: the device, coming back, is checked again.
 */
export function forgetDevicesOf (rememberMe: RememberMe) {
  return async function forgetDevices (id: Member['id'], request: FastifyRequest): Promise<void> {
    try {
      await rememberMe.store.deleteAll(String(id))
    } catch (err) {
      request.log.warn({ code: 'FST_SR_STORE_UNAVAILABLE', err }, 'fastify-schools-resources: the remembered devices of a member no longer found could not be forgotten; answered as a visitor')
    }
  }
}

/**
 * Says once, at start-up, when the sign-in limits share a store between instances (lockout.store is not
 * the in-process default) but the remember tokens stay in this process: a device remembered by one
 * instance is unknown to the others, and forgotten at every restart.
 */
export function warnRememberStoreNotShared (log: FastifyBaseLogger, lockoutStore: AttemptStore, tokens: TokenStore): void {
  if (lockoutStore instanceof MemoryAttemptStore || !(tokens instanceof MemoryTokenStore)) return
  warnHostMistakeOnce(log, REMEMBER_STORE_NOT_SHARED_WARNING, { code: REMEMBER_STORE_NOT_SHARED_WARNING },
    'lockout.store is shared, but rememberMe.store is the in-process default: a device remembered by one instance is unknown to the others, and forgotten at every restart. Give rememberMe.store a shared TokenStore, such as new RedisTokenStore(client) from fastify-schools-resources/redis.')
}
