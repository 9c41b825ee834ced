import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'

/**
 * Sets a Domain node's `collected` property (PATCH /api/v2/domains/{object_id}), with its audit success row in
 * the same batch (written only if the node was changed). The node is matched by its exact object id and kind,
 * as the route found it. Only `properties` and `updated_at` change: nothing available-domains reads
 * (test/unit/available-domains-writers.test.ts).
 */
export async function setDomainCollected(db: D1Database, objectid: string, collected: boolean, now: string, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `UPDATE nodes SET properties = json_set(properties, '$.collected', json(?2)), updated_at = ?3
           WHERE objectid = ?1 AND EXISTS (SELECT 1 FROM json_each(nodes.kinds) WHERE value = 'Domain')`,
        )
        .bind(objectid, collected ? 'true' : 'false', now),
    ],
    audit,
    { ifChanged: 0 },
  )
  return r.meta.changes > 0
}
