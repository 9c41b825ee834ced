/**
 * The three steps BloodHound's AD post-processing runs before any other (packages/go/analysis/ad/ad.go,
 * called first by `Post` in packages/go/analysis/ad/post.go), as one D1 batch run at the start of
 * post-processing (src/collectors/postprocess.ts), so that every later step reads their result:
 *
 *   FixWellKnownNodeTypes   an AD node (kinds include `Base`) whose object id ends with a well-known group
 *                           RID (-512 Domain Admins, -516 Domain Controllers, -518, -519, -526, -527,
 *                           -544 Administrators, -551 Backup Operators, -S-1-5-9 Enterprise Domain
 *                           Controllers) and that is neither `Group` nor `ADLocalGroup` gains the `Group`
 *                           kind (a placeholder named only by an ACE's PrincipalSID becomes a Group)
 *   RunDomainAssociations   a node without a name whose object id, up to its last `-`, is the object id of a
 *                           `Domain` node is named `(<DOMAIN NAME>) <object id>` and gets that `domainsid`
 *                           (so its environment: a SID that only appeared in an ACE or a session belongs to
 *                           its domain)
 *   LinkWellKnownNodes      per collected domain (`collected: true`, with `domainsid` and name): the groups
 *                           Everyone (`<DOMAIN>-S-1-1-0`), Authenticated Users (`<DOMAIN>-S-1-5-11`), Domain
 *                           Users (`<SID>-513`) and Domain Computers (`<SID>-515`) exist (created with
 *                           BloodHound's names `EVERYONE@<DOMAIN>`, ... when missing; an existing node of
 *                           that id only gains the `Group` kind), and Domain Users / Domain Computers
 *                           -MemberOf-> Authenticated Users -MemberOf-> Everyone; the domain's Guest
 *                           (`<SID>-501`), when present, -MemberOf-> Everyone, and when enabled,
 *                           Everyone -ClaimSpecialIdentity-> Guest
 *
 * Unlike the derived relationships (replaced at every run), what these steps write stays, as in BloodHound
 * (its well-known links are ordinary relationships with `lastseen`): they are idempotent (a second run
 * changes nothing) and a later upload of the real object fills the node in as usual.
 *
 * Not done: BloodHound's newest LinkWellKnownNodes also creates Network, This Organization, the
 * authentication-assertion and NTLM / SChannel special identities with Everyone -ClaimSpecialIdentity-> each
 * (SIDs confirmed from its source, node names not: docs/collectors.md, Not done).
 */

import { NEW_EDGE_ID_SQL, NEW_ID_SQL, withIdRetry } from '../graph/ids'

/** BloodHound's FixWellKnownNodeTypes suffixes (wellknown.*GroupSIDSuffix). */
const WELL_KNOWN_GROUP_SUFFIXES = ['-512', '-516', '-518', '-519', '-526', '-527', '-544', '-551', '-S-1-5-9']

const hasKind = (kinds: string, kind: string) => `EXISTS (SELECT 1 FROM json_each(${kinds}) WHERE value = '${kind}')`

/**
 * `Group` added to the kinds (after the existing ones; a `Base`-only node takes it as its primary kind).
 * ?1 = now
 */
const FIX_WELL_KNOWN_NODE_TYPES = `
UPDATE nodes SET
  kind = CASE WHEN kind = 'Base' THEN 'Group' ELSE kind END,
  kinds = CASE WHEN kind = 'Base' THEN json_insert(json('["Group"]'), '$[#]', 'Base') ELSE json_insert(kinds, '$[#]', 'Group') END,
  updated_at = ?1
WHERE (${WELL_KNOWN_GROUP_SUFFIXES.map((s) => `objectid LIKE '%${s}'`).join(' OR ')})
  AND kind NOT IN ('Group', 'ADLocalGroup')
  AND ${hasKind('nodes.kinds', 'Base')}
  AND NOT ${hasKind('nodes.kinds', 'Group')} AND NOT ${hasKind('nodes.kinds', 'ADLocalGroup')}`

/** The object id up to (not including) its last `-`: rtrim strips every trailing character that is not `-`. */
const domainPart = (o: string) => `substr(rtrim(${o}, replace(${o}, '-', '')), 1, length(rtrim(${o}, replace(${o}, '-', ''))) - 1)`

