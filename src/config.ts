import { z } from 'zod'
import { ApiError } from './http/errors'

/**
 * Configuration, parsed once per env object with zod. Vars have defaults (wrangler.toml [vars]);
 * secrets have none. A missing secret outside tests fails loudly with a 500 envelope that names the
 * setting (never its value). See the README's configuration table.
 */
const intFrom = (def: number, min = 1) =>
  z
    .union([z.string(), z.number()])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def
      const n = Number(v)
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: 'custom', message: `must be an integer >= ${min}` })
        return z.NEVER
      }
      return n
    })

const schema = z.object({
  ENVIRONMENT: z.string().optional().default('production'),
  JWT_SIGNING_KEY: z.string().min(32, 'must be at least 32 characters'),
  TOKEN_ENCRYPTION_KEY: z
    .string()
    .refine((v) => {
      try {
        return atob(v).length === 32
      } catch {
        return false
      }
    }, 'must be the base64 text of 32 random bytes'),
  BOOTSTRAP_ADMIN_PASSWORD: z.string().optional(),
  BOOTSTRAP_ADMIN_USERNAME: z.string().optional().transform((v) => (v && v.trim()) || 'admin'),
  SESSION_TTL_HOURS: intFrom(8),
  AUDIT_RETENTION_DAYS: intFrom(365),
  RATE_LIMIT_PER_SECOND: intFrom(55),
  RATE_LIMIT_BURST: intFrom(110),
  RATE_LIMIT_PER_IP_PER_SECOND: intFrom(10),
  RATE_LIMIT_PER_IP_BURST: intFrom(20),
  /**
   * `on`: cost-aware admission (declared weights, measured time, in-flight caps; src/ratelimit/cost.ts).
   * `off`: every request weighs 1 and nothing else applies (the test suites, which exercise behaviour,
   * not admission, and the bench's query-latency cases).
   */
  RATE_LIMIT_COST: z.enum(['on', 'off'], { error: 'must be on or off' }).optional().default('on'),
  /**
   * `on`: every signed mutation is one-use, including the data-plane routes declared repeatable
   * (src/auth/replay.ts); for deployments whose clients all vary what they sign. Default `off`.
   */
  SIGNED_MUTATIONS_ONCE: z.enum(['on', 'off'], { error: 'must be on or off' }).optional().default('off'),
  /** weighted requests one API token or session may have running at once (src/ratelimit/cost.ts) */
  RATE_LIMIT_IN_FLIGHT_PER_TOKEN: intFrom(4),
  /** weighted requests (weight > 1) one user may have running at once, across all tokens and sessions */
  RATE_LIMIT_IN_FLIGHT_PER_USER: intFrom(8),
  /** milliseconds of a weighted read's time one token pays for; 0: weights only (src/ratelimit/cost.ts) */
  RATE_LIMIT_MS_PER_TOKEN: intFrom(5, 0),
  /** the first milliseconds of a weighted read, paid for by its weight */
  RATE_LIMIT_FREE_MS: intFrom(50, 0),
  /** API tokens one user may hold */
  MAX_API_TOKENS_PER_USER: intFrom(25),
  /** admission by lease (ratelimit/lease.ts): a lease's lifetime in ms; 0 = one limiter call per request */
  LIMITER_LEASE_MS: intFrom(1000, 0),
  /**
   * available-domains' isolate copy answers without its stamp read for this long after a validation (no
   * bookmark sent, no write by this isolate since: src/graph/environments.ts); 0 = the stamp on every request
   */
  AVAILABLE_DOMAINS_FRESH_MS: intFrom(1000, 0),
  /**
   * an idle client's poll (GET /api/v2/jobs/available) is answered from the isolate's memory of its last
   * empty answer for this long (src/clients/poll-cache.ts); 0 = the store on every poll
   */
  CLIENT_POLL_FRESH_MS: intFrom(15_000, 0),
  PUBLIC_BASE_URL: z
    .string()
    .optional()
    .transform((v) => (v ? v.replace(/\/+$/, '') : undefined))
    .refine((v) => v === undefined || /^https?:\/\/[^/]+/.test(v), 'must be an http(s) URL'),
  /** where SAML sign-in sends the browser (BloodHound's /ui); unset: this service's own pages under <base>/ui */
  UI_BASE_URL: z
    .string()
    .optional()
    .transform((v) => (v ? v.replace(/\/+$/, '') : undefined))
    .refine((v) => v === undefined || /^https?:\/\/[^/]+/.test(v), 'must be an http(s) URL'),
  CORS_ALLOWED_ORIGINS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : [])),
})

export type Config = z.infer<typeof schema>

const cache = new WeakMap<object, Config>()

export function loadConfig(env: Env): Config {
  const hit = cache.get(env)
  if (hit) return hit
  const parsed = schema.safeParse(env)
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({
      context: 'configuration',
      message:
        i.code === 'invalid_type' && i.input === undefined
          ? `missing required setting ${String(i.path[0])}`
          : `invalid setting ${String(i.path[0])}: ${i.message}`,
    }))
    throw ApiError.many(500, details)
  }
  cache.set(env, parsed.data)
  return parsed.data
}
