/**
 * SQL of post-processing (src/collectors/postprocess.ts): the reads it needs and the one batch that
 * replaces every derived edge. Derived edges carry `derived = 1` (migrations/0013); `ON CONFLICT (start_id,
 * kind, end_id) DO NOTHING` keeps an ingested edge of the same (start, kind, end) as it is (it stays
 * ingested, never derived), and a clash of random ids fails the batch, which runs again (src/graph/ids.ts).
 *
 * The set-based statements expand in SQL, so nothing proportional to the graph passes through the
 * isolate: only the replication-right holders (DCSync, SyncLAPSPassword, with the membership below them) and
 * the Citrix CanRDP are computed in JavaScript.
 */

import { azureDerivedStatements } from './azurehound/post.store'
import { ntlmStatements } from './ntlm.store'
import type { AdcsResult } from './adcs'
import { DERIVED_INSERT_HEAD, DERIVED_INSERT_TAIL, withIdRetry } from '../graph/ids'

const DERIVED_PROPS = `'{"isacl":false}'`

/** ?1 = now. Every derived insert is `${INSERT_PREFIX} <candidates> ${INSERT_SUFFIX}` (src/graph/ids.ts DERIVED_INSERT_HEAD). */
const INSERT_PREFIX = DERIVED_INSERT_HEAD
const INSERT_SUFFIX = DERIVED_INSERT_TAIL

/**
 * Local groups → AdminTo (-544), CanPSRemote (-580), ExecuteDCOM (-562): every direct member (any kind: local
 * users and unresolved placeholders too, as BloodHound's current PostLocalGroups walks every MemberOfLocalGroup
 * edge into the group) of the computer's local group (the group `LocalToComputer` the computer, found by its
 * object id's RID suffix, as BloodHound's FetchComputerLocalGroupBySIDSuffix) gets the relationship to the
 * computer. Members of a member group reach the computer through MemberOf, as in BloodHound. CanBackup (-551,
 * Backup Operators; see docs/collectors.md) for computers without collected user rights (`hasura` not true),
 * from direct User, Group or Computer members only (the version of BloodHound's source that derives it).
 * CanRDP (-555) has rules of its own below.
 */
const LOCAL_GROUP_RIGHTS = `
${INSERT_PREFIX}
SELECT m.start_id, lc.end_id, r.kind, ${DERIVED_PROPS}, ?1, ?1, 1
FROM nodes g
JOIN (SELECT '-544' AS suffix, 'AdminTo' AS kind UNION ALL SELECT '-580', 'CanPSRemote'
      UNION ALL SELECT '-562', 'ExecuteDCOM' UNION ALL SELECT '-551', 'CanBackup') AS r
  ON substr(g.objectid, -4) = r.suffix
JOIN edges lc ON lc.start_id = g.id AND lc.kind = 'LocalToComputer'
JOIN nodes c ON c.id = lc.end_id
JOIN edges m ON m.end_id = lc.start_id AND m.kind = 'MemberOfLocalGroup'
JOIN nodes s ON s.id = m.start_id
WHERE g.kind = 'ADLocalGroup'
  AND EXISTS (SELECT 1 FROM json_each(c.kinds) WHERE value = 'Computer')
  AND (r.kind <> 'CanBackup' OR (json_extract(c.properties, '$.hasura') IS NOT 1
                                 AND EXISTS (SELECT 1 FROM json_each(s.kinds) WHERE value IN ('User', 'Group', 'Computer'))))
${INSERT_SUFFIX}`

/**
 * A computer has the Citrix "Direct Access Users" local group (a local group `LocalToComputer` it whose name
 * starts with DIRECT ACCESS USERS, as BloodHound's FetchComputerLocalGroupByName): its CanRDP is the cross
 * product computed in src/collectors/postprocess.ts, not the rules below. ?2 = 0 (the `analysis.citrix_rdp_support`
 * parameter turned off, src/appcfg/parameters.ts): no computer is treated as a Citrix host, the rules below apply
 * to every computer.
 */
const NOT_CITRIX = (computer: string) => `(?2 = 0 OR NOT EXISTS (
    SELECT 1 FROM edges dl JOIN nodes dn ON dn.id = dl.start_id
    WHERE dl.end_id = ${computer} AND dl.kind = 'LocalToComputer' AND dn.kind = 'ADLocalGroup' AND upper(dn.name) LIKE 'DIRECT ACCESS USERS%'))`

