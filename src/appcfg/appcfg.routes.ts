/**
 * BloodHound's application configuration routes (docs/configuration.md): capability tags (`dog-tags`),
 * feature flags (`features`) and configuration parameters (`config`). HTTP only: the definitions and rules are
 * in ./dogtags.ts, ./flags.ts and ./parameters.ts, the SQL in ./appcfg.store.ts.
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { auditOf } from '../audit/audit'
import { DOG_TAGS } from './dogtags'
import { FLAGS, flagById } from './flags'
import { defaultValue, isParameterKey, PARAMETER_KEYS, parameterJson, SESSION_TTL_HOURS, validateUpdate, type ParameterKey } from './parameters'
import { flagStates, setParameter, storedParameters, toggleFlag } from './appcfg.store'

const FlagSchema = z
  .object({
    id: z.number().int(),
    key: z.string(),
    name: z.string(),
    description: z.string(),
    enabled: z.boolean(),
    user_updatable: z.boolean().describe('false: the feature is fixed in EdgeHound, and a toggle is refused (403)'),
  })
  .meta({ id: 'FeatureFlag' })

const ParameterSchema = z
  .object({ key: z.string(), name: z.string(), description: z.string(), value: z.record(z.string(), z.unknown()) })
  .meta({ id: 'ConfigurationParameter' })

/** BloodHound's `parameter=eq:<key>` filter of GET /api/v2/config (a bare key is read as eq:). */
function parameterFilter(raw: string | undefined): ParameterKey | null {
  if (raw === undefined) return null
  const m = /^([a-z]+):(.*)$/.exec(raw)
  const [op, key] = m ? [m[1], m[2]] : ['eq', raw]
  if (op !== 'eq') throw new ApiError(400, `the specified filter predicate is not supported for this column: parameter ${op.slice(0, 20)}`, 'query.parameter')
  if (!isParameterKey(key)) throw new ApiError(400, `Configuration parameter ${key.slice(0, 100)} is not valid.`, 'query.parameter')
  return key
}

/** The feature id of the path: BloodHound parses it as a 32-bit integer (else 400 "id is malformed"). */
const FeatureId = z
  .string()
  .regex(/^\d{1,10}$/, 'id is malformed')
  .transform(Number)
  .refine((n) => n <= 2_147_483_647, 'id is malformed')

const DogTagsResponse = z
  .object({
    data: z.object({
      'auth.environment_targeted_access_control': z.boolean(),
      'privilege_zones.label_limit': z.number().int(),
      'privilege_zones.multi_tier_analysis': z.boolean(),
      'privilege_zones.tier_limit': z.number().int(),
    }),
  })
  .meta({ id: 'DogTags' })

