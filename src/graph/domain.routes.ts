/**
 * PATCH /api/v2/domains/{object_id}: BloodHound's PatchDomain, which sets a domain's `collected` flag
 * (docs/graph.md "A domain's collected flag"). HTTP only; SQL in ./domain.store.ts.
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { auditOf } from '../audit/audit'
import { canSeeEnvironment } from '../auth/permissions'
import { getNodeByObjectId } from './graph.store'
import { setDomainCollected } from './domain.store'

/** BloodHound's DomainPatchRequest: `collected` only (a body without it: 400 "no domain fields sent for patching"). */
const DomainPatchBody = z.object({ collected: z.boolean({ error: 'collected must be a boolean' }).optional() })

export const domainRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'patch',
      path: '/api/v2/domains/:object_id',
      operationId: 'PatchDomain',
      summary: "Set a domain's collected flag",
      description:
        'Sets the `collected` property of the Domain node (`{"collected": true|false}`; answers `{"data": {"collected": …}}`). ' +
        'Post-processing derives DCSync, SyncLAPSPassword, ProtectAdminGroups and HasTrustKeys only for collected domains, ' +
        'from the next analysis run on (this request does not start one). `collected` of `GET /api/v2/available-domains` ' +
        "says whether an ingest job carrying the environment's data has ended, and is not changed. A domain outside the " +
        "caller's environment access is absent (404). BloodHound serves this route with its read permission; EdgeHound " +
        'asks for `graph/Ingest`, since it changes collected data.',
      tags: ['Graph'],
      auth: 'graph/Ingest',
      replay: { repeatable: 'data plane: setting the same flag again changes nothing' },
      audit: {
        action: 'MutateGraph',
        fields: ({ params, body }) => ({ objectid: (params as { object_id: string }).object_id, collected: (body as { collected?: boolean }).collected }),
        environments: ({ params }) => [(params as { object_id: string }).object_id],
      },
      params: z.object({ object_id: z.string().min(1).max(1024) }),
      body: { kind: 'json', schema: DomainPatchBody, maxBytes: 4096 },
      responses: { 200: { description: 'the value set', schema: z.object({ data: z.object({ collected: z.boolean() }) }) } },
    },
    async (c, { params, body }) => {
      if (body.collected === undefined) throw new ApiError(400, 'no domain fields sent for patching', 'collected')
      const node = await getNodeByObjectId(c.env.DB, params.object_id)
      if (!node || !node.kinds.includes('Domain') || !canSeeEnvironment(c.var.principal.environmentAccess, node.environment_id ?? node.objectid))
        throw new ApiError(404, 'node not found', 'object_id')
      const changed = await setDomainCollected(c.env.DB, node.objectid, body.collected, rfc3339(c.var.now()), auditOf(c).write())
      if (!changed) throw new ApiError(404, 'node not found', 'object_id')
      return c.json({ data: { collected: body.collected } })
    },
  ),
]