/**
 * CanRDP, BloodHound's PostCanRDP with user rights always enforced (its analysis passes enforceURA = true,
 * so a computer without collected user rights gets no CanRDP: nobody is known to hold the logon right):
 *  1. the Remote Desktop Users group itself holds RemoteInteractiveLogonRight on the computer: its direct
 *     members (any kind, BloodHound's FetchRemoteDesktopUsersBitmapForComputerWithoutURA) get CanRDP;
 *  2. otherwise, each holder of RemoteInteractiveLogonRight that is (directly or through groups) a member
 *     of the Remote Desktop Users group gets CanRDP.
 *  3. (RDP_WITH_URA_GROUP_MEMBERS) the transitive members (MemberOf and MemberOfLocalGroup, any kind) of a
 *     group holding RemoteInteractiveLogonRight on the computer that is not itself an RDP member, who are also
 *     (directly or through groups) members of the Remote Desktop Users group: the right reaches them through
 *     the group, the RDP membership through another way.
 * Computers with the Citrix group are left out (NOT_CITRIX).
 */
const RDP_WITH_URA_SHORTCUT = `
${INSERT_PREFIX}
SELECT m.start_id, lc.end_id, 'CanRDP', ${DERIVED_PROPS}, ?1, ?1, 1
FROM nodes g
JOIN edges lc ON lc.start_id = g.id AND lc.kind = 'LocalToComputer'
JOIN nodes c ON c.id = lc.end_id
JOIN edges ril ON ril.start_id = lc.start_id AND ril.kind = 'RemoteInteractiveLogonRight' AND ril.end_id = lc.end_id
JOIN edges m ON m.end_id = lc.start_id AND m.kind = 'MemberOfLocalGroup'
WHERE g.kind = 'ADLocalGroup' AND substr(g.objectid, -4) = '-555'
  AND ${NOT_CITRIX('c.id')}
${INSERT_SUFFIX}`

const RDP_WITH_URA_HOLDERS = `
WITH RECURSIVE
  target(computer, rdp) AS (
    SELECT lc.end_id, lc.start_id FROM nodes g JOIN edges lc ON lc.start_id = g.id AND lc.kind = 'LocalToComputer' JOIN nodes c ON c.id = lc.end_id
    WHERE g.kind = 'ADLocalGroup' AND substr(g.objectid, -4) = '-555' AND ${NOT_CITRIX('c.id')}
      AND NOT EXISTS (SELECT 1 FROM edges x WHERE x.start_id = lc.start_id AND x.kind = 'RemoteInteractiveLogonRight' AND x.end_id = lc.end_id)),
  up(computer, rdp, holder, node) AS (
    SELECT t.computer, t.rdp, r.start_id, r.start_id
    FROM target t JOIN edges r ON r.end_id = t.computer AND r.kind = 'RemoteInteractiveLogonRight'
    UNION
    SELECT u.computer, u.rdp, u.holder, e.end_id
    FROM up u JOIN edges e ON e.start_id = u.node AND e.kind IN ('MemberOf', 'MemberOfLocalGroup'))
${INSERT_PREFIX}
SELECT DISTINCT holder, computer, 'CanRDP', ${DERIVED_PROPS}, ?1, ?1, 1 FROM up WHERE node = rdp AND holder <> rdp
${INSERT_SUFFIX}`

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
    WHERE g.kind = 'ADLocalGroup' AND substr(g.objectid, -4) = '-555' AND ${NOT_CITRIX('c.id')}
      AND NOT EXISTS (SELECT 1 FROM edges x WHERE x.start_id = lc.start_id AND x.kind = 'RemoteInteractiveLogonRight' AND x.end_id = lc.end_id)),
  holder(computer, rdp, id) AS (
    SELECT t.computer, t.rdp, r.start_id
    FROM target t JOIN edges r ON r.end_id = t.computer AND r.kind = 'RemoteInteractiveLogonRight'
    JOIN nodes h ON h.id = r.start_id AND h.kind IN ('Group', 'ADLocalGroup')), -- only groups have members to expand
  hup(computer, rdp, id, node) AS (
    SELECT computer, rdp, id, id FROM holder
    UNION
    SELECT u.computer, u.rdp, u.id, e.end_id FROM hup u JOIN edges e ON e.start_id = u.node AND e.kind IN ('MemberOf', 'MemberOfLocalGroup')),
  down(computer, rdp, node) AS (
    SELECT h.computer, h.rdp, m.start_id
    FROM holder h JOIN edges m ON m.end_id = h.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup')
    WHERE NOT EXISTS (SELECT 1 FROM hup u WHERE u.computer = h.computer AND u.id = h.id AND u.node = h.rdp)
    UNION
    SELECT d.computer, d.rdp, m.start_id FROM down d JOIN edges m ON m.end_id = d.node AND m.kind IN ('MemberOf', 'MemberOfLocalGroup')),
  up(computer, rdp, member, node) AS (
    SELECT computer, rdp, node, node FROM down
    UNION
    SELECT u.computer, u.rdp, u.member, e.end_id
    FROM up u JOIN edges e ON e.start_id = u.node AND e.kind IN ('MemberOf', 'MemberOfLocalGroup'))
