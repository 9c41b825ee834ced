/**
 * Asset groups, their selectors and the members the last analysis run committed (migration 0020,
 * docs/asset-groups.md). Environment access is applied here: a restricted caller's member lists and
 * counts only hold nodes of its environments.
 */
import type { EnvironmentAccess } from '../auth/permissions'
import type { GroupRef, MemberRow } from './members'
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import { loadEnabledSeeds, pendingSeedStatements, type CypherRule } from './selectors.store'

export interface GroupRow {
  id: number
  name: string
  tag: string
  system_group: number
  created_at: string
  updated_at: string
  /** migration 0029 (asset group tag fields) */
  description: string
  created_by: string
  updated_by: string
}

export interface SelectorRow {
  id: number
  asset_group_id: number
  name: string
  selector: string
  system_selector: number
  created_at: string
  updated_at: string
}

export interface MemberOut {
  asset_group_id: number
  object_id: string
  primary_kind: string
  kinds: string
  environment_id: string | null
  environment_kind: string | null
  name: string | null
  custom_member: number
}

const accessJson = (a: EnvironmentAccess): string | null => (a.all ? null : JSON.stringify(a.ids))
/** `?N` is the caller's environment ids as JSON, or NULL for every environment */
const visible = (col: string, p: string) => `(${p} IS NULL OR ${col} IN (SELECT value FROM json_each(${p})))`

// ---- what an analysis run reads and writes -----------------------------------------------------------

/**
 * Every group (id, tag), per object id named by an enabled object-id selector the tags of its groups, and the
 * enabled Cypher rules (src/assetgroups/selectors.store.ts; the run evaluates them: src/assetgroups/rules.ts).
 */
export async function loadSelection(
  db: D1Database,
): Promise<{ groups: GroupRef[]; selectorTags: Map<string, string[]>; rules: CypherRule[]; objectSeeds: { selectorId: number; value: string }[] }> {
  const [{ results: groups }, seeds] = await Promise.all([
    db.prepare(`SELECT id, tag FROM asset_groups ORDER BY id`).all<GroupRef>(),
    loadEnabledSeeds(db),
  ])
  const selectorTags = new Map<string, string[]>()
  for (const r of seeds.objectSeeds) addTag(selectorTags, r.value, r.tag)
  return { groups, selectorTags, rules: seeds.rules, objectSeeds: seeds.objectSeeds }
}

/** Adds `tag` to the tags of `objectid` (once). */
export function addTag(m: Map<string, string[]>, objectid: string, tag: string): void {
  const list = m.get(objectid)
  if (!list) m.set(objectid, [tag])
  else if (!list.includes(tag)) list.push(tag)
}

/** Statements replacing every member by `rows`, for the run's commit batch (JSON chunks under D1's limits). */
export function replaceMembersStatements(db: D1Database, chunks: string[]): D1PreparedStatement[] {
  return [
    db.prepare(`DELETE FROM asset_group_members`),
    ...chunks.map((json) =>
      db
        .prepare(
          `INSERT OR IGNORE INTO asset_group_members (asset_group_id, objectid, custom_member)
           SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]') FROM json_each(?1) j
           -- a group deleted while the run was computing gets no members
           WHERE json_extract(j.value, '$[0]') IN (SELECT id FROM asset_groups)`,
        )
        .bind(json),
    ),
  ]
}
export type { MemberRow }

// ---- API reads and writes ------------------------------------------------------------------------------

export async function listGroups(db: D1Database, access: EnvironmentAccess, id?: number): Promise<(GroupRow & { member_count: number })[]> {
  const { results } = await db
    .prepare(
      `SELECT g.id, g.name, g.tag, g.system_group, g.created_at, g.updated_at, g.description, g.created_by, g.updated_by,
              (SELECT COUNT(*) FROM asset_group_members m JOIN nodes n ON n.objectid = m.objectid
               WHERE m.asset_group_id = g.id AND ${visible('n.environment_id', '?1')}) AS member_count
       FROM asset_groups g WHERE (?2 IS NULL OR g.id = ?2) ORDER BY g.id`,
    )
    .bind(accessJson(access), id ?? null)
    .all<GroupRow & { member_count: number }>()
  return results
}

