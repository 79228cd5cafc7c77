import type { FastifyInstance } from 'fastify'
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { subscribeEvent, type SectionEventName, type SectionEvent, type SignInFailedEvent, type FileDownloadedEvent, type RedirectRefusedEvent } from 'fastify-schools-resources'

// Metrics for Prometheus (METRICS=1, docs/events.md lists them): the section's events counted, and the
// latency of every route labelled by its template, never by URL, so that a crawler adds no series.

/** Registers the counters, the route histogram and `GET /metrics` on `app`. Call before any plugin's routes. */
export function registerMetrics (app: FastifyInstance): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames, registers: [registry] })
  const signIns = counter('schools_resources_sign_ins_total', 'Sign-ins, by outcome', ['outcome'])
  const failures = counter('schools_resources_sign_in_failures_total', 'Refused sign-ins, by reason', ['reason'])
  const counts: Partial<Record<SectionEventName, (event: SectionEvent) => void>> = {
    signInSucceeded: () => signIns.inc({ outcome: 'succeeded' }),
    signInFailed: (event) => {
      signIns.inc({ outcome: 'failed' })
      failures.inc({ reason: (event as SignInFailedEvent).reason })
    },
    lockedOut: inc(counter('schools_resources_lockouts_total', 'Usernames locked by failed sign-ins')),
    signedOut: inc(counter('schools_resources_sign_outs_total', 'Sign-outs')),
    accessRefused: inc(counter('schools_resources_access_refused_total', 'Members refused a page or file (403)')),
    fileDownloaded: ((downloads) => (event: SectionEvent) => downloads.inc({ status: String((event as FileDownloadedEvent).status) }))(
      counter('schools_resources_file_downloads_total', 'Protected files answered, by status (200, 206)', ['status'])),
    storeUnavailable: inc(counter('schools_resources_store_outages_total', 'Session store outages (once each)')),
    // Not the access guard's own refusal, which every anonymous visit raises: only conflicts worth a look.
    redirectRefused: ((refused) => (event: SectionEvent) => { if (!(event as RedirectRefusedEvent).expected) refused.inc() })(
      counter('schools_resources_redirects_refused_total', 'Redirects refused by redirectOnce, beyond the access guard\'s own'))
  }
  const stops = Object.entries(counts).map(([name, count]) =>
    subscribeEvent(name as SectionEventName, (event) => { if (event.app.server === app.server) count(event as SectionEvent) }))

  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer, by route template',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry]
  })
  app.addHook('onResponse', function observeDuration (request, reply, done) {
    // The template Fastify matched (`/schools/resources/resources/*`); a 404 of no route has none.
    const route = request.routeOptions.url ?? '(unmatched)'
    duration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000)
    done()
  })
  // Not for the public: a proxy in front must not pass /metrics on (docs/events.md).
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()))
  app.addHook('onClose', async () => { for (const stop of stops) stop() })
  return registry
}

function inc (metric: Counter): () => void {
  return () => metric.inc()
}