${INSERT_PREFIX}
SELECT DISTINCT u.member, u.computer, 'CanRDP', ${DERIVED_PROPS}, ?1, ?1, 1
FROM up u
WHERE u.node = u.rdp AND u.member <> u.rdp
${INSERT_SUFFIX}`

/**
 * Group members SharpHound could not resolve to an object id are written as `DN=<distinguished name>`
 * (BloodHound's ParseGroupMembershipData sets them apart and ingests them against the node with that
 * `distinguishedname`, its ingestDNRelationship). They are ingested as a placeholder whose object id is the
 * `DN=` string, holding the MemberOf; here every node whose `distinguishedname` (compared upper-cased, as
 * BloodHound upper-cases both) is that DN gets the same MemberOf to the same group. The placeholders are
 * found through the object id index (the range of ids starting with `DN=`); with none, the constant
 * `EXISTS` is false before any loop and nothing else is read. With some, the nodes are read ONCE (no index
 * orders them by distinguishedname), each looked up in the placeholders (an automatic index over `dnm`), and
 * a match's MemberOf through `edges (start_id, kind, end_id)`: |nodes| + matches, whatever the number of
 * placeholders. CROSS JOIN keeps that order. The two earlier orders were superlinear: a plain JOIN scanned
 * every node and, for each, the MemberOf edges (an automatic index over the edges): at the 1 M-edge benchmark
 * graph, with no placeholder at all, the analysis held D1 for over 10 minutes; placeholders first scanned
 * every node per placeholder edge. This runs first in the batch so that the local-group and CanRDP statements below see the
 * memberships (DCSync / SyncLAPSPassword, computed before the batch, see them from the next run on).
 */
const DN_MEMBERS = `
WITH dnm(pid, dn) AS (
  SELECT id, upper(substr(objectid, 4)) FROM nodes WHERE objectid >= 'DN=' AND objectid < 'DN>')
${INSERT_PREFIX}
SELECT n.id, e.end_id, 'MemberOf', '{"isacl":false,"isprimarygroup":false}', ?1, ?1, 1
FROM nodes n
CROSS JOIN dnm ON dnm.dn = upper(json_extract(n.properties, '$.distinguishedname')) AND n.id <> dnm.pid
CROSS JOIN edges e ON e.start_id = dnm.pid AND e.kind = 'MemberOf'
WHERE EXISTS (SELECT 1 FROM dnm)
${INSERT_SUFFIX}`

/**
 * OwnsRaw / WriteOwnerRaw → Owns / WriteOwner (each read through its partial index, migrations/0013), except where the owner's implicit rights are blocked:
 * the object is a computer, its domain enforces BlockOwnerImplicitRights (dSHeuristics, 29th character
 * "1") and the owner is not a direct member of Domain Admins (-512) or Enterprise Admins (-519).
 * The raw edge's properties are kept. A domain without `dsheuristics` does not enforce it (`IS '1'`: with
 * `= '1'` the missing value made the whole condition NULL and dropped every Owns on a computer).
 */
function ownsFrom(raw: string, kind: string): string {
  return `