/**
 * The older API's selectors: one per object-id seed of an enabled selector (its id is the seed's id, its name the
 * selector's). Cypher rules are not listed here (GET /api/v2/asset-group-tags/{id}/selectors lists everything).
 */
export async function listSelectors(db: D1Database, groupId?: number): Promise<SelectorRow[]> {
  const { results } = await db
    .prepare(`${LEGACY_SELECT} WHERE d.type = 1 AND s.disabled_at IS NULL AND (?1 IS NULL OR d.asset_group_id = ?1) ORDER BY d.id`)
    .bind(groupId ?? null)
    .all<SelectorRow>()
  return results
}

const LEGACY_SELECT = `SELECT d.id, d.asset_group_id, s.name, d.value AS selector, 0 AS system_selector, s.created_at, s.updated_at
  FROM asset_group_tag_selector_seeds d JOIN asset_group_tag_selectors s ON s.id = d.selector_id`

/** Creates a group with its audit row in the same batch (written only if the group was); null when the tag is taken. */
export async function createGroup(db: D1Database, name: string, tag: string, now: string, audit: AuditWrite): Promise<GroupRow | null> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO asset_groups (name, tag, system_group, created_at, updated_at) VALUES (?1, ?2, 0, ?3, ?3)
           ON CONFLICT (tag) DO NOTHING RETURNING *`,
        )
        .bind(name, tag, now),
    ],
    audit,
    // the new group's id in its entry (the history's asset_group_tag_id: src/assetgroups/history.store.ts)
    { ifChanged: 0, computed: { asset_group_tag_id: 'last_insert_rowid()' } },
  )
  return (r.results[0] as GroupRow | undefined) ?? null
}

/**
 * Renames a group (BloodHound's UpdateAssetGroup changes the name only; the tag, which members carry as a
 * system tag, stays). The audit row is written only if the group existed. Null when it does not.
 */
export async function renameGroup(db: D1Database, id: number, name: string, now: string, audit: AuditWrite): Promise<GroupRow | null> {
  const [r] = await auditedBatch(
    db,
    [db.prepare(`UPDATE asset_groups SET name = ?2, updated_at = ?3 WHERE id = ?1 RETURNING *`).bind(id, name, now)],
    audit,
    { ifChanged: 0 },
  )
  return (r.results[0] as GroupRow | undefined) ?? null
}

/**
 * Deletes a non-system group with its selectors and members, and its audit row, in one batch. The group row
 * goes last but one, guarded by `system_group = 0`, and the audit row only follows if it changed; the
 * selector and member deletes are guarded the same way, so a system group loses nothing even if called.
 * False when no such deletable group exists.
 */
export async function deleteGroup(db: D1Database, id: number, audit: AuditWrite): Promise<boolean> {
  const deletable = `(SELECT id FROM asset_groups WHERE id = ?1 AND system_group = 0)`
  const r = await auditedBatch(
    db,
    [
      // selectors of both APIs and their seeds (one store, migration 0022)
      db.prepare(`DELETE FROM asset_group_tag_selector_seeds WHERE asset_group_id IN ${deletable}`).bind(id),
      // which nodes its selectors picked (migration 0028)
      db
        .prepare(
          `DELETE FROM asset_group_tag_selector_nodes
           WHERE selector_id IN (SELECT id FROM asset_group_tag_selectors WHERE asset_group_id IN ${deletable})`,
        )
        .bind(id),
      db.prepare(`DELETE FROM asset_group_tag_selectors WHERE asset_group_id IN ${deletable}`).bind(id),
      db.prepare(`DELETE FROM asset_group_members WHERE asset_group_id IN ${deletable}`).bind(id),
      db.prepare(`DELETE FROM asset_groups WHERE id = ?1 AND system_group = 0`).bind(id),
    ],
    audit,
    { ifChanged: 4 },
  )
  return r[4].meta.changes > 0
}

export type MemberSortKey = 'object_id' | 'asset_group_id' | 'primary_kind' | 'environment_id' | 'environment_kind' | 'name'
export interface MemberQuery {
  groupId: number
  access: EnvironmentAccess
  /** filters by column: equal (`eq`) or not equal (`neq`) */
  filters: Partial<Record<MemberSortKey | 'custom_member', { op: 'eq' | 'neq'; value: string }>>
  sort: { key: MemberSortKey; desc: boolean }
  skip: number
  limit: number
}

const MEMBER_COLS: Record<MemberSortKey | 'custom_member', string> = {
  object_id: 'm.objectid',
  asset_group_id: 'm.asset_group_id',
  primary_kind: 'n.kind',
  environment_id: "coalesce(n.environment_id, '')",
  environment_kind: "coalesce(e.environment_kind, e.kind, '')",
  name: "coalesce(n.name, '')",
  custom_member: "CASE m.custom_member WHEN 1 THEN 'true' ELSE 'false' END",
}

/** The FROM / WHERE of the older API's member list and its counts: the group's members in the caller's environments, filtered. */
function membersFrom(q: Pick<MemberQuery, 'groupId' | 'access' | 'filters'>): { from: string; binds: unknown[] } {
  const binds: unknown[] = [q.groupId, accessJson(q.access)]
  const where = [`m.asset_group_id = ?1`, visible('n.environment_id', '?2')]
  for (const [k, v] of Object.entries(q.filters)) {
    if (v === undefined) continue
    binds.push(v.value)
    where.push(`${MEMBER_COLS[k as MemberSortKey]} ${v.op === 'neq' ? '<>' : '='} ?${binds.length}`)
  }
  const from = `FROM asset_group_members m JOIN nodes n ON n.objectid = m.objectid
                LEFT JOIN nodes e ON e.objectid = n.environment_id
                WHERE ${where.join(' AND ')}`
  return { from, binds }
}

/** BloodHound's ListAssetGroupMemberCountByKind: the members the list would show (same filters), counted per primary kind. */
export async function memberKindCounts(db: D1Database, q: Pick<MemberQuery, 'groupId' | 'access' | 'filters'>): Promise<Map<string, number>> {
  const { from, binds } = membersFrom(q)
  const { results } = await db.prepare(`SELECT n.kind AS kind, COUNT(*) AS n ${from} GROUP BY n.kind ORDER BY n.kind`).bind(...binds).all<{ kind: string; n: number }>()
  return new Map(results.map((r) => [r.kind, r.n]))
}

export async function listMembers(db: D1Database, q: MemberQuery): Promise<{ count: number; rows: MemberOut[] }> {
  const { from, binds } = membersFrom(q)
  const order = `${MEMBER_COLS[q.sort.key]} ${q.sort.desc ? 'DESC' : 'ASC'}, m.objectid ${q.sort.desc ? 'DESC' : 'ASC'}`
  const [count, page] = await db.batch([
    db.prepare(`SELECT COUNT(*) AS n ${from}`).bind(...binds),
    db
      .prepare(
        `SELECT m.asset_group_id, m.objectid AS object_id, n.kind AS primary_kind, n.kinds, n.environment_id,
                coalesce(e.environment_kind, e.kind) AS environment_kind, n.name, m.custom_member
         ${from} ORDER BY ${order} LIMIT ?${binds.length + 1} OFFSET ?${binds.length + 2}`,
      )
      .bind(...binds, q.limit, q.skip),
  ])
  return { count: (count.results[0] as { n: number }).n, rows: page.results as MemberOut[] }
}

export interface TagMemberRow {
  id: number
  object_id: string
  primary_kind: string
  name: string | null
  custom_member: number
}

const TAG_MEMBER_SORT = { node_id: 'n.id', node_object_id: 'm.objectid', node_name: "coalesce(n.name, '')" } as const
export type TagMemberSortKey = keyof typeof TAG_MEMBER_SORT

/**
 * A tag's members for BloodHound's GET /api/v2/asset-group-tags/{id}/members: the caller's environments only,
 * optionally narrowed to `environments` (ids); ties broken by node id.
 */
export async function listTagMembers(
  db: D1Database,
  q: {
    groupId: number
    access: EnvironmentAccess
    environments: string[] | null
    sort: { key: TagMemberSortKey; desc: boolean }
    skip: number
    limit: number
    /** BloodHound's member filters: one column's values ORed, columns ANDed */
    filters?: Partial<Record<'name' | 'object_id' | 'primary_kind', { op: 'eq' | 'neq' | 'contains'; value: string }[]>>
  },
): Promise<{ count: number; rows: TagMemberRow[] }> {
  const binds: unknown[] = [q.groupId, accessJson(q.access), q.environments ? JSON.stringify(q.environments) : null]
  const where = [`m.asset_group_id = ?1`, visible('n.environment_id', '?2'), visible('n.environment_id', '?3')]
  const cols = { name: "coalesce(n.name, '')", object_id: 'm.objectid', primary_kind: 'n.kind' } as const
  for (const [col, list] of Object.entries(q.filters ?? {}) as [keyof typeof cols, { op: 'eq' | 'neq' | 'contains'; value: string }[] | undefined][]) {
    if (!list || list.length === 0) continue
    const ors = list.map((f) => {
      binds.push(f.op === 'contains' ? f.value.toLowerCase() : f.value)
      const p = `?${binds.length}`
      return f.op === 'contains' ? `instr(lower(${cols[col]}), ${p}) > 0` : `${cols[col]} ${f.op === 'neq' ? '<>' : '='} ${p}`
    })
    where.push(`(${ors.join(' OR ')})`)
  }
  const from = `FROM asset_group_members m JOIN nodes n ON n.objectid = m.objectid WHERE ${where.join(' AND ')}`
  const dir = q.sort.desc ? 'DESC' : 'ASC'
  const [count, page] = await db.batch([
    db.prepare(`SELECT COUNT(*) AS n ${from}`).bind(...binds),
    db
      .prepare(
        `SELECT n.id, m.objectid AS object_id, n.kind AS primary_kind, n.name, m.custom_member ${from}
         ORDER BY ${TAG_MEMBER_SORT[q.sort.key]} ${dir}, n.id ${dir} LIMIT ?${binds.length + 1} OFFSET ?${binds.length + 2}`,
      )
      .bind(...binds, q.limit, q.skip),
  ])
  return { count: (count.results[0] as { n: number }).n, rows: page.results as TagMemberRow[] }
}

/** Which of `objectids` are nodes of the caller's environments. */
export async function visibleObjectIds(db: D1Database, objectids: string[], access: EnvironmentAccess): Promise<Set<string>> {
  const { results } = await db
    .prepare(`SELECT n.objectid FROM nodes n WHERE n.objectid IN (SELECT value FROM json_each(?1)) AND ${visible('n.environment_id', '?2')}`)
    .bind(JSON.stringify(objectids), accessJson(access))
    .all<{ objectid: string }>()
  return new Set(results.map((r) => r.objectid))
}

export interface SelectorChange {
  add: { name: string; selector: string }[]
  remove: string[]
}

/**
 * Applies the older API's selector additions and removals in one batch and answers the rows added and removed.
 * An addition creates a selector with one object-id seed, unless an enabled selector of the group already names
 * the object (then nothing changes); a removal deletes the group's object-id seeds of that object, and selectors
 * left without seeds. Selectors and seeds live in the tables of migration 0022 (one store for both APIs).
 */
export async function updateSelectors(
  db: D1Database,
  groupId: number,
  change: SelectorChange,
  now: string,
  actor: string,
  /** the request's audit row (and any further rows of the same request), written in the same batch */
  audit: AuditWrite,
  extra: D1PreparedStatement[] = [],
): Promise<{ added: SelectorRow[]; removed: SelectorRow[] }> {
  const removeJson = JSON.stringify(change.remove)
  const removed = db
    .prepare(`${LEGACY_SELECT} WHERE d.asset_group_id = ?1 AND d.type = 1 AND d.value IN (SELECT value FROM json_each(?2)) ORDER BY d.id`)
    .bind(groupId, removeJson)
  const removeSeeds = db
    .prepare(`DELETE FROM asset_group_tag_selector_seeds WHERE asset_group_id = ?1 AND type = 1 AND value IN (SELECT value FROM json_each(?2))`)
    .bind(groupId, removeJson)
  const removeEmpty = db
    .prepare(
      `DELETE FROM asset_group_tag_selectors WHERE asset_group_id = ?1
         AND NOT EXISTS (SELECT 1 FROM asset_group_tag_selector_seeds d WHERE d.selector_id = asset_group_tag_selectors.id)`,
    )
    .bind(groupId)
  const added = db
    .prepare(
      `INSERT INTO asset_group_tag_selectors (asset_group_id, name, created_at, created_by, updated_at, updated_by, pending_seeds)
       SELECT ?1, json_extract(j.value, '$.name'), ?3, ?4, ?3, ?4, json_array(json_object('type', 1, 'value', json_extract(j.value, '$.selector')))
       FROM json_each(?2) j
       WHERE NOT EXISTS (SELECT 1 FROM asset_group_tag_selector_seeds d JOIN asset_group_tag_selectors s ON s.id = d.selector_id
                         WHERE d.asset_group_id = ?1 AND d.type = 1 AND d.value = json_extract(j.value, '$.selector') AND s.disabled_at IS NULL)
       ORDER BY j.key
       RETURNING id, name, created_at, updated_at`,
    )
    .bind(groupId, JSON.stringify(change.add), now, actor)
  const touch = db.prepare(`UPDATE asset_groups SET updated_at = ?2 WHERE id = ?1`).bind(groupId, now)
  const [r, , , a, , seeds] = await auditedBatch(db, [removed, removeSeeds, removeEmpty, added, ...pendingSeedStatements(db), touch, ...extra], audit)
  const sel = new Map((a.results as { id: number; name: string; created_at: string; updated_at: string }[]).map((x) => [x.id, x]))
  const addedRows: SelectorRow[] = []
  for (const d of seeds.results as { id: number; selector_id: number; asset_group_id: number; value: string }[]) {
    const s = sel.get(d.selector_id)
    if (s) addedRows.push({ id: d.id, asset_group_id: d.asset_group_id, name: s.name, selector: d.value, system_selector: 0, created_at: s.created_at, updated_at: s.updated_at })
  }
  return { added: addedRows, removed: r.results as SelectorRow[] }
}

/**
 * A node column for graph reads (`n` = the nodes row): the tags of the groups whose selectors made the node a
 * member in the last analysis run, space-separated, or NULL. The Tier Zero and Owned rules
 * (src/assetgroups/tierzero.ts) take them as `selectedTags`, exactly as that run did.
 */
export const SELECTED_TAGS_COLUMN = `(SELECT group_concat(g.tag, ' ') FROM asset_group_members m JOIN asset_groups g ON g.id = m.asset_group_id
   WHERE m.objectid = n.objectid AND m.custom_member = 1) AS selected_tags`

// ---- BloodHound's asset group tags (POST/PATCH /api/v2/asset-group-tags…) -------------------------------

/**
 * A tag's name as BloodHound's kind `Tag_<name>` spells it (spaces as `_`): two tags whose kinds would be equal are
 * duplicates. Tags 1 and 2 answer as "Tier Zero" and "Owned" whatever their stored name.
 */
const TAG_KIND_NAME = `replace(CASE o.id WHEN 1 THEN 'Tier Zero' WHEN 2 THEN 'Owned' ELSE o.name END, ' ', '_')`

/**
 * Creates a tag (an asset group of type label) with its audit row in one batch. `tag` is the system tag its
 * members carry. Null when a tag of that name (as a kind) or that system tag exists: nothing written.
 */
export async function createTag(
  db: D1Database,
  t: { name: string; description: string; tag: string },
  actor: string,
  now: string,
  audit: AuditWrite,
): Promise<GroupRow | null> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO asset_groups (name, tag, system_group, created_at, updated_at, description, created_by, updated_by)
           SELECT ?1, ?2, 0, ?3, ?3, ?4, ?5, ?5
           WHERE NOT EXISTS (SELECT 1 FROM asset_groups o WHERE ${TAG_KIND_NAME} = replace(?1, ' ', '_'))
           ON CONFLICT (tag) DO NOTHING
           RETURNING id, name, tag, system_group, created_at, updated_at, description, created_by, updated_by`,
        )
        .bind(t.name, t.tag, now, t.description, actor),
    ],
    audit,
    // the new tag's id in its entry (the history's asset_group_tag_id: src/assetgroups/history.store.ts)
    { ifChanged: 0, computed: { asset_group_tag_id: 'last_insert_rowid()' } },
  )
  return (r.results[0] as GroupRow | undefined) ?? null
}

