/**
 * SQL of the edge reads (`GET /api/v2/graphs/edge-composition`, `/relay-targets`, `/acl-inheritance`): one
 * relationship by its ends and kind, the kinds of a set of nodes, the relay targets of an NTLM relay
 * relationship, and the containers above an object. Environment access is applied as everywhere in the graph
 * store (`?access` NULL = every environment, else a JSON array of environment ids; `visible`).
 */
import { NODE_COLUMNS, visible } from './graph.store'
import type { EdgeRecord } from './graph.store'
import { toNodeRecord, type NodeRecord, type NodeRow } from './present'

/** The relationship start -kind-> end with its id and properties, or null. */
export async function getEdge(db: D1Database, start: number, end: number, kind: string): Promise<EdgeRecord | null> {
  const row = await db
    .prepare(`SELECT id, start_id AS "from", end_id AS "to", kind, properties, updated_at FROM edges WHERE start_id = ?1 AND kind = ?2 AND end_id = ?3`)
    .bind(start, kind, end)
    .first<{ id: number; from: number; to: number; kind: string; properties: string; updated_at: string }>()
  return row ? { ...row, properties: JSON.parse(row.properties) as Record<string, unknown> } : null
}

/** Of the given node ids, those having `kind` among their kinds. */
export async function idsWithKind(db: D1Database, ids: number[], kind: string): Promise<Set<number>> {
  if (ids.length === 0) return new Set()
  const out = new Set<number>()
  for (let i = 0; i < ids.length; i += 8_000) {
    const { results } = await db
      .prepare(`SELECT n.id FROM json_each(?1) j JOIN nodes n ON n.id = j.value WHERE instr(n.kinds, ?2) > 0`)
      .bind(JSON.stringify(ids.slice(i, i + 8_000)), JSON.stringify(kind))
      .all<{ id: number }>()
    for (const r of results) out.add(r.id)
  }
  return out
}

/**
 * The relay targets of an NTLM relay relationship into computer `target` (the rules of
 * src/collectors/ntlm.store.ts, read the same way), visible ones only, by name:
 * - SMB: the target computer itself (its SMB signing is off: relayed authentication lands on it);
 * - LDAP / LDAPS: the domain controllers of the target's domain, other than the target, whose LDAP
 *   (signing off, LDAP available) or LDAPS (LDAPS available, channel binding off) accepts relayed NTLM;
 * - ADCS: the enterprise CAs with a web enrollment endpoint open to relay (`hasvulnerableendpoint`) that
 *   chain (IssuedSignedBy / EnterpriseCAFor, then RootCAFor) to the target's domain.
 */
export async function relayTargets(db: D1Database, kind: string, target: NodeRecord, access: string | null, max: number): Promise<NodeRecord[]> {
  const sid = typeof target.properties.domainsid === 'string' ? target.properties.domainsid : null
  const order = `ORDER BY n.name COLLATE NOCASE, n.objectid LIMIT ${Math.trunc(max) + 1}`
  let sql: string
  switch (kind) {
    case 'CoerceAndRelayNTLMToSMB':
      sql = `SELECT ${NODE_COLUMNS} FROM nodes n WHERE n.id = ?1 AND ${visible('n.environment_id', '?3')}`
      break
    case 'CoerceAndRelayNTLMToLDAP':
    case 'CoerceAndRelayNTLMToLDAPS': {
      const test =
        kind === 'CoerceAndRelayNTLMToLDAP'
          ? `json_type(n.properties, '$.ldapsigning') = 'false' AND json_type(n.properties, '$.ldapavailable') = 'true'`
          : `json_type(n.properties, '$.ldapsavailable') = 'true' AND json_type(n.properties, '$.ldapsepa') = 'false'`
      sql = `SELECT ${NODE_COLUMNS} FROM nodes n
             WHERE n.kind = 'Computer' AND n.id <> ?1 AND json_extract(n.properties, '$.domainsid') = ?2
               AND json_type(n.properties, '$.isdc') = 'true' AND ${test} AND ${visible('n.environment_id', '?3')} ${order}`
      break
    }
    case 'CoerceAndRelayNTLMToADCS':
      sql = `WITH RECURSIVE up(ca, id, depth) AS (
               SELECT id, id, 0 FROM nodes WHERE kind = 'EnterpriseCA' AND json_type(properties, '$.hasvulnerableendpoint') = 'true'
               UNION
               SELECT up.ca, e.end_id, up.depth + 1 FROM up JOIN edges e ON e.start_id = up.id
                 AND e.kind IN ('IssuedSignedBy', 'EnterpriseCAFor', 'RootCAFor') WHERE up.depth < 16)
             SELECT ${NODE_COLUMNS} FROM nodes n
             WHERE n.id IN (SELECT up.ca FROM up JOIN nodes d ON d.id = up.id WHERE d.kind = 'Domain' AND d.objectid = ?2)
               AND ${visible('n.environment_id', '?3')} ${order}`
      break
    default:
      return []
  }
  const { results } = await db.prepare(sql).bind(target.id, sid, access).all<NodeRow>()
  return results.map(toNodeRecord)
}

/**
 * The containers above `target` (inbound Contains, nearest first), as [container, child] steps, up to the
 * first whose `inheritancehashes` holds `hash`, at most `maxDepth` steps; visible containers only. Empty when
 * none holds it.
 */
export async function inheritanceChain(
  db: D1Database,
  target: number,
  hash: string,
  access: string | null,
  maxDepth: number,
): Promise<{ container: number; child: number }[]> {
  const { results } = await db
    .prepare(
      `WITH RECURSIVE up(child, container, depth) AS (
         SELECT e.end_id, e.start_id, 1 FROM edges e WHERE e.end_id = ?1 AND e.kind = 'Contains'
         UNION
         SELECT e.end_id, e.start_id, up.depth + 1 FROM up JOIN edges e ON e.end_id = up.container AND e.kind = 'Contains' WHERE up.depth < ?4)
       SELECT up.child, up.container, up.depth,
              EXISTS (SELECT 1 FROM json_each(CASE WHEN json_type(n.properties, '$.inheritancehashes') = 'array' THEN json_extract(n.properties, '$.inheritancehashes') ELSE '[]' END) h
                      WHERE h.value = ?2) AS holds
       FROM up JOIN nodes n ON n.id = up.container WHERE ${visible('n.environment_id', '?3')}
       ORDER BY up.depth`,
    )
    .bind(target, hash, access, maxDepth)
    .all<{ child: number; container: number; depth: number; holds: number }>()
  // one container per level (an object has one parent); stop at the first that holds the hash
  const steps: { container: number; child: number }[] = []
  let at = target
  for (const r of results) {
    if (r.child !== at) continue
    steps.push({ container: r.container, child: r.child })
    if (r.holds === 1) return steps
    at = r.container
  }
  return []
}