export const appConfigRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/dog-tags',
      operationId: 'GetDogTags',
      summary: "This service's capabilities under BloodHound's capability-tag keys",
      description:
        'A flat map, as BloodHound answers it: `auth.environment_targeted_access_control` (true: users are given every ' +
        'environment or a list of them), `privilege_zones.tier_limit` (1: Tier Zero is the one zone), ' +
        '`privilege_zones.multi_tier_analysis` (false), `privilege_zones.label_limit` (2147483647: labels are not limited). ' +
        'Fixed by the code, not configurable.',
      tags: ['Configuration'],
      auth: 'authenticated',
      responses: { 200: { description: 'the capability tags', schema: DogTagsResponse } },
    },
    (c) => c.json({ data: DOG_TAGS }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/features',
      operationId: 'GetFeatureFlags',
      summary: 'Feature flags (BloodHound\'s shape): the one an administrator may toggle, and the features EdgeHound always has',
      description:
        '`ntlm_post_processing` (id 1) is user-updatable: it decides whether analysis derives the NTLM relay relationships. ' +
        'The others report features fixed in EdgeHound (`user_updatable: false`). Ids never change.',
      tags: ['Configuration'],
      auth: 'app/ReadAppConfig',
      responses: { 200: { description: 'every flag, by id', schema: z.object({ data: z.array(FlagSchema) }) } },
    },
    async (c) => {
      const states = await flagStates(c.env.DB)
      return c.json({ data: FLAGS.map((f) => ({ ...f, enabled: states.get(f.key) ?? f.enabled })) })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/features/:feature_id/toggle',
      operationId: 'ToggleFeatureFlag',
      summary: 'Toggle a user-updatable feature flag',
      description:
        'Flips the flag and answers its new state `{"data": {"enabled": …}}`. A flag that is not user-updatable: 403 ' +
        '`Feature flag <key>(<id>) is not user updatable.`; an unknown id: 404; an id that is not a number: 400 `id is malformed`. ' +
        'A flag read by analysis takes effect at the next analysis run.',
      tags: ['Configuration'],
      auth: 'app/WriteAppConfig',
      replay: { once: 'a toggle flips the state: a copy would flip it back' },
      audit: { action: 'ToggleEarlyAccessFeatureFlag', fields: ({ params }) => ({ feature_id: (params as { feature_id: number }).feature_id }) },
      params: z.object({ feature_id: FeatureId }),
      responses: { 200: { description: 'the new state', schema: z.object({ data: z.object({ enabled: z.boolean() }) }) } },
    },
    async (c, { params }) => {
      const flag = flagById(params.feature_id)
      if (!flag) throw new ApiError(404, 'resource not found', 'path.feature_id')
      if (!flag.user_updatable) throw new ApiError(403, `Feature flag ${flag.key}(${flag.id}) is not user updatable.`, 'path.feature_id')
      const audit = auditOf(c)
      // `flag`, not `key`: the audit log drops fields named like secrets (src/audit/fields.ts)
      audit.addFields({ flag: flag.key, name: flag.name })
      const enabled = await toggleFlag(c.env.DB, flag, c.var.principal.userId, rfc3339(c.var.now()), audit.write())
      return c.json({ data: { enabled } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/config',
      operationId: 'GetApplicationConfigurations',
      summary: 'Configuration parameters (BloodHound\'s shape): the ones EdgeHound honours, with their current values',
      description:
        '`auth.password_expiration_window` and `analysis.citrix_rdp_support` are set with `PUT`; `auth.session_ttl_hours` ' +
        'reports the `SESSION_TTL_HOURS` Worker variable (read-only). `parameter=eq:<key>` answers that one parameter ' +
        '(another operator, or a key EdgeHound does not have: 400).',
      tags: ['Configuration'],
      auth: 'app/ReadAppConfig',
      query: z.object({ parameter: z.string().max(200).optional() }),
      responses: { 200: { description: 'the parameters', schema: z.object({ data: z.array(ParameterSchema) }) } },
    },
    async (c, { query }) => {
      const only = parameterFilter(query.parameter)
      const stored = await storedParameters(c.env.DB)
      const ttl = c.var.config.SESSION_TTL_HOURS
      const keys = only ? [only] : PARAMETER_KEYS
      return c.json({
        data: keys.map((k) => parameterJson(k, k === SESSION_TTL_HOURS ? defaultValue(k, ttl) : (stored.get(k) ?? defaultValue(k, ttl)))),
      })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/config',
      operationId: 'SetApplicationConfiguration',
      summary: 'Set a configuration parameter',
      description:
        'Body `{"key": "<parameter key>", "value": {…}}`, answered back as sent (200), as BloodHound does. ' +
        '`auth.password_expiration_window` `{"duration": "P90D"}` (an ISO 8601 duration from one hour to 100 years; applies to ' +
        'passwords set from then on); `analysis.citrix_rdp_support` `{"enabled": true|false}` (from the next analysis run). ' +
        'An unknown or read-only key: 400 `Configuration parameter <key> is not valid.`; a value without exactly the ' +
        "parameter's fields, of their types: 400.",
      tags: ['Configuration'],
      auth: 'app/WriteAppConfig',
      replay: { once: 'changes how passwords expire and what analysis derives' },
      // `parameter`, not `key`: the audit log drops fields named like secrets (src/audit/fields.ts)
      audit: { action: 'UpdateParameter', fields: ({ body }) => ({ parameter: String((body as { key?: unknown }).key ?? '').slice(0, 100) }) },
      body: {
        kind: 'json',
        schema: z.object({ key: z.string({ error: 'key must be a string' }).max(200), value: z.unknown().optional() }),
        maxBytes: 4096,
      },
      responses: { 200: { description: 'the request, as stored', schema: z.object({ data: z.object({ key: z.string(), value: z.record(z.string(), z.unknown()) }) }) } },
    },
    async (c, { body }) => {
      const p = validateUpdate(body)
      await setParameter(c.env.DB, p.key, p.value, c.var.principal.userId, rfc3339(c.var.now()), auditOf(c).write({ value: p.value }))
      return c.json({ data: { key: p.key, value: p.value } })
    },
  ),
]
