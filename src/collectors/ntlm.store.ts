/**
 * NTLM relay post-processing (BloodHound's PostNTLM, packages/go/analysis/ad/ntlm.go, on by default there:
 * its `ntlm_post_processing` flag is enabled and not user-updatable): the four CoerceAndRelayNTLMTo*
 * relationships, each from the Authenticated Users group of a domain to a computer an attacker can coerce into
 * authenticating and relay. Set-based SQL statements of the one post-processing batch
 * (postprocess.store.ts `replaceDerivedEdges`); they run after the local-group rules so that the derived
 * `AdminTo` relationships count.
 *
 * The facts, as BloodHound reads them (every property through Go's typed getters: a missing or mistyped
 * value fails the check, never reads as false):
 *
 *   Authenticated Users of a domain SID: a `Group` whose object id ends with `-S-1-5-11` and whose
 *     `domainsid` is that SID (the first one; EdgeHound creates one per collected domain, wellknown.store.ts).
 *   Domains: `Domain` nodes with a text `domainsid` (all of them, not only collected ones). A domain's
 *     functional level is vulnerable when `functionallevel` is one of 2000 Mixed/Native, 2003 Interim, 2003,
 *     2008, 2008 R2, 2012 (several Domain nodes with one SID: vulnerable if any is).
 *   Protected Users of a domain SID: the members, transitively through MemberOf / MemberOfLocalGroup, of a
 *     `Group` whose object id ends with `-525` and whose `domainsid` is that SID.
 *   Unprotected computer (a valid relay victim): a `Computer` whose `domainsid` has an Authenticated Users
 *     group and a Domain node, with `restrictoutboundntlm` false (missing: protected, fail closed), and not a
 *     Protected Users member of its domain unless the domain's functional level is vulnerable.
 *
 * The rules:
 *
 *   CoerceAndRelayNTLMToSMB   → computer C (with `smbsigning` false and an Authenticated Users group for its
 *     domain) when some unprotected computer other than C is among C's admins: the first-degree holders of
 *     `AdminTo` on C, a `Group` holder replaced by its transitive members (MemberOf / MemberOfLocalGroup).
 *   CoerceAndRelayNTLMToLDAP  → unprotected computer C with `webclientrunning` true when its domain has a
 *     domain controller other than C with `isdc` true, `ldapsigning` false and `ldapavailable` true.
 *   CoerceAndRelayNTLMToLDAPS → the same with a domain controller with `isdc` true, `ldapsavailable` true
 *     and `ldapsepa` false.
 *   CoerceAndRelayNTLMToADCS  → each unprotected computer among the ESC8 victims (src/collectors/adcs.ts,
 *     `relayVictims`: [computer, domain]), from the Authenticated Users group of that domain.
 *
 * Deviation (documented in docs/collectors.md): domain controllers are looked for among nodes whose primary
 * kind is `Computer` (through the kind index), where BloodHound takes any node with those properties;
 * SharpHound writes `isdc` on computers only.
 *
 * Cost: each statement starts from an index (the `Group`, `Domain` and `Computer` rows of nodes_kind_env, the
 * inbound edge index for AdminTo and memberships); nothing is read through the isolate.
 */
import type { Pair } from './adcs'
import { DERIVED_INSERT_HEAD, DERIVED_INSERT_TAIL } from '../graph/ids'

const DERIVED_PROPS = `'{"isacl":false}'`
/** `${INSERT_PREFIX} <candidates> ${INSERT_SUFFIX}`: src/graph/ids.ts DERIVED_INSERT_HEAD */
const INSERT_PREFIX = DERIVED_INSERT_HEAD
const INSERT_SUFFIX = DERIVED_INSERT_TAIL

/** BloodHound's vulnerableFunctionalLevels (ntlm.go). */
const VULNERABLE_LEVELS = `('2000 Mixed/Native', '2003 Interim', '2003', '2008', '2008 R2', '2012')`

/** The common facts, as CTEs of a `WITH RECURSIVE` (au, dom, pu, protected). */
const FACTS = `
  au(sid, id) AS (
    SELECT json_extract(properties, '$.domainsid'), MIN(id) FROM nodes
    WHERE kind = 'Group' AND objectid LIKE '%-S-1-5-11' AND json_type(properties, '$.domainsid') = 'text'
    GROUP BY 1),
  dom(sid, vulnerable) AS MATERIALIZED (
    SELECT json_extract(properties, '$.domainsid'), MAX(json_extract(properties, '$.functionallevel') IN ${VULNERABLE_LEVELS}) FROM nodes
    WHERE kind = 'Domain' AND json_type(properties, '$.domainsid') = 'text'
    GROUP BY 1),
  protected(sid, id) AS MATERIALIZED (
    SELECT json_extract(properties, '$.domainsid'), id FROM nodes
    WHERE kind = 'Group' AND objectid LIKE '%-525' AND json_type(properties, '$.domainsid') = 'text'
    UNION
    SELECT p.sid, m.start_id FROM protected p CROSS JOIN edges m ON m.end_id = p.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup'))`

/**
 * Node `n` has `kind` among its kinds: kinds is a JSON array of kind names (letters, digits, `_`), so the
 * quoted name appears in its text exactly when it is an element (cheaper than json_each per row).
 */
const HAS_KIND = (n: string, kind: string) => `(instr(${n}.kinds, '"${kind}"') > 0)`

/** `c` (a computer row) is an unprotected computer (see above). */
const UNPROTECTED = (c: string) => `(json_type(${c}.properties, '$.restrictoutboundntlm') = 'false'
    AND EXISTS (SELECT 1 FROM au WHERE au.sid = json_extract(${c}.properties, '$.domainsid'))
    AND EXISTS (SELECT 1 FROM dom WHERE dom.sid = json_extract(${c}.properties, '$.domainsid')
                AND (dom.vulnerable IS 1 OR NOT EXISTS (SELECT 1 FROM protected p WHERE p.sid = dom.sid AND p.id = ${c}.id))))`

