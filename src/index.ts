import { createApp } from './app'

export { RateLimiter } from './ratelimit/limiter.do'
export { Analyzer } from './findings/analyzer.do'

const app = createApp()

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>
