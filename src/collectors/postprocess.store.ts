/**
 * SQL of post-processing (src/collectors/postprocess.ts): the reads it needs and the one batch that
 * replaces every derived edge. Derived edges carry `derived = 1` (migrations/0013); `INSERT OR IGNORE`
 * keeps an ingested edge of the same (start, kind, end) as it is (it stays ingested, never derived).
 *
 * The set-based statements expand in SQL, so nothing proportional to the graph passes through the
 * isolate: only the replication-right holders (DCSync, SyncLAPSPassword) are computed in JavaScript.
 */

import { azureDerivedStatements } from './azurehound/post.store'

const DERIVED_PROPS = `'{"isacl":false}'`

/** ?1 = now */
const INSERT_PREFIX = `INSERT OR IGNORE INTO edges (start_id, end_id, kind, properties, created_at, updated_at, derived)`

/**
 * Local groups → AdminTo (-544), CanPSRemote (-580), ExecuteDCOM (-562) and, for computers without
 * collected user rights (`hasura` not true), CanRDP (-555) and CanBackup (-551, Backup Operators; with user
 * rights BloodHound also requires BackupPrivilege and RestorePrivilege, not derived here): every direct member (User, Group or Computer)
 * of the computer's local group (the group `LocalToComputer` the computer, found by its object id's RID
 * suffix, as BloodHound's FetchComputerLocalGroupBySIDSuffix) gets the relationship to the computer.
 * Members of a member group reach the computer through MemberOf, as in BloodHound.
 */
const LOCAL_GROUP_RIGHTS = `
${INSERT_PREFIX}
SELECT m.start_id, lc.end_id, r.kind, ${DERIVED_PROPS}, ?1, ?1, 1
FROM nodes g
JOIN (SELECT '-544' AS suffix, 'AdminTo' AS kind UNION ALL SELECT '-580', 'CanPSRemote'
      UNION ALL SELECT '-562', 'ExecuteDCOM' UNION ALL SELECT '-555', 'CanRDP' UNION ALL SELECT '-551', 'CanBackup') AS r
  ON substr(g.objectid, -4) = r.suffix
JOIN edges lc ON lc.start_id = g.id AND lc.kind = 'LocalToComputer'
JOIN nodes c ON c.id = lc.end_id
JOIN edges m ON m.end_id = lc.start_id AND m.kind = 'MemberOfLocalGroup'
JOIN nodes s ON s.id = m.start_id
WHERE g.kind = 'ADLocalGroup'
  AND EXISTS (SELECT 1 FROM json_each(c.kinds) WHERE value = 'Computer')
  AND EXISTS (SELECT 1 FROM json_each(s.kinds) WHERE value IN ('User', 'Group', 'Computer'))
  AND (r.kind NOT IN ('CanRDP', 'CanBackup') OR json_extract(c.properties, '$.hasura') IS NOT 1)`

/**
 * CanRDP where user rights were collected (`hasura` true), BloodHound's ProcessRDPWithUra:
 *  1. the Remote Desktop Users group itself holds RemoteInteractiveLogonRight on the computer: its direct
 *     User and Group members get CanRDP;
 *  2. otherwise, each holder of RemoteInteractiveLogonRight that is (directly or through groups) a member
 *     of the Remote Desktop Users group gets CanRDP.
 *  3. (RDP_WITH_URA_GROUP_MEMBERS) members, through MemberOf, of a group holding RemoteInteractiveLogonRight
 *     on the computer who are also (directly or through groups) members of the Remote Desktop Users group:
 *     the right reaches them through the group, the RDP membership through another way.
 */
const RDP_WITH_URA_SHORTCUT = `
${INSERT_PREFIX}
SELECT m.start_id, lc.end_id, 'CanRDP', ${DERIVED_PROPS}, ?1, ?1, 1
FROM nodes g
JOIN edges lc ON lc.start_id = g.id AND lc.kind = 'LocalToComputer'
JOIN nodes c ON c.id = lc.end_id
JOIN edges ril ON ril.start_id = lc.start_id AND ril.kind = 'RemoteInteractiveLogonRight' AND ril.end_id = lc.end_id
JOIN edges m ON m.end_id = lc.start_id AND m.kind = 'MemberOfLocalGroup'
JOIN nodes s ON s.id = m.start_id
WHERE g.kind = 'ADLocalGroup' AND substr(g.objectid, -4) = '-555'
  AND json_extract(c.properties, '$.hasura') IS 1
  AND EXISTS (SELECT 1 FROM json_each(s.kinds) WHERE value IN ('User', 'Group'))`