SELECT e.start_id, e.end_id, '${kind}', e.properties, ?1, ?1, 1
FROM edges e
JOIN nodes t ON t.id = e.end_id
WHERE e.kind = '${raw}'
  AND NOT (
    EXISTS (SELECT 1 FROM json_each(t.kinds) WHERE value = 'Computer')
    AND (SELECT substr(json_extract(d.properties, '$.dsheuristics'), 29, 1) FROM nodes d WHERE d.objectid = t.environment_id) IS '1'
    AND NOT EXISTS (SELECT 1 FROM edges mo JOIN nodes a ON a.id = mo.end_id
                    WHERE mo.start_id = e.start_id AND mo.kind = 'MemberOf'
                      AND (a.objectid LIKE '%-512' OR a.objectid LIKE '%-519')))`
}
const OWNS = `${INSERT_PREFIX} ${ownsFrom('OwnsRaw', 'Owns')} UNION ALL ${ownsFrom('WriteOwnerRaw', 'WriteOwner')} ${INSERT_SUFFIX}`

/** The collected domains (BloodHound's fetchCollectedDomainNodes): `collected: true`, with their SID. */
const COLLECTED_DOMAINS = `SELECT id, json_extract(properties, '$.domainsid') AS sid, properties FROM nodes
  WHERE kind = 'Domain' AND json_extract(properties, '$.collected') IS 1`

/**
 * ProtectAdminGroups (BloodHound's PostProtectAdminGroups): per collected domain, its AdminSDHolder
 * container (a `Container` of the domain whose `distinguishedname` starts with CN=ADMINSDHOLDER,CN=SYSTEM,;
 * the first one if several) → every `User`, `Group` and `Computer` of the domain with
 * `adminsdholderprotected: true` (SharpHound's flag: the object's ACL is the one AdminSDHolder stamps).
 * Candidates are read through the nodes' (kind, environment) index: an AD object's environment is its domain SID.
 */
const PROTECT_ADMIN_GROUPS = `
WITH dom(sid) AS (SELECT sid FROM (${COLLECTED_DOMAINS}) WHERE sid IS NOT NULL),
  holder(sid, id) AS (
    SELECT d.sid, (SELECT MIN(c.id) FROM nodes c
                   WHERE c.kind = 'Container' AND c.environment_id = d.sid AND json_extract(c.properties, '$.domainsid') = d.sid
                     AND substr(json_extract(c.properties, '$.distinguishedname'), 1, 27) = 'CN=ADMINSDHOLDER,CN=SYSTEM,')
    FROM dom d)
${INSERT_PREFIX}
SELECT h.id, n.id, 'ProtectAdminGroups', ${DERIVED_PROPS}, ?1, ?1, 1
FROM holder h JOIN nodes n ON n.kind IN ('User', 'Group', 'Computer') AND n.environment_id = h.sid
WHERE h.id IS NOT NULL AND json_extract(n.properties, '$.adminsdholderprotected') IS 1 AND json_extract(n.properties, '$.domainsid') = h.sid
${INSERT_SUFFIX}`

/**
 * HasTrustKeys (BloodHound's PostHasTrustKeys): a collected domain with a `netbios` name that trusts another
 * domain (its outbound SameForestTrust / CrossForestTrust to a `Domain` with a `domainsid`) → the trust
 * account in that domain: the `User` of that domain whose `samaccountname` is `<netbios>$` (the first one).
 */
const HAS_TRUST_KEYS = `
WITH tr(domain, account) AS (
  SELECT d.id, (SELECT MIN(u.id) FROM nodes u
                WHERE u.kind = 'User' AND u.environment_id = json_extract(t.properties, '$.domainsid')
                  AND json_extract(u.properties, '$.domainsid') = json_extract(t.properties, '$.domainsid')
                  AND json_extract(u.properties, '$.samaccountname') = json_extract(d.properties, '$.netbios') || '$')
  FROM (${COLLECTED_DOMAINS}) d
  JOIN edges e ON e.start_id = d.id AND e.kind IN ('SameForestTrust', 'CrossForestTrust')
  JOIN nodes t ON t.id = e.end_id AND t.kind = 'Domain'
  WHERE json_type(d.properties, '$.netbios') = 'text' AND json_type(t.properties, '$.domainsid') = 'text')