/**
 * Changes a tag's name and/or description (one batch with its audit row). The system tag its members carry does
 * not change (as for the older API's rename). 'duplicate' when another tag has that name (as a kind); null when
 * the tag no longer exists.
 */
export async function updateTag(
  db: D1Database,
  id: number,
  p: { name?: string; description?: string },
  actor: string,
  now: string,
  audit: AuditWrite,
): Promise<GroupRow | 'duplicate' | null> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `UPDATE asset_groups SET name = coalesce(?2, name), description = coalesce(?3, description), updated_at = ?4, updated_by = ?5
           WHERE id = ?1 AND (?2 IS NULL OR NOT EXISTS (SELECT 1 FROM asset_groups o WHERE o.id <> ?1 AND ${TAG_KIND_NAME} = replace(?2, ' ', '_')))
           RETURNING id, name, tag, system_group, created_at, updated_at, description, created_by, updated_by`,
        )
        .bind(id, p.name ?? null, p.description ?? null, now, actor),
    ],
    audit,
    { ifChanged: 0 },
  )
  const row = r.results[0] as GroupRow | undefined
  if (row) return row
  const exists = await db.prepare(`SELECT 1 AS x FROM asset_groups WHERE id = ?1`).bind(id).first()
  return exists ? 'duplicate' : null
}

