import { createApp } from './app'
import { sweepIdleJobs } from './graph/job-timeout'
import { pruneAudit } from './audit/retention'
import { noteLocalWrite } from './graph/environments'
import { sweepSilentClients } from './clients/timeout'
import { runSchedules } from './clients/schedules'

export { RateLimiter } from './ratelimit/limiter.do'
export { Analyzer } from './findings/analyzer.do'

const app = createApp()

export default {
  fetch: app.fetch,
  /** Cron triggers (wrangler.toml [triggers]): periodic work off the request path. */
  scheduled(controller, env, ctx) {
    // the sweep may end jobs: available-domains' copy in this isolate is revalidated (graph/environments.ts)
    noteLocalWrite()
    ctx.waitUntil(sweepIdleJobs(env, controller.scheduledTime).finally(noteLocalWrite))
    ctx.waitUntil(pruneAudit(env, controller.scheduledTime))
    ctx.waitUntil(sweepSilentClients(env, controller.scheduledTime))
    // due collection schedules become ready jobs, once per occurrence even when runs overlap (src/clients/schedules.ts)
    ctx.waitUntil(runSchedules(env, controller.scheduledTime))
  },
} satisfies ExportedHandler<Env>
