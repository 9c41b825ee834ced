/**
 * RateLimit headers in the IETF httpapi draft-11 syntax (Structured Fields):
 *   RateLimit-Policy: "token";q=110;w=2      quota q per window w seconds
 *   RateLimit: "token";r=57;t=1               r remaining, t seconds until the quota is whole again
 * The partition key (token id, IP) is never echoed, as the draft advises.
 */
export interface RateLimitOutcome {
  policy: 'token' | 'session' | 'ip' | 'login' | 'user'
  limit: number
  /** window in seconds: time to refill an empty bucket */
  windowSeconds: number
  remaining: number
  resetSeconds: number
  retryAfterSeconds: number
  allowed: boolean
}

export function rateLimitHeaders(o: RateLimitOutcome): Record<string, string> {
  const h: Record<string, string> = {
    'RateLimit-Policy': `"${o.policy}";q=${o.limit};w=${o.windowSeconds}`,
    RateLimit: `"${o.policy}";r=${o.remaining};t=${o.resetSeconds}`,
  }
  if (!o.allowed) h['Retry-After'] = String(o.retryAfterSeconds)
  return h
}
