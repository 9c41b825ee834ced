import { createApp } from './app'
import { sweepIdleJobs } from './graph/job-timeout'
import { pruneAudit } from './audit/retention'

export { RateLimiter } from './ratelimit/limiter.do'
export { Analyzer } from './findings/analyzer.do'

const app = createApp()

export default {
  fetch: app.fetch,
  /** Cron triggers (wrangler.toml [triggers]): periodic work off the request path. */
  scheduled(controller, env, ctx) {
    ctx.waitUntil(sweepIdleJobs(env, controller.scheduledTime))
    ctx.waitUntil(pruneAudit(env, controller.scheduledTime))
  },
} satisfies ExportedHandler<Env>