/** Number of selectors per tag (BloodHound's counts.selectors). */
export async function selectorCountsByTag(db: D1Database): Promise<Map<number, number>> {
  const { results } = await db
    .prepare(`SELECT asset_group_id AS id, COUNT(*) AS n FROM asset_group_tag_selectors GROUP BY asset_group_id`)
    .all<{ id: number; n: number }>()
  return new Map(results.map((r) => [r.id, r.n]))
}

/** A tag's members in the caller's environments (optionally narrowed to `environments`), counted per primary kind. */
export async function tagMemberKindCounts(
  db: D1Database,
  q: { groupId: number; access: EnvironmentAccess; environments: string[] | null },
): Promise<Map<string, number>> {
  const { results } = await db
    .prepare(
      `SELECT n.kind AS kind, COUNT(*) AS n FROM asset_group_members m JOIN nodes n ON n.objectid = m.objectid
       WHERE m.asset_group_id = ?1 AND ${visible('n.environment_id', '?2')} AND ${visible('n.environment_id', '?3')}
       GROUP BY n.kind ORDER BY n.kind`,
    )
    .bind(q.groupId, accessJson(q.access), q.environments ? JSON.stringify(q.environments) : null)
    .all<{ kind: string; n: number }>()
  return new Map(results.map((r) => [r.kind, r.n]))
}

