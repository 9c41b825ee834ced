/**
 * The reads of ADCS post-processing (src/collectors/adcs.ts): the ADCS objects and domains, the ingested
 * relationships the rules read, the group membership below every principal holding a right on a template
 * or enterprise CA, and the few properties the rules read on those principals. Two read batches, each
 * driven from the ADCS nodes (the `nodes (kind, environment_id)` index) and walking inbound through
 * `edges (end_id, kind, start_id)`: what passes through the isolate is proportional to the ADCS objects and
 * the principals that can enroll, not to the graph.
 *
 * Relationships derived by an earlier run (`derived = 1`) are not read, but MemberOf (DN-resolved members,
 * as DCSync reads them): the run recomputes the rest.
 */
import type { AdcsEdge, AdcsFacts, AdcsNode, Props } from './adcs'

const ADCS_KINDS = `'EnterpriseCA', 'RootCA', 'AIACA', 'NTAuthStore', 'CertTemplate', 'IssuancePolicy', 'Domain'`

/** Rights of principals on templates and enterprise CAs that the rules read. */
const RIGHTS = `'Enroll', 'GenericAll', 'AllExtendedRights', 'Owns', 'OwnsRaw', 'WriteOwner', 'WriteOwnerRaw', 'WriteDacl',
  'GenericWrite', 'WritePKINameFlag', 'WritePKIEnrollmentFlag', 'DelegatedEnrollmentAgent'`

/** Structural relationships into ADCS objects and domains. */
const STRUCTURE = `'PublishedTo', 'HostsCAService', 'RootCAFor', 'NTAuthStoreFor', 'IssuedSignedBy', 'EnterpriseCAFor',
  'TrustedForNTAuth', 'EnrollOnBehalfOf', 'ExtendedByPolicy', 'DCFor', 'SameForestTrust'`

const NODES = `SELECT id, objectid, kinds, properties FROM nodes WHERE kind IN (${ADCS_KINDS})`

const EDGES = `
SELECT e.start_id AS s, e.end_id AS t, e.kind AS k
FROM nodes a JOIN edges e ON e.end_id = a.id
WHERE a.kind IN (${ADCS_KINDS}) AND e.derived = 0
  AND (e.kind IN (${STRUCTURE}) OR (a.kind IN ('CertTemplate', 'EnterpriseCA') AND e.kind IN (${RIGHTS})))
UNION
SELECT e.start_id, e.end_id, e.kind
FROM nodes p JOIN edges e ON e.start_id = p.id AND e.kind = 'OIDGroupLink'
WHERE p.kind = 'IssuancePolicy' AND e.derived = 0`

const MEMBERSHIP = `
WITH RECURSIVE g(id) AS (
  SELECT e.start_id FROM nodes a JOIN edges e ON e.end_id = a.id AND e.kind IN (${RIGHTS})
  WHERE a.kind IN ('CertTemplate', 'EnterpriseCA') AND e.derived = 0
  UNION
  SELECT m.start_id FROM g JOIN edges m ON m.end_id = g.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup'))
SELECT m.start_id AS s, m.end_id AS t, m.kind AS k
FROM g JOIN edges m ON m.end_id = g.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup')`

/** Principal details, by id: kinds and the properties the rules read (types kept: json_type, json_extract). */
const PRINCIPALS = `
SELECT n.id, n.objectid, n.kinds,
  json_type(n.properties, '$.enabled') AS enabled, json_type(n.properties, '$.gmsa') AS gmsa,
  json_type(n.properties, '$.msa') AS msa,
  CASE WHEN json_type(n.properties, '$.certificatemappingmethodsraw') IN ('integer', 'text') THEN json_extract(n.properties, '$.certificatemappingmethodsraw') END AS cmm,
  CASE WHEN json_type(n.properties, '$.strongcertificatebindingenforcementraw') IN ('integer', 'text') THEN json_extract(n.properties, '$.strongcertificatebindingenforcementraw') END AS sbe
FROM json_each(?1) j JOIN nodes n ON n.id = j.value`

interface EdgeRow {
  s: number
  t: number
  k: string
}
interface PrincipalRow {
  id: number
  objectid: string
  kinds: string
  enabled: string | null
  gmsa: string | null
  msa: string | null
  cmm: number | string | null
  sbe: number | string | null
}

/** JSON bytes of ids per statement parameter (D1: 100 KB per statement). */
const CHUNK_IDS = 8_000

function parse<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

export async function loadAdcsFacts(db: D1Database): Promise<AdcsFacts> {
  const [n, e, mem] = await db.batch([db.prepare(NODES), db.prepare(EDGES), db.prepare(MEMBERSHIP)])
  const nodes: AdcsNode[] = (n.results as { id: number; objectid: string; kinds: string; properties: string }[]).map((r) => ({
    id: r.id,
    objectid: r.objectid,
    kinds: parse<string[]>(r.kinds, []),
    props: parse<Props>(r.properties, {}),
  }))
  if (nodes.length === 0) return { nodes, edges: [] }
  const edges: AdcsEdge[] = [...(e.results as EdgeRow[]), ...(mem.results as EdgeRow[])].map((r) => ({ start: r.s, end: r.t, kind: r.k }))

  // every other node the edges name: principals, members, hosting computers, DCs, linked groups
  const known = new Set(nodes.map((x) => x.id))
  const missing = new Set<number>()
  for (const x of edges) {
    if (!known.has(x.start)) missing.add(x.start)
    if (!known.has(x.end)) missing.add(x.end)
  }
  const ids = [...missing]
  if (ids.length > 0) {
    const statements: D1PreparedStatement[] = []
    for (let i = 0; i < ids.length; i += CHUNK_IDS) statements.push(db.prepare(PRINCIPALS).bind(JSON.stringify(ids.slice(i, i + CHUNK_IDS))))
    for (const res of await db.batch(statements)) {
      for (const r of res.results as PrincipalRow[]) {
        const props: Props = {}
        for (const [k, v] of [['enabled', r.enabled], ['gmsa', r.gmsa], ['msa', r.msa]] as const) if (v === 'true' || v === 'false') props[k] = v === 'true'
        if (r.cmm !== null) props.certificatemappingmethodsraw = r.cmm
        if (r.sbe !== null) props.strongcertificatebindingenforcementraw = r.sbe
        nodes.push({ id: r.id, objectid: r.objectid, kinds: parse<string[]>(r.kinds, []), props })
      }
    }
  }
  return { nodes, edges }
}