/**
 * SMB, per target computer (SMB signing off, an Authenticated Users group for its domain): its first-degree
 * AdminTo holders (`holder`); each holding group's transitive members are walked once (`down`, from the
 * distinct holding groups, not once per computer), and its unprotected computer members kept (`ucm`). A target
 * is hit when a non-group holder is an unprotected computer other than itself, or a holding group has an
 * unprotected computer member other than itself.
 */
const SMB = `
WITH RECURSIVE ${FACTS},
  target(c, sid) AS (
    SELECT id, json_extract(properties, '$.domainsid') FROM nodes
    WHERE kind = 'Computer' AND json_type(properties, '$.smbsigning') = 'false'),
  holder(c, h, grp) AS MATERIALIZED (
    SELECT t.c, a.start_id, ${HAS_KIND('g', 'Group')}
    FROM target t CROSS JOIN au ON au.sid = t.sid CROSS JOIN edges a ON a.end_id = t.c AND a.kind = 'AdminTo'
    CROSS JOIN nodes g ON g.id = a.start_id),
  down(g, id) AS (
    SELECT DISTINCT h, h FROM holder WHERE grp
    UNION
    SELECT d.g, m.start_id FROM down d CROSS JOIN edges m ON m.end_id = d.id AND m.kind IN ('MemberOf', 'MemberOfLocalGroup')),
  ucm(g, id) AS MATERIALIZED (
    SELECT d.g, d.id FROM down d CROSS JOIN nodes n ON n.id = d.id
    WHERE d.id <> d.g AND ${HAS_KIND('n', 'Computer')} AND ${UNPROTECTED('n')}),
  hit(c) AS (
    SELECT DISTINCT h.c FROM holder h
    WHERE (h.grp AND EXISTS (SELECT 1 FROM ucm u WHERE u.g = h.h AND u.id <> h.c))
       OR (NOT h.grp AND h.h <> h.c AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = h.h AND ${HAS_KIND('n', 'Computer')} AND ${UNPROTECTED('n')})))
${INSERT_PREFIX}
SELECT au.id, t.c, 'CoerceAndRelayNTLMToSMB', ${DERIVED_PROPS}, ?1, ?1, 1
FROM hit h CROSS JOIN target t ON t.c = h.c CROSS JOIN au ON au.sid = t.sid
${INSERT_SUFFIX}`

/** LDAP / LDAPS: the relayable domain controllers per domain SID, then the unprotected WebClient computers. */
const LDAP = `
WITH RECURSIVE ${FACTS},
  relay(sid, dc, kind) AS (
    SELECT json_extract(properties, '$.domainsid'), id, 'CoerceAndRelayNTLMToLDAP' FROM nodes
    WHERE kind = 'Computer' AND json_type(properties, '$.isdc') = 'true'
      AND json_type(properties, '$.ldapsigning') = 'false' AND json_type(properties, '$.ldapavailable') = 'true'
    UNION ALL
    SELECT json_extract(properties, '$.domainsid'), id, 'CoerceAndRelayNTLMToLDAPS' FROM nodes
    WHERE kind = 'Computer' AND json_type(properties, '$.isdc') = 'true'
      AND json_type(properties, '$.ldapsavailable') = 'true' AND json_type(properties, '$.ldapsepa') = 'false')
${INSERT_PREFIX}
SELECT au.id, c.id, k.kind, ${DERIVED_PROPS}, ?1, ?1, 1
FROM (SELECT DISTINCT sid, kind FROM relay) k CROSS JOIN au ON au.sid = k.sid
CROSS JOIN nodes c ON c.kind = 'Computer' AND c.environment_id = k.sid
WHERE json_extract(c.properties, '$.domainsid') = k.sid AND json_type(c.properties, '$.webclientrunning') = 'true'
  AND EXISTS (SELECT 1 FROM relay r WHERE r.sid = k.sid AND r.kind = k.kind AND r.dc <> c.id)
  AND ${UNPROTECTED('c')}
${INSERT_SUFFIX}`

/** ADCS (ESC8): ?2 = [[computer, domain], ...] from src/collectors/adcs.ts. */
const ADCS = `
WITH RECURSIVE ${FACTS}
${INSERT_PREFIX}
SELECT DISTINCT au.id, c.id, 'CoerceAndRelayNTLMToADCS', ${DERIVED_PROPS}, ?1, ?1, 1
FROM (SELECT json_extract(value, '$[0]') AS victim, json_extract(value, '$[1]') AS domain FROM json_each(?2)) v
CROSS JOIN nodes c ON c.id = v.victim
CROSS JOIN nodes d ON d.id = v.domain
CROSS JOIN au ON au.sid = json_extract(d.properties, '$.domainsid')
WHERE ${HAS_KIND('c', 'Computer')} AND ${UNPROTECTED('c')}
${INSERT_SUFFIX}`

/** Victim pairs per ADCS statement (D1: 100 KB per statement, SQL included). */
const PAIRS_PER_STATEMENT = 4_000

/** The NTLM relay statements of the post-processing batch. ?1 = now. */
export function ntlmStatements(db: D1Database, now: string, relayVictims: readonly Pair[]): D1PreparedStatement[] {
  const out = [db.prepare(SMB).bind(now), db.prepare(LDAP).bind(now)]
  for (let i = 0; i < relayVictims.length; i += PAIRS_PER_STATEMENT)
    out.push(db.prepare(ADCS).bind(now, JSON.stringify(relayVictims.slice(i, i + PAIRS_PER_STATEMENT))))
  return out
}