export interface NodeMemberRow {
  id: number
  object_id: string
  environment_id: string | null
  primary_kind: string
  name: string | null
  properties: string
}

/** A member of group `groupId` by its node id (BloodHound's member id), with the node's properties; null when it is not one. */
export async function tagMemberByNodeId(db: D1Database, groupId: number, nodeId: number): Promise<NodeMemberRow | null> {
  return db
    .prepare(
      `SELECT n.id, n.objectid AS object_id, n.environment_id, n.kind AS primary_kind, n.name, n.properties
       FROM nodes n JOIN asset_group_members m ON m.objectid = n.objectid AND m.asset_group_id = ?1 WHERE n.id = ?2`,
    )
    .bind(groupId, nodeId)
    .first<NodeMemberRow>()
}

/**
 * BloodHound's tag search over members: nodes that are members of one of `groupIds` and whose name or object id
 * contains `text` (case-insensitive), by name, at most `limit`; each with the first of those groups it is a member of.
 */
export async function searchTagMembers(
  db: D1Database,
  groupIds: number[],
  text: string,
  limit: number,
): Promise<(Omit<NodeMemberRow, 'properties'> & { asset_group_id: number })[]> {
  if (groupIds.length === 0) return []
  const { results } = await db
    .prepare(
      `SELECT n.id, n.objectid AS object_id, n.environment_id, n.kind AS primary_kind, n.name, MIN(m.asset_group_id) AS asset_group_id
       FROM asset_group_members m JOIN nodes n ON n.objectid = m.objectid
       WHERE m.asset_group_id IN (SELECT value FROM json_each(?1))
         AND (instr(lower(coalesce(n.name, '')), ?2) > 0 OR instr(lower(n.objectid), ?2) > 0)
       GROUP BY n.id ORDER BY coalesce(n.name, ''), n.id LIMIT ?3`,
    )
    .bind(JSON.stringify(groupIds), text.toLowerCase(), limit)
    .all<Omit<NodeMemberRow, 'properties'> & { asset_group_id: number }>()
  return results
}