const RDP_WITH_URA_HOLDERS = `
WITH RECURSIVE
  target(computer, rdp) AS (
    SELECT lc.end_id, lc.start_id FROM nodes g JOIN edges lc ON lc.start_id = g.id AND lc.kind = 'LocalToComputer' JOIN nodes c ON c.id = lc.end_id
    WHERE g.kind = 'ADLocalGroup' AND substr(g.objectid, -4) = '-555' AND json_extract(c.properties, '$.hasura') IS 1
      AND NOT EXISTS (SELECT 1 FROM edges x WHERE x.start_id = lc.start_id AND x.kind = 'RemoteInteractiveLogonRight' AND x.end_id = lc.end_id)),
  up(computer, rdp, holder, node) AS (
    SELECT t.computer, t.rdp, r.start_id, r.start_id
    FROM target t JOIN edges r ON r.end_id = t.computer AND r.kind = 'RemoteInteractiveLogonRight'
    UNION
    SELECT u.computer, u.rdp, u.holder, e.end_id
    FROM up u JOIN edges e ON e.start_id = u.node AND e.kind IN ('MemberOf', 'MemberOfLocalGroup'))
${INSERT_PREFIX}
SELECT DISTINCT holder, computer, 'CanRDP', ${DERIVED_PROPS}, ?1, ?1, 1 FROM up WHERE node = rdp AND holder <> rdp`

/**
 * Step 3 of CanRDP with user rights (see above): for each computer whose RDP group does not itself hold the
 * right, the members (local group membership, then MemberOf, transitively: BloodHound's local group
 * expansion) of every right-holding Group or local group that is not itself an RDP member (`down`; one that
 * is got CanRDP in step 2 and its members reach the computer through it), kept when they reach the RDP
 * group upwards through MemberOf / MemberOfLocalGroup (`up`).
 */
const RDP_WITH_URA_GROUP_MEMBERS = `
WITH RECURSIVE
  target(computer, rdp) AS (
    SELECT lc.end_id, lc.start_id FROM nodes g JOIN edges lc ON lc.start_id = g.id AND lc.kind = 'LocalToComputer' JOIN nodes c ON c.id = lc.end_id
    WHERE g.kind = 'ADLocalGroup' AND substr(g.objectid, -4) = '-555' AND json_extract(c.properties, '$.hasura') IS 1
      AND NOT EXISTS (SELECT 1 FROM edges x WHERE x.start_id = lc.start_id AND x.kind = 'RemoteInteractiveLogonRight' AND x.end_id = lc.end_id)),
  holder(computer, rdp, id) AS (
    SELECT t.computer, t.rdp, r.start_id
    FROM target t JOIN edges r ON r.end_id = t.computer AND r.kind = 'RemoteInteractiveLogonRight'
    JOIN nodes h ON h.id = r.start_id AND h.kind IN ('Group', 'ADLocalGroup')),
  hup(computer, rdp, id, node) AS (
    SELECT computer, rdp, id, id FROM holder
    UNION
    SELECT u.computer, u.rdp, u.id, e.end_id FROM hup u JOIN edges e ON e.start_id = u.node AND e.kind IN ('MemberOf', 'MemberOfLocalGroup')),
  down(computer, rdp, node) AS (
    SELECT h.computer, h.rdp, m.start_id
    FROM holder h JOIN edges m ON m.end_id = h.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup')
    WHERE NOT EXISTS (SELECT 1 FROM hup u WHERE u.computer = h.computer AND u.id = h.id AND u.node = h.rdp)
    UNION
    SELECT d.computer, d.rdp, m.start_id FROM down d JOIN edges m ON m.end_id = d.node AND m.kind = 'MemberOf'),
  up(computer, rdp, member, node) AS (
    SELECT computer, rdp, node, node FROM down
    UNION
    SELECT u.computer, u.rdp, u.member, e.end_id
    FROM up u JOIN edges e ON e.start_id = u.node AND e.kind IN ('MemberOf', 'MemberOfLocalGroup'))
${INSERT_PREFIX}
SELECT DISTINCT u.member, u.computer, 'CanRDP', ${DERIVED_PROPS}, ?1, ?1, 1
FROM up u JOIN nodes s ON s.id = u.member
WHERE u.node = u.rdp AND u.member <> u.rdp
  AND EXISTS (SELECT 1 FROM json_each(s.kinds) WHERE value IN ('User', 'Group', 'Computer'))`

/**
 * Group members SharpHound could not resolve to an object id are written as `DN=<distinguished name>`
 * (BloodHound's ParseGroupMembershipData sets them apart and ingests them against the node with that
 * `distinguishedname`, its ingestDNRelationship). They are ingested as a placeholder whose object id is the
 * `DN=` string, holding the MemberOf; here every node whose `distinguishedname` (compared upper-cased, as
 * BloodHound upper-cases both) is that DN gets the same MemberOf to the same group. The placeholders are
 * found through the object id index (the range of ids starting with `DN=`), so nothing is read when there
 * are none. This runs first in the batch so that the local-group and CanRDP statements below see the
 * memberships (DCSync / SyncLAPSPassword, computed before the batch, see them from the next run on).
 */