/** ?1 = now */
const RUN_DOMAIN_ASSOCIATIONS = `
UPDATE nodes SET
  name = '(' || d.name || ') ' || nodes.objectid,
  properties = json_set(nodes.properties, '$.name', '(' || d.name || ') ' || nodes.objectid, '$.domainsid', d.objectid),
  environment_id = coalesce(nodes.environment_id, d.objectid),
  updated_at = ?1
FROM (SELECT objectid, name FROM nodes WHERE kind = 'Domain' AND name IS NOT NULL) AS d
WHERE nodes.name IS NULL AND json_type(nodes.properties, '$.name') IS NULL
  AND instr(nodes.objectid, '-') > 0 AND d.objectid = ${domainPart('nodes.objectid')}`

/** The collected domains with a SID and a name: (sid, name). */
const DOMAINS = `SELECT json_extract(properties, '$.domainsid') AS sid, name FROM nodes
  WHERE kind = 'Domain' AND json_extract(properties, '$.collected') IS 1
    AND json_type(properties, '$.domainsid') = 'text' AND name IS NOT NULL`

/** (domain sid, object id, name) of the four groups of every collected domain. */
const GROUPS = `
SELECT sid, name || '-S-1-1-0' AS o, 'EVERYONE@' || name AS n, name AS dn FROM (${DOMAINS})
UNION ALL SELECT sid, name || '-S-1-5-11', 'AUTHENTICATED USERS@' || name, name FROM (${DOMAINS})
UNION ALL SELECT sid, sid || '-513', 'DOMAIN USERS@' || name, name FROM (${DOMAINS})
UNION ALL SELECT sid, sid || '-515', 'DOMAIN COMPUTERS@' || name, name FROM (${DOMAINS})`

/** Creates the missing groups; an existing node of that id only gains the Group kind. ?1 = now */
const WELL_KNOWN_GROUPS = `
INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at, id)
SELECT g.o, 'Group', '["Group","Base"]', g.n, g.sid, NULL, json_object('name', g.n, 'domainsid', g.sid, 'domain', g.dn), ?1, ?1, ${NEW_ID_SQL}
FROM (${GROUPS}) AS g WHERE true
ON CONFLICT (objectid) DO UPDATE SET
  kind = CASE WHEN nodes.kind = 'Base' THEN 'Group' ELSE nodes.kind END,
  kinds = CASE WHEN nodes.kind = 'Base' THEN json_insert(json('["Group"]'), '$[#]', 'Base') ELSE json_insert(nodes.kinds, '$[#]', 'Group') END,
  updated_at = excluded.updated_at
WHERE NOT ${hasKind('nodes.kinds', 'Group')}`

/** (start object id, end object id, kind) of the well-known links of every collected domain. */
const LINKS = `
SELECT sid || '-513' AS s, name || '-S-1-5-11' AS t, 'MemberOf' AS k FROM (${DOMAINS})
UNION ALL SELECT sid || '-515', name || '-S-1-5-11', 'MemberOf' FROM (${DOMAINS})
UNION ALL SELECT name || '-S-1-5-11', name || '-S-1-1-0', 'MemberOf' FROM (${DOMAINS})
UNION ALL SELECT sid || '-501', name || '-S-1-1-0', 'MemberOf' FROM (${DOMAINS})
UNION ALL SELECT d.name || '-S-1-1-0', d.sid || '-501', 'ClaimSpecialIdentity' FROM (${DOMAINS}) AS d
  JOIN nodes g ON g.objectid = d.sid || '-501' WHERE json_extract(g.properties, '$.enabled') IS 1`

/**
 * The links between existing nodes (a missing Guest makes none), kept if already there. ?1 = now. Only an
 * existing (start, kind, end) is skipped: a new id that meets a taken one fails the batch, which runs again
 * (with INSERT OR IGNORE the link was silently dropped; src/graph/ids.ts).
 */
const WELL_KNOWN_LINKS = `
INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at, derived, id)
SELECT s.id, t.id, l.k, '{}', ?1, ?1, 0, ${NEW_EDGE_ID_SQL}
FROM (${LINKS}) AS l JOIN nodes s ON s.objectid = l.s JOIN nodes t ON t.objectid = l.t
WHERE true
ON CONFLICT (start_id, kind, end_id) DO NOTHING`

/** Runs the three steps, in BloodHound's order, as one batch. */
export async function linkWellKnownNodes(db: D1Database, now: string): Promise<void> {
  // a new group's random id that meets an existing id aborts the batch: it runs again (src/graph/ids.ts)
  await withIdRetry(() => db.batch([
    db.prepare(FIX_WELL_KNOWN_NODE_TYPES).bind(now),
    db.prepare(RUN_DOMAIN_ASSOCIATIONS).bind(now),
    db.prepare(WELL_KNOWN_GROUPS).bind(now),
    db.prepare(WELL_KNOWN_LINKS).bind(now),
  ]))
}