/** One selector of the older API by its id (an object-id seed's id, as listSelectors answers it); null when absent. */
export async function getLegacySelector(db: D1Database, id: number): Promise<SelectorRow | null> {
  return db.prepare(`${LEGACY_SELECT} WHERE d.id = ?1 AND d.type = 1`).bind(id).first<SelectorRow>()
}

/** The last complete analysis run (id and commit time): the membership the members table holds is its. */
export async function lastCompleteRun(db: D1Database): Promise<{ id: number; completed_at: string } | null> {
  return db
    .prepare(`SELECT id, completed_at FROM analysis_runs WHERE status = 'complete' ORDER BY completed_at DESC, id DESC LIMIT 1`)
    .first<{ id: number; completed_at: string }>()
}

/** Every member of a group with its node's primary kind and properties (the entries of BloodHound's collection), by object id. */
export async function collectionEntries(db: D1Database, groupId: number): Promise<{ object_id: string; node_label: string; properties: string }[]> {
  const { results } = await db
    .prepare(
      `SELECT m.objectid AS object_id, n.kind AS node_label, n.properties FROM asset_group_members m JOIN nodes n ON n.objectid = m.objectid
       WHERE m.asset_group_id = ?1 ORDER BY m.objectid`,
    )
    .bind(groupId)
    .all<{ object_id: string; node_label: string; properties: string }>()
  return results
}

/** The nodes among `objectids` (a selector preview), by name then id, at most `limit`. */
export async function nodesByObjectIds(db: D1Database, objectids: string[], limit: number): Promise<Omit<NodeMemberRow, 'properties'>[]> {
  if (objectids.length === 0) return []
  const { results } = await db
    .prepare(
      `SELECT n.id, n.objectid AS object_id, n.environment_id, n.kind AS primary_kind, n.name FROM nodes n
       WHERE n.objectid IN (SELECT value FROM json_each(?1)) ORDER BY coalesce(n.name, ''), n.id LIMIT ?2`,
    )
    .bind(JSON.stringify([...new Set(objectids)]), limit)
    .all<Omit<NodeMemberRow, 'properties'>>()
  return results
}