const DN_MEMBERS = `
WITH dnm(pid, dn) AS (
  SELECT id, upper(substr(objectid, 4)) FROM nodes WHERE objectid >= 'DN=' AND objectid < 'DN>')
${INSERT_PREFIX}
SELECT n.id, e.end_id, 'MemberOf', '{"isacl":false,"isprimarygroup":false}', ?1, ?1, 1
FROM dnm
JOIN edges e ON e.start_id = dnm.pid AND e.kind = 'MemberOf'
JOIN nodes n ON upper(json_extract(n.properties, '$.distinguishedname')) = dnm.dn AND n.id <> dnm.pid`

/**
 * OwnsRaw / WriteOwnerRaw → Owns / WriteOwner (each read through its partial index, migrations/0013), except where the owner's implicit rights are blocked:
 * the object is a computer, its domain enforces BlockOwnerImplicitRights (dSHeuristics, 29th character
 * "1") and the owner is not a direct member of Domain Admins (-512) or Enterprise Admins (-519).
 * The raw edge's properties are kept.
 */
function ownsFrom(raw: string, kind: string): string {
  return `
SELECT e.start_id, e.end_id, '${kind}', e.properties, ?1, ?1, 1
FROM edges e
JOIN nodes t ON t.id = e.end_id
WHERE e.kind = '${raw}'
  AND NOT (
    EXISTS (SELECT 1 FROM json_each(t.kinds) WHERE value = 'Computer')
    AND (SELECT substr(json_extract(d.properties, '$.dsheuristics'), 29, 1) FROM nodes d WHERE d.objectid = t.environment_id) = '1'
    AND NOT EXISTS (SELECT 1 FROM edges mo JOIN nodes a ON a.id = mo.end_id
                    WHERE mo.start_id = e.start_id AND mo.kind = 'MemberOf'
                      AND (a.objectid LIKE '%-512' OR a.objectid LIKE '%-519')))`
}
const OWNS = `${INSERT_PREFIX} ${ownsFrom('OwnsRaw', 'Owns')} UNION ALL ${ownsFrom('WriteOwnerRaw', 'WriteOwner')}`

/** A CA node's `certthumbprint` (text), for the ADCS certificate relationships below. */
const THUMB = (n: string) => `json_extract(${n}.properties, '$.certthumbprint')`

/**
 * ADCS certificate relationships (BloodHound's PostEnterpriseCAFor, PostIssuedSignedBy,
 * PostTrustedForNTAuth), from the certificate data SharpHound collects on the CA nodes:
 *   EnterpriseCAFor   enterprise CA → root CA with the same `certthumbprint` (the same certificate)
 *   IssuedSignedBy    enterprise or root CA → the enterprise or root CA whose `certthumbprint` is the second
 *                     entry of its `certchain` (its issuer); a self-signed root (chain of one) has none
 *   TrustedForNTAuth  enterprise CA → NTAuth store whose `certthumbprints` list holds its `certthumbprint`
 * CA nodes are few; each is found through the nodes' (kind, environment) index.
 */
const ENTERPRISE_CA_FOR = `
${INSERT_PREFIX}
SELECT e.id, r.id, 'EnterpriseCAFor', ${DERIVED_PROPS}, ?1, ?1, 1
FROM nodes e JOIN nodes r ON r.kind = 'RootCA' AND ${THUMB('r')} = ${THUMB('e')}
WHERE e.kind = 'EnterpriseCA' AND ${THUMB('e')} <> ''`

const ISSUED_SIGNED_BY = `
${INSERT_PREFIX}
SELECT x.id, y.id, 'IssuedSignedBy', ${DERIVED_PROPS}, ?1, ?1, 1
FROM nodes x JOIN nodes y ON y.kind IN ('EnterpriseCA', 'RootCA') AND y.id <> x.id
  AND ${THUMB('y')} = json_extract(x.properties, '$.certchain[1]')
WHERE x.kind IN ('EnterpriseCA', 'RootCA') AND json_type(x.properties, '$.certchain[1]') = 'text'`

const TRUSTED_FOR_NTAUTH = `
${INSERT_PREFIX}
SELECT e.id, n.id, 'TrustedForNTAuth', ${DERIVED_PROPS}, ?1, ?1, 1
FROM nodes n JOIN json_each(CASE WHEN json_type(n.properties, '$.certthumbprints') = 'array' THEN json_extract(n.properties, '$.certthumbprints') ELSE '[]' END) t
JOIN nodes e ON e.kind = 'EnterpriseCA' AND ${THUMB('e')} = t.value
WHERE n.kind = 'NTAuthStore' AND t.value <> ''`