${INSERT_PREFIX}
SELECT DISTINCT domain, account, 'HasTrustKeys', ${DERIVED_PROPS}, ?1, ?1, 1 FROM tr WHERE account IS NOT NULL
${INSERT_SUFFIX}`

/** A holder of a replication right on a collected domain: `holder` holds `right` on `domain` directly. */
export interface ReplicationHolder {
  domain: number
  domainsid: string | null
  right: 'GetChanges' | 'GetChangesAll' | 'GetChangesInFilteredSet'
  holder: number
}

export interface ReplicationData {
  holders: ReplicationHolder[]
  /** membership edges (MemberOf / MemberOfLocalGroup) below the holders: [member, group] */
  membership: [number, number][]
  /** the holders and every member met below them, with their object ids and kinds (JSON) */
  nodes: { id: number; objectid: string; kinds: string }[]
}

/**
 * Everyone (…S-1-1-0) and Authenticated Users (…S-1-5-11) groups, as `isAuthUsersOrEveryone` in adcs.ts:
 * the membership walk stops there. The cross product never needs what lies below them: a set that reaches
 * one of them (as a holder or a member of a holder group) constrains nothing and its expansion is not used,
 * and a set that does not never meets their members through them. Stopping keeps "Everyone holds
 * GetChanges" from reading every user of the domain (Domain Users → Authenticated Users → Everyone).
 */
const SPECIAL_GROUP = (n: string) =>
  `((${n}.objectid LIKE '%S-1-1-0' OR ${n}.objectid LIKE '%S-1-5-11') AND EXISTS (SELECT 1 FROM json_each(${n}.kinds) WHERE value = 'Group'))`

/**
 * What DCSync and SyncLAPSPassword need (BloodHound's getDCSyncers / getLAPSSyncers): the first-degree
 * holders of GetChanges / GetChangesAll / GetChangesInFilteredSet on every collected domain (`collected:
 * true`, its fetchCollectedDomainNodes), and the membership subgraph inbound from them (MemberOf and
 * MemberOfLocalGroup, transitively, as its group membership cache), with the kinds and object ids of every
 * node in it. Two statements in one batch; each walks from the domains through the inbound edge index and
 * reads nothing else (CROSS JOIN keeps the walk outermost: with plain JOINs SQLite read every MemberOf edge
 * through the whole edges_end_kind index and looked the walk up per edge; test/integration/postprocess-plans.test.ts).
 */
export async function loadReplicationData(db: D1Database): Promise<ReplicationData> {
  const DOM = `dom(id, sid) AS (
      SELECT id, json_extract(properties, '$.domainsid') FROM nodes
      WHERE kind = 'Domain' AND json_extract(properties, '$.collected') IS 1)`
  const RIGHTS = `('GetChanges', 'GetChangesAll', 'GetChangesInFilteredSet')`
  const [holders, membership] = await db.batch([
    db.prepare(
      `WITH ${DOM}
       SELECT d.id AS domain, d.sid AS domainsid, e.kind AS "right", e.start_id AS holder, n.objectid, n.kinds
       FROM dom d JOIN edges e ON e.end_id = d.id AND e.kind IN ${RIGHTS} JOIN nodes n ON n.id = e.start_id`,
    ),
    db.prepare(
      `WITH RECURSIVE ${DOM},
         down(id) AS (
           SELECT e.start_id FROM dom d JOIN edges e ON e.end_id = d.id AND e.kind IN ${RIGHTS}
           UNION
           SELECT m.start_id FROM down JOIN nodes g ON g.id = down.id
           JOIN edges m ON m.end_id = down.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup')
           WHERE NOT ${SPECIAL_GROUP('g')})
       SELECT m.start_id AS member, m.end_id AS grp, n.objectid, n.kinds
       FROM down CROSS JOIN nodes g ON g.id = down.id
       CROSS JOIN edges m ON m.end_id = down.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup')
       CROSS JOIN nodes n ON n.id = m.start_id
       WHERE NOT ${SPECIAL_GROUP('g')}`,
    ),
  ])
  type H = ReplicationHolder & { objectid: string; kinds: string }
  type M = { member: number; grp: number; objectid: string; kinds: string }
  const nodes = new Map<number, ReplicationData['nodes'][number]>()
  for (const h of holders.results as H[]) nodes.set(h.holder, { id: h.holder, objectid: h.objectid, kinds: h.kinds })
  for (const r of membership.results as M[]) nodes.set(r.member, { id: r.member, objectid: r.objectid, kinds: r.kinds })
  return {
    holders: (holders.results as H[]).map(({ domain, domainsid, right, holder }) => ({ domain, domainsid, right, holder })),
    membership: (membership.results as M[]).map((r) => [r.member, r.grp] as [number, number]),
    nodes: [...nodes.values()],
  }
}

/** A computer with the Citrix group: its Remote Desktop Users (-555) and Direct Access Users local groups. */
export interface CitrixComputer {
  computer: number
  rdp: number
  dau: number
}

export interface CitrixData {
  computers: CitrixComputer[]
  /** RemoteInteractiveLogonRight holders per computer: [computer, holder] */
  logonRight: [number, number][]
  /** membership edges (MemberOf / MemberOfLocalGroup) below the seeds: [member, group] */
  membership: [number, number][]
  /** the nodes of that subgraph (and the seeds) with their object ids and kinds */
  nodes: { id: number; objectid: string; kinds: string }[]
}

/**
 * What the Citrix CanRDP cross product needs (src/collectors/postprocess.ts): the computers with a Direct
 * Access Users local group, found from the local group nodes (nodes_kind_env index) and their
 * LocalToComputer edge, and for those only the logon right holders and the membership subgraph inbound
 * from the three seed sets. Nothing is read beyond the first statement when no computer has the group.
 */
export async function loadCitrixData(db: D1Database): Promise<CitrixData> {
  const CX = `
    cx(computer, rdp, dau) AS (
      SELECT c.id, MIN(r.start_id), MIN(dg.id)
      FROM nodes dg
      JOIN edges dl ON dl.start_id = dg.id AND dl.kind = 'LocalToComputer'
      JOIN nodes c ON c.id = dl.end_id
      JOIN edges r ON r.end_id = c.id AND r.kind = 'LocalToComputer'
      JOIN nodes rg ON rg.id = r.start_id AND rg.kind = 'ADLocalGroup' AND substr(rg.objectid, -4) = '-555'
      WHERE dg.kind = 'ADLocalGroup' AND upper(dg.name) LIKE 'DIRECT ACCESS USERS%'
        AND EXISTS (SELECT 1 FROM json_each(c.kinds) WHERE value = 'Computer')
      GROUP BY c.id)`
  const computers = (await db.prepare(`WITH ${CX} SELECT computer, rdp, dau FROM cx`).all<CitrixComputer>()).results
  if (computers.length === 0) return { computers, logonRight: [], membership: [], nodes: [] }
  const SUB = `WITH RECURSIVE ${CX},
    seeds(id) AS (
      SELECT rdp FROM cx UNION SELECT dau FROM cx
      UNION SELECT e.start_id FROM cx JOIN edges e ON e.end_id = cx.computer AND e.kind = 'RemoteInteractiveLogonRight'),
    down(id) AS (
      SELECT id FROM seeds
      UNION SELECT m.start_id FROM down JOIN edges m ON m.end_id = down.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup'))`
  const [ril, mem, nodes] = await db.batch([
    db.prepare(`WITH ${CX} SELECT cx.computer AS a, e.start_id AS b FROM cx JOIN edges e ON e.end_id = cx.computer AND e.kind = 'RemoteInteractiveLogonRight'`),
    db.prepare(`${SUB} SELECT m.start_id AS a, m.end_id AS b FROM down JOIN edges m ON m.end_id = down.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup')`),
    db.prepare(`${SUB} SELECT n.id, n.objectid, n.kinds FROM down JOIN nodes n ON n.id = down.id`),
  ])
  const pairs = (r: D1Result) => (r.results as { a: number; b: number }[]).map((x) => [x.a, x.b] as [number, number])
  return { computers, logonRight: pairs(ril), membership: pairs(mem), nodes: nodes.results as CitrixData['nodes'] }
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
        .prepare(`${INSERT_PREFIX} SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?2, ${DERIVED_PROPS}, ?1, ?1, 1 FROM json_each(?3) ${INSERT_SUFFIX}`)
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
  /** ADCS: certificate, intermediary and ESC relationships (src/collectors/adcs.ts) */
  adcs?: AdcsResult
  /** CanRDP on computers with the Citrix group: principal → computer node ids */
  citrixRdp: [number, number][]
  /** the Citrix rule is on (`analysis.citrix_rdp_support`): computers with the group are left to `citrixRdp` */
  citrix: boolean
  /** the NTLM relay relationships are derived (feature flag `ntlm_post_processing`) */
  ntlm: boolean
}