/** One row of the replication-right membership: `id` holds `right` on `domain`, itself or through `parent`. */
export interface ReplicationRow {
  domain: number
  domainsid: string | null
  right: 'GetChanges' | 'GetChangesAll' | 'GetChangesInFilteredSet'
  id: number
  /** the group through which `id` holds the right (null: directly) */
  parent: number | null
}

/**
 * Holders of GetChanges / GetChangesAll / GetChangesInFilteredSet on every collected domain
 * (`collected: true`, as BloodHound's fetchCollectedDomainNodes), expanded to the members of holder
 * groups through MemberOf (transitively), with the group each member came through.
 */
export async function loadReplicationMembership(db: D1Database): Promise<ReplicationRow[]> {
  const r = await db
    .prepare(
      `WITH RECURSIVE
         dom(id, sid) AS (
           SELECT id, json_extract(properties, '$.domainsid') FROM nodes
           WHERE kind = 'Domain' AND json_extract(properties, '$.collected') IS 1),
         member(domain, sid, rightk, id, parent) AS (
           SELECT d.id, d.sid, e.kind, e.start_id, NULL
           FROM dom d JOIN edges e ON e.end_id = d.id AND e.kind IN ('GetChanges', 'GetChangesAll', 'GetChangesInFilteredSet')
           UNION
           SELECT m.domain, m.sid, m.rightk, e.start_id, m.id
           FROM member m JOIN edges e ON e.end_id = m.id AND e.kind = 'MemberOf')
       SELECT domain, sid AS domainsid, rightk AS "right", id, parent FROM member`,
    )
    .all<ReplicationRow>()
  return r.results
}

/** JSON bytes per statement parameter (D1: 100 KB per statement, SQL included). */
const CHUNK = 80_000

function pairsStatements(db: D1Database, kind: string, pairs: [number, number][], now: string): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = []
  let chunk: string[] = []
  let bytes = 2
  const flush = () => {
    if (chunk.length === 0) return
    out.push(
      db
        .prepare(`${INSERT_PREFIX} SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?2, ${DERIVED_PROPS}, ?1, ?1, 1 FROM json_each(?3)`)
        .bind(now, kind, `[${chunk.join(',')}]`),
    )
    chunk = []
    bytes = 2
  }
  for (const [s, t] of pairs) {
    const j = `[${s},${t}]`
    if (bytes + j.length + 1 > CHUNK) flush()
    chunk.push(j)
    bytes += j.length + 1
  }
  flush()
  return out
}

export interface DerivedInput {
  now: string
  /** DCSync: holder → domain node ids */
  dcsync: [number, number][]
  /** SyncLAPSPassword: holders (node ids) per domain SID; the computers are found in SQL */
  lapsSyncers: { domainsid: string; holders: number[] }[]
}

/**
 * Replaces every derived edge in ONE batch (one transaction): readers see the old set or the new one.
 * Returns the number of derived edges now stored.
 */
export async function replaceDerivedEdges(db: D1Database, d: DerivedInput): Promise<number> {
  const laps = d.lapsSyncers.flatMap((l) => {
    const statements: D1PreparedStatement[] = []
    for (let i = 0; i < l.holders.length; i += 5_000)
      statements.push(
        db
          .prepare(
            `${INSERT_PREFIX}
             SELECT h.value, c.id, 'SyncLAPSPassword', ${DERIVED_PROPS}, ?1, ?1, 1
             FROM json_each(?2) h JOIN nodes c ON c.kind = 'Computer' AND c.environment_id = ?3
             WHERE json_extract(c.properties, '$.haslaps') IS 1`,
          )
          .bind(d.now, JSON.stringify(l.holders.slice(i, i + 5_000)), l.domainsid),
      )
    return statements
  })
  const results = await db.batch([
    db.prepare(`DELETE FROM edges WHERE derived = 1`),
    db.prepare(DN_MEMBERS).bind(d.now),
    db.prepare(OWNS).bind(d.now),
    db.prepare(LOCAL_GROUP_RIGHTS).bind(d.now),
    db.prepare(RDP_WITH_URA_SHORTCUT).bind(d.now),
    db.prepare(RDP_WITH_URA_HOLDERS).bind(d.now),
    db.prepare(RDP_WITH_URA_GROUP_MEMBERS).bind(d.now),
    db.prepare(ENTERPRISE_CA_FOR).bind(d.now),
    db.prepare(ISSUED_SIGNED_BY).bind(d.now),
    db.prepare(TRUSTED_FOR_NTAUTH).bind(d.now),
    ...pairsStatements(db, 'DCSync', d.dcsync, d.now),
    ...laps,
    ...azureDerivedStatements(db, d.now),
    db.prepare(`SELECT count(*) AS n FROM edges WHERE derived = 1`),
  ])
  return (results[results.length - 1].results[0] as { n: number }).n
}