/**
 * ESC9 / ESC10 attackers (BloodHound's FetchAttackersForEscalations9and10): every Group, User or Computer
 * holding GenericAll, GenericWrite, Owns, WriteOwner or WriteDacl on a victim gets the relationship to the
 * victim's domain. Runs after OWNS in the batch, so the Owns / WriteOwner derived from the raw edges count.
 * ?1 = now, ?2 = kind, ?3 = [[victim, domain], ...]. CROSS JOIN keeps SQLite's join order: victims first, then
 * each victim's inbound edges through `edges (end_id, kind, start_id)` (otherwise it may scan the edges).
 */
function attackerStatements(db: D1Database, now: string, rule: AdcsResult['attackerRules'][number]): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = []
  const victimFilter = rule.computersOnly ? `AND EXISTS (SELECT 1 FROM nodes v, json_each(v.kinds) k WHERE v.id = e.end_id AND k.value = 'Computer')` : ''
  for (let i = 0; i < rule.victims.length; i += 4_000)
    out.push(
      db
        .prepare(
          `${INSERT_PREFIX}
           SELECT DISTINCT e.start_id, v.domain, ?2, ${DERIVED_PROPS}, ?1, ?1, 1
           FROM (SELECT json_extract(value, '$[0]') AS victim, json_extract(value, '$[1]') AS domain FROM json_each(?3)) v
           CROSS JOIN edges e ON e.end_id = v.victim AND e.kind IN ('GenericAll', 'GenericWrite', 'Owns', 'WriteOwner', 'WriteDacl')
           CROSS JOIN nodes s ON s.id = e.start_id
           WHERE EXISTS (SELECT 1 FROM json_each(s.kinds) WHERE value IN ('Group', 'User', 'Computer')) ${victimFilter}
           ${INSERT_SUFFIX}`,
        )
        .bind(now, rule.kind, JSON.stringify(rule.victims.slice(i, i + 4_000))),
    )
  return out
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
             WHERE json_extract(c.properties, '$.haslaps') IS 1
             ${INSERT_SUFFIX}`,
          )
          .bind(d.now, JSON.stringify(l.holders.slice(i, i + 5_000)), l.domainsid),
      )
    return statements
  })
  const statements = [
    db.prepare(`DELETE FROM edges WHERE derived = 1`),
    db.prepare(DN_MEMBERS).bind(d.now),
    db.prepare(OWNS).bind(d.now),
    db.prepare(PROTECT_ADMIN_GROUPS).bind(d.now),
    db.prepare(HAS_TRUST_KEYS).bind(d.now),
    db.prepare(LOCAL_GROUP_RIGHTS).bind(d.now),
    db.prepare(RDP_WITH_URA_SHORTCUT).bind(d.now, d.citrix ? 1 : 0),
    db.prepare(RDP_WITH_URA_HOLDERS).bind(d.now, d.citrix ? 1 : 0),
    db.prepare(RDP_WITH_URA_GROUP_MEMBERS).bind(d.now, d.citrix ? 1 : 0),
    ...[...(d.adcs?.pairs ?? [])].flatMap(([kind, pairs]) => pairsStatements(db, kind, pairs, d.now)),
    ...(d.adcs?.attackerRules ?? []).flatMap((r) => attackerStatements(db, d.now, r)),
    ...pairsStatements(db, 'DCSync', d.dcsync, d.now),
    ...pairsStatements(db, 'CanRDP', d.citrixRdp, d.now),
    ...laps,
    ...azureDerivedStatements(db, d.now),
    // after LOCAL_GROUP_RIGHTS (AdminTo) and DN_MEMBERS (MemberOf), which the NTLM rules read
    ...(d.ntlm ? ntlmStatements(db, d.now, d.adcs?.relayVictims ?? []) : []),
    db.prepare(`SELECT count(*) AS n FROM edges WHERE derived = 1`),
  ]
  // a new derived edge whose random id meets an existing id fails the batch (nothing written): it runs again
  // with new ids (src/graph/ids.ts DERIVED_INSERT_HEAD), so no derived edge is lost to a clash
  const results = await withIdRetry(() => db.batch(statements))
  return (results[results.length - 1].results[0] as { n: number }).n
}
