/**
 * Asset group tag selectors (BloodHound's privilege-zone rules; migration 0022, docs/asset-groups.md): the one
 * store of every selector — the object-id selectors of the older asset-groups API and the Cypher rules. A
 * selector's seeds are all of one type (1 = object id, 2 = Cypher).
 *
 * Writing a selector and its seeds in one batch without knowing the new id: the selector row carries its seeds
 * as JSON in `pending_seeds`; the same batch copies them into the seeds table and clears the column
 * ({@link pendingSeedStatements}), so no reader ever sees a selector without its seeds or a pending column set.
 */
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'

export const SEED_OBJECT_ID = 1
export const SEED_CYPHER = 2
export type SeedType = typeof SEED_OBJECT_ID | typeof SEED_CYPHER

export interface Seed {
  type: SeedType
  value: string
}

export interface TagSelectorRow {
  id: number
  asset_group_id: number
  name: string
  description: string
  created_at: string
  created_by: string
  updated_at: string
  updated_by: string
  disabled_at: string | null
  disabled_by: string | null
  is_default: number
  allow_disable: number
  auto_certify: number
  eval_at: string | null
  eval_members: number | null
  eval_error: string | null
}

export interface TagSelector extends TagSelectorRow {
  seeds: Seed[]
}

const COLS = `id, asset_group_id, name, description, created_at, created_by, updated_at, updated_by, disabled_at, disabled_by,
  is_default, allow_disable, auto_certify, eval_at, eval_members, eval_error`

/** Copies pending seeds into the seeds table (answering the rows written) and clears the column. */
export function pendingSeedStatements(db: D1Database): D1PreparedStatement[] {
  return [
    // seeds being replaced (an update that names seeds) go first
    db.prepare(
      `DELETE FROM asset_group_tag_selector_seeds
       WHERE selector_id IN (SELECT id FROM asset_group_tag_selectors WHERE pending_seeds IS NOT NULL)`,
    ),
    db.prepare(
      `INSERT INTO asset_group_tag_selector_seeds (selector_id, asset_group_id, type, value)
       SELECT s.id, s.asset_group_id, json_extract(j.value, '$.type'), json_extract(j.value, '$.value')
       FROM asset_group_tag_selectors s, json_each(s.pending_seeds) j
       WHERE s.pending_seeds IS NOT NULL ORDER BY s.id, j.key
       RETURNING id, selector_id, asset_group_id, type, value`,
    ),
    db.prepare(`UPDATE asset_group_tag_selectors SET pending_seeds = NULL WHERE pending_seeds IS NOT NULL`),
  ]
}

async function withSeeds(db: D1Database, rows: TagSelectorRow[]): Promise<TagSelector[]> {
  if (rows.length === 0) return []
  const { results } = await db
    .prepare(
      `SELECT selector_id, type, value FROM asset_group_tag_selector_seeds
       WHERE selector_id IN (SELECT value FROM json_each(?1)) ORDER BY id`,
    )
    .bind(JSON.stringify(rows.map((r) => r.id)))
    .all<{ selector_id: number; type: SeedType; value: string }>()
  const by = new Map<number, Seed[]>()
  for (const s of results) {
    const list = by.get(s.selector_id)
    if (list) list.push({ type: s.type, value: s.value })
    else by.set(s.selector_id, [{ type: s.type, value: s.value }])
  }
  return rows.map((r) => ({ ...r, seeds: by.get(r.id) ?? [] }))
}

/** Columns of BloodHound's selector filters (AssetGroupTagSelector.ValidFilters) and their SQL. */
export const SELECTOR_FILTER_COLUMNS = {
  name: 's.name',
  description: 's.description',
  created_at: 's.created_at',
  updated_at: 's.updated_at',
  disabled_at: 's.disabled_at',
  created_by: 's.created_by',
  updated_by: 's.updated_by',
  disabled_by: 's.disabled_by',
  auto_certify: 's.auto_certify',
  is_default: 's.is_default',
} as const
export type SelectorFilterColumn = keyof typeof SELECTOR_FILTER_COLUMNS
export type SelectorFilterOp = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains'
/** One filter; several are ANDed. Values are already normalised (times as RFC 3339 UTC with ms, booleans as 0/1). */
export interface SelectorFilter {
  column: SelectorFilterColumn
  op: SelectorFilterOp
  value: string | number
}
const SQL_OP: Record<Exclude<SelectorFilterOp, 'contains'>, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }

export interface SelectorListQuery {
  groupId: number
  skip: number
  limit: number
  /** only selectors whose seeds are of this type */
  type?: { op: 'eq' | 'neq'; value: SeedType }
  filters?: SelectorFilter[]
  sortDesc?: boolean
  sortKey?: 'id' | 'name' | 'created_at' | 'updated_at'
}

export async function listTagSelectors(db: D1Database, q: SelectorListQuery): Promise<{ count: number; rows: TagSelector[] }> {
  const binds: unknown[] = [q.groupId]
  const where = ['s.asset_group_id = ?1']
  if (q.type) {
    binds.push(q.type.value)
    where.push(`${q.type.op === 'neq' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM asset_group_tag_selector_seeds d WHERE d.selector_id = s.id AND d.type = ?${binds.length})`)
  }
  for (const f of q.filters ?? []) {
    const col = SELECTOR_FILTER_COLUMNS[f.column]
    binds.push(f.op === 'contains' ? String(f.value).toLowerCase() : f.value)
    // a NULL column (an enabled selector's disabled_at / disabled_by) matches no comparison, as in SQL
    where.push(f.op === 'contains' ? `instr(lower(${col}), ?${binds.length}) > 0` : `${col} ${SQL_OP[f.op]} ?${binds.length}`)
  }
  const key = q.sortKey ?? 'id'
  const dir = q.sortDesc ? 'DESC' : 'ASC'
  const from = `FROM asset_group_tag_selectors s WHERE ${where.join(' AND ')}`
  const [count, page] = await db.batch([
    db.prepare(`SELECT COUNT(*) AS n ${from}`).bind(...binds),
    db
      .prepare(`SELECT s.* ${from} ORDER BY s.${key} ${dir}, s.id ${dir} LIMIT ?${binds.length + 1} OFFSET ?${binds.length + 2}`)
      .bind(...binds, q.limit, q.skip),
  ])
  return { count: (count.results[0] as { n: number }).n, rows: await withSeeds(db, page.results as TagSelectorRow[]) }
}

export async function getTagSelector(db: D1Database, id: number): Promise<TagSelector | null> {
  const row = await db.prepare(`SELECT ${COLS} FROM asset_group_tag_selectors WHERE id = ?1`).bind(id).first<TagSelectorRow>()
  return row ? (await withSeeds(db, [row]))[0] : null
}

export interface NewSelector {
  name: string
  description: string
  autoCertify: number
  disabled: boolean
  seeds: Seed[]
}

/**
 * Creates a selector with its seeds and its audit row in one batch; null when the group already has a
 * selector of that name (nothing written, no success row).
 */
export async function createTagSelector(
  db: D1Database,
  groupId: number,
  s: NewSelector,
  actor: string,
  now: string,
  audit: AuditWrite,
): Promise<TagSelector | null> {
  const [ins, , seeds] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO asset_group_tag_selectors (asset_group_id, name, description, created_at, created_by, updated_at, updated_by,
             disabled_at, disabled_by, auto_certify, pending_seeds)
           SELECT ?1, ?2, ?3, ?4, ?5, ?4, ?5, CASE WHEN ?6 THEN ?4 END, CASE WHEN ?6 THEN ?5 END, ?7, ?8
           WHERE NOT EXISTS (SELECT 1 FROM asset_group_tag_selectors WHERE asset_group_id = ?1 AND name = ?2)
           RETURNING ${COLS}`,
        )
        .bind(groupId, s.name, s.description, now, actor, s.disabled ? 1 : 0, s.autoCertify, JSON.stringify(s.seeds)),
      ...pendingSeedStatements(db),
    ],
    audit,
    { ifChanged: 0 },
  )
  const row = ins.results[0] as TagSelectorRow | undefined
  if (!row) return null
  return { ...row, seeds: (seeds.results as { type: SeedType; value: string }[]).map((x) => ({ type: x.type, value: x.value })) }
}

export interface SelectorPatch {
  name?: string
  description?: string
  autoCertify?: number
  /** true: disable, false: enable */
  disabled?: boolean
  seeds?: Seed[]
}

/** Applies a patch (one batch with its audit row); 'duplicate' when the new name is taken in the group. */
export async function updateTagSelector(
  db: D1Database,
  current: TagSelectorRow,
  p: SelectorPatch,
  actor: string,
  now: string,
  audit: AuditWrite,
): Promise<TagSelector | 'duplicate'> {
  const disabledAt = p.disabled === undefined ? current.disabled_at : p.disabled ? (current.disabled_at ?? now) : null
  const disabledBy = p.disabled === undefined ? current.disabled_by : p.disabled ? (current.disabled_by ?? actor) : null
  const [upd] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `UPDATE asset_group_tag_selectors SET name = ?2, description = ?3, auto_certify = ?4, disabled_at = ?5, disabled_by = ?6,
             updated_at = ?7, updated_by = ?8, pending_seeds = ?9
           WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM asset_group_tag_selectors o WHERE o.asset_group_id = ?10 AND o.name = ?2 AND o.id <> ?1)
           RETURNING ${COLS}`,
        )
        .bind(
          current.id,
          p.name ?? current.name,
          p.description ?? current.description,
          p.autoCertify ?? current.auto_certify,
          disabledAt,
          disabledBy,
          now,
          actor,
          p.seeds ? JSON.stringify(p.seeds) : null,
          current.asset_group_id,
        ),
      ...pendingSeedStatements(db),
    ],
    audit,
    { ifChanged: 0 },
  )
  const row = upd.results[0] as TagSelectorRow | undefined
  if (!row) return 'duplicate'
  return (await withSeeds(db, [row]))[0]
}

/** Deletes a selector, its seeds and its recorded nodes (one batch with its audit row); false when it no longer exists. */
export async function deleteTagSelector(db: D1Database, id: number, audit: AuditWrite): Promise<boolean> {
  const [del] = await auditedBatch(
    db,
    [
      db.prepare(`DELETE FROM asset_group_tag_selectors WHERE id = ?1`).bind(id),
      db.prepare(`DELETE FROM asset_group_tag_selector_seeds WHERE selector_id = ?1`).bind(id),
      db.prepare(`DELETE FROM asset_group_tag_selector_nodes WHERE selector_id = ?1`).bind(id),
    ],
    audit,
    { ifChanged: 0 },
  )
  return del.meta.changes > 0
}

/** Names of a group's selectors (the CLI and tests upsert by name). */
export async function selectorIdByName(db: D1Database, groupId: number, name: string): Promise<number | null> {
  const r = await db.prepare(`SELECT id FROM asset_group_tag_selectors WHERE asset_group_id = ?1 AND name = ?2`).bind(groupId, name).first<{ id: number }>()
  return r?.id ?? null
}

// ---- what an analysis run reads and writes -----------------------------------------------------------

export interface CypherRule {
  selectorId: number
  /** the seed's id (a rule's kept selections belong to it: changing the Cypher replaces the seed) */
  seedId: number
  /** the tag of the rule's group (admin_tier_0 for Tier Zero) */
  tag: string
  cypher: string
}

/** The enabled selectors' seeds: object ids with their groups' tags, and the Cypher rules. */
export async function loadEnabledSeeds(db: D1Database): Promise<{ objectSeeds: { selectorId: number; value: string; tag: string }[]; rules: CypherRule[] }> {
  const { results } = await db
    .prepare(
      `SELECT d.id, d.selector_id, d.type, d.value, g.tag FROM asset_group_tag_selector_seeds d
       JOIN asset_group_tag_selectors s ON s.id = d.selector_id AND s.disabled_at IS NULL
       JOIN asset_groups g ON g.id = s.asset_group_id
       ORDER BY d.id`,
    )
    .all<{ id: number; selector_id: number; type: SeedType; value: string; tag: string }>()
  const objectSeeds: { selectorId: number; value: string; tag: string }[] = []
  const rules: CypherRule[] = []
  for (const r of results) {
    if (r.type === SEED_OBJECT_ID) objectSeeds.push({ selectorId: r.selector_id, value: r.value, tag: r.tag })
    else rules.push({ selectorId: r.selector_id, seedId: r.id, tag: r.tag, cypher: r.value })
  }
  return { objectSeeds, rules }
}

/** One Cypher seed's outcome in a run: [selector id, distinct nodes selected, error or null]. */
export type RuleOutcome = [number, number, string | null]

/**
 * Statements for the run's commit batch recording each enabled selector's evaluation: object-id selectors count
 * the seeds that are nodes of the graph; Cypher selectors take the run's outcome (several Cypher seeds of one
 * selector add up, the first error is kept). Disabled selectors have no evaluation.
 */
export function evaluationStatements(db: D1Database, now: string, outcomes: RuleOutcome[]): D1PreparedStatement[] {
  const merged = new Map<number, RuleOutcome>()
  for (const [id, n, err] of outcomes) {
    const m = merged.get(id)
    merged.set(id, m ? [id, m[1] + n, m[2] ?? err] : [id, n, err])
  }
  return [
    db.prepare(
      `UPDATE asset_group_tag_selectors SET eval_at = NULL, eval_members = NULL, eval_error = NULL
       WHERE disabled_at IS NOT NULL AND eval_at IS NOT NULL`,
    ),
    db
      .prepare(
        `UPDATE asset_group_tag_selectors SET eval_at = ?1, eval_error = NULL,
           eval_members = (SELECT COUNT(DISTINCT n.objectid) FROM asset_group_tag_selector_seeds d JOIN nodes n ON n.objectid = d.value
                           WHERE d.selector_id = asset_group_tag_selectors.id AND d.type = 1)
         WHERE disabled_at IS NULL
           AND EXISTS (SELECT 1 FROM asset_group_tag_selector_seeds d WHERE d.selector_id = asset_group_tag_selectors.id AND d.type = 1)`,
      )
      .bind(now),
    db
      .prepare(
        `UPDATE asset_group_tag_selectors SET eval_at = ?1, eval_members = json_extract(j.value, '$[1]'), eval_error = json_extract(j.value, '$[2]')
         FROM json_each(?2) j WHERE asset_group_tag_selectors.id = json_extract(j.value, '$[0]')`,
      )
      .bind(now, JSON.stringify([...merged.values()])),
  ]
}

// ---- Cypher rules per scope (migration 0037, src/assetgroups/rules.ts) -----------------------------------

/** The environments a rule is evaluated in, one by one: every environment that has nodes. */
export async function ruleEnvironments(db: D1Database): Promise<string[]> {
  const { results } = await db
    .prepare(`SELECT DISTINCT environment_id AS e FROM nodes WHERE environment_id IS NOT NULL ORDER BY environment_id`)
    .all<{ e: string }>()
  return results.map((r) => r.e)
}

/** The last good selection of a rule's seed in a scope (an environment id, or '' for the whole graph). */
export async function loadRuleSelection(db: D1Database, seedId: number, scope: string): Promise<string[]> {
  const { results } = await db
    .prepare(`SELECT objectid FROM asset_group_rule_selections WHERE seed_id = ?1 AND scope = ?2 ORDER BY objectid`)
    .bind(seedId, scope)
    .all<{ objectid: string }>()
  return results.map((r) => r.objectid)
}

/** One scope's evaluation in a run: [seed id, selector id, scope, nodes it adds in this run, error or null]. */
export type RuleScopeRow = [number, number, string, number, string | null]
/** A node of a scope's new last good selection: [seed id, scope, object id]. */
export type RuleSelectionRow = [number, string, string]

/** The Cypher seeds of enabled selectors (what ruleScopeStatements keeps rows for). */
const ENABLED_RULE_SEEDS = `SELECT d.id FROM asset_group_tag_selector_seeds d
  JOIN asset_group_tag_selectors s ON s.id = d.selector_id AND s.disabled_at IS NULL WHERE d.type = 2`

/**
 * Statements for the run's commit batch recording each scope's evaluation (from JSON chunks of the rows, split by
 * the caller): the scope's status (error, failing since, selection kept from), and for every scope that succeeded
 * its new last good selection. Rows of seeds no longer enabled (deleted, replaced, disabled selectors) and of
 * environments that no longer have nodes are dropped: a re-enabled rule starts afresh.
 */
export function ruleScopeStatements(db: D1Database, now: string, statusChunks: string[], selectionChunks: string[]): D1PreparedStatement[] {
  return [
    db.prepare(
      `DELETE FROM asset_group_rule_scopes WHERE seed_id NOT IN (${ENABLED_RULE_SEEDS})
         OR (scope <> '' AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.environment_id = asset_group_rule_scopes.scope))`,
    ),
    db.prepare(
      `DELETE FROM asset_group_rule_selections WHERE seed_id NOT IN (${ENABLED_RULE_SEEDS})
         OR (scope <> '' AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.environment_id = asset_group_rule_selections.scope))`,
    ),
    ...statusChunks.map((json) =>
      db
        .prepare(
          `INSERT INTO asset_group_rule_scopes (seed_id, selector_id, scope, evaluated_at, ok_at, error, failing_since, members)
           SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), ?1,
             CASE WHEN json_extract(j.value, '$[4]') IS NULL THEN ?1 END, json_extract(j.value, '$[4]'),
             CASE WHEN json_extract(j.value, '$[4]') IS NOT NULL THEN ?1 END, json_extract(j.value, '$[3]')
           FROM json_each(?2) j WHERE json_extract(j.value, '$[0]') IN (${ENABLED_RULE_SEEDS})
           ON CONFLICT (seed_id, scope) DO UPDATE SET evaluated_at = excluded.evaluated_at, error = excluded.error,
             members = excluded.members, selector_id = excluded.selector_id,
             ok_at = CASE WHEN excluded.error IS NULL THEN excluded.evaluated_at ELSE asset_group_rule_scopes.ok_at END,
             failing_since = CASE WHEN excluded.error IS NULL THEN NULL
                                  ELSE COALESCE(asset_group_rule_scopes.failing_since, excluded.evaluated_at) END`,
        )
        .bind(now, json),
    ),
    // every scope that succeeded: its selection is replaced (an empty answer replaces it by nothing); a failed one
    // keeps its rows
    ...statusChunks.map((json) =>
      db
        .prepare(
          `DELETE FROM asset_group_rule_selections WHERE EXISTS (SELECT 1 FROM json_each(?1) j
             WHERE json_extract(j.value, '$[4]') IS NULL AND json_extract(j.value, '$[0]') = asset_group_rule_selections.seed_id
               AND json_extract(j.value, '$[2]') = asset_group_rule_selections.scope)`,
        )
        .bind(json),
    ),
    ...selectionChunks.map((json) =>
      db
        .prepare(
          `INSERT OR IGNORE INTO asset_group_rule_selections (seed_id, scope, objectid)
           SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]') FROM json_each(?1) j
           WHERE json_extract(j.value, '$[0]') IN (${ENABLED_RULE_SEEDS})`,
        )
        .bind(json),
    ),
  ]
}

/** A rule's failing evaluation, as the selector and tag answers show it. */
export interface RuleFailure {
  selector_id: number
  /** the environment whose own evaluation failed; null: the whole-graph evaluation (patterns across environments) */
  environment_id: string | null
  error: string
  /** commit time of the first run of this series of failures */
  failing_since: string
  /** commit time of the run whose selection is kept (null: it never succeeded, it selects nothing) */
  kept_from: string | null
  /** nodes the kept selection adds in the last run */
  kept_members: number
}

interface FailureRow {
  selector_id: number
  scope: string
  error: string
  failing_since: string
  ok_at: string | null
  members: number
}

const toFailure = (r: FailureRow): RuleFailure => ({
  selector_id: r.selector_id,
  environment_id: r.scope === '' ? null : r.scope,
  error: r.error,
  failing_since: r.failing_since,
  kept_from: r.ok_at,
  kept_members: r.members,
})

/** Failing evaluations of the given selectors' current seeds (administrators: every scope). */
export async function selectorFailures(db: D1Database, selectorIds: number[]): Promise<Map<number, RuleFailure[]>> {
  const out = new Map<number, RuleFailure[]>()
  if (selectorIds.length === 0) return out
  const { results } = await db
    .prepare(
      `SELECT r.selector_id, r.scope, r.error, r.failing_since, r.ok_at, r.members FROM asset_group_rule_scopes r
       JOIN asset_group_tag_selector_seeds d ON d.id = r.seed_id AND d.selector_id = r.selector_id
       WHERE r.error IS NOT NULL AND r.selector_id IN (SELECT value FROM json_each(?1)) ORDER BY r.selector_id, r.scope, r.seed_id`,
    )
    .bind(JSON.stringify(selectorIds))
    .all<FailureRow>()
  for (const r of results) {
    const list = out.get(r.selector_id)
    if (list) list.push(toFailure(r))
    else out.set(r.selector_id, [toFailure(r)])
  }
  return out
}

/**
 * Failing evaluations of a tag's enabled rules that a reader of `access` is affected by: the evaluations of the
 * environments it reads (null: every environment, and the whole-graph evaluation too). A restricted reader never
 * learns that another environment's evaluation failed.
 */
export async function tagFailures(db: D1Database, groupIds: number[], access: string[] | null): Promise<Map<number, RuleFailure[]>> {
  const out = new Map<number, RuleFailure[]>()
  if (groupIds.length === 0) return out
  const { results } = await db
    .prepare(
      `SELECT s.asset_group_id AS group_id, r.selector_id, r.scope, r.error, r.failing_since, r.ok_at, r.members
       FROM asset_group_rule_scopes r JOIN asset_group_tag_selectors s ON s.id = r.selector_id AND s.disabled_at IS NULL
       JOIN asset_group_tag_selector_seeds d ON d.id = r.seed_id AND d.selector_id = r.selector_id
       WHERE r.error IS NOT NULL AND s.asset_group_id IN (SELECT value FROM json_each(?1))
         AND (?2 IS NULL OR r.scope IN (SELECT value FROM json_each(?2)))
       ORDER BY r.selector_id, r.scope, r.seed_id`,
    )
    .bind(JSON.stringify(groupIds), access ? JSON.stringify(access) : null)
    .all<FailureRow & { group_id: number }>()
  for (const r of results) {
    const list = out.get(r.group_id)
    if (list) list.push(toFailure(r))
    else out.set(r.group_id, [toFailure(r)])
  }
  return out
}

/** [selector id, object id]: a node a selector picked in a run (source 1, a seed). */
export type SelectorNodeRow = [number, string]

/**
 * Statements for the run's commit batch replacing the record of which nodes each selector picked
 * (migration 0028), from JSON chunks of {@link SelectorNodeRow}. A selector deleted while the run was
 * computing gets no rows. Object ids that are not nodes are kept (an object-id seed naming something not
 * ingested yet): readers join `nodes` and the tag's members, so they never show them.
 */
export function replaceSelectorNodesStatements(db: D1Database, chunks: string[]): D1PreparedStatement[] {
  return [
    db.prepare(`DELETE FROM asset_group_tag_selector_nodes`),
    ...chunks.map((json) =>
      db
        .prepare(
          `INSERT OR IGNORE INTO asset_group_tag_selector_nodes (selector_id, objectid, source)
           SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), 1 FROM json_each(?1) j
           WHERE json_extract(j.value, '$[0]') IN (SELECT id FROM asset_group_tag_selectors)`,
        )
        .bind(json),
    ),
  ]
}

export interface SelectorMemberRow {
  id: number
  object_id: string
  environment_id: string | null
  primary_kind: string
  name: string | null
  source: number
}

const SELECTOR_MEMBER_SORT = { id: 'n.id', object_id: 'n.objectid', name: "coalesce(n.name, '')" } as const
export type SelectorMemberSortKey = keyof typeof SELECTOR_MEMBER_SORT
export type MemberFilterOp = 'eq' | 'neq' | 'contains'
export interface SelectorMemberFilters {
  name?: { op: MemberFilterOp; value: string }[]
  object_id?: { op: MemberFilterOp; value: string }[]
  primary_kind?: { op: 'eq' | 'neq'; value: string }[]
}
const FILTER_COLS = { name: "coalesce(n.name, '')", object_id: 'n.objectid', primary_kind: 'n.kind' } as const

/**
 * The nodes a selector picked in the last complete run that are members of its tag (BloodHound counts only
 * nodes that actually carry the tag), in the caller's environments, optionally narrowed to `environments`.
 * Filters of one column are ORed (BloodHound sets FilterOr on this endpoint), columns are ANDed.
 */
export async function listSelectorMembers(
  db: D1Database,
  q: {
    selectorId: number
    groupId: number
    /** null: every environment; else the caller's environment ids */
    access: string[] | null
    environments: string[] | null
    filters: SelectorMemberFilters
    sort: { key: SelectorMemberSortKey; desc: boolean }
    skip: number
    limit: number
  },
): Promise<{ count: number; rows: SelectorMemberRow[] }> {
  const binds: unknown[] = [q.selectorId, q.groupId, q.access ? JSON.stringify(q.access) : null, q.environments ? JSON.stringify(q.environments) : null]
  const where = [
    'sn.selector_id = ?1',
    '(?3 IS NULL OR n.environment_id IN (SELECT value FROM json_each(?3)))',
    '(?4 IS NULL OR n.environment_id IN (SELECT value FROM json_each(?4)))',
  ]
  for (const [col, list] of Object.entries(q.filters) as [keyof SelectorMemberFilters, { op: MemberFilterOp; value: string }[] | undefined][]) {
    if (!list || list.length === 0) continue
    const ors = list.map((f) => {
      binds.push(f.op === 'contains' ? f.value.toLowerCase() : f.value)
      const p = `?${binds.length}`
      return f.op === 'contains' ? `instr(lower(${FILTER_COLS[col]}), ${p}) > 0` : `${FILTER_COLS[col]} ${f.op === 'neq' ? '<>' : '='} ${p}`
    })
    where.push(`(${ors.join(' OR ')})`)
  }
  const from = `FROM asset_group_tag_selector_nodes sn
                JOIN asset_group_members m ON m.asset_group_id = ?2 AND m.objectid = sn.objectid
                JOIN nodes n ON n.objectid = sn.objectid
                WHERE ${where.join(' AND ')}`
  const dir = q.sort.desc ? 'DESC' : 'ASC'
  const [count, page] = await db.batch([
    db.prepare(`SELECT COUNT(*) AS n ${from}`).bind(...binds),
    db
      .prepare(
        `SELECT n.id, n.objectid AS object_id, n.environment_id, n.kind AS primary_kind, n.name, sn.source ${from}
         ORDER BY ${SELECTOR_MEMBER_SORT[q.sort.key]} ${dir}, n.id ${dir} LIMIT ?${binds.length + 1} OFFSET ?${binds.length + 2}`,
      )
      .bind(...binds, q.limit, q.skip),
  ])
  return { count: (count.results[0] as { n: number }).n, rows: page.results as SelectorMemberRow[] }
}

/**
 * BloodHound's `counts.members` of a selector list: per selector, the nodes it picked in the last complete run that
 * are members of its tag, optionally in `environments` only. Selectors without rows are absent (0).
 */
export async function selectorMemberCounts(
  db: D1Database,
  groupId: number,
  selectorIds: number[],
  environments: string[] | null,
): Promise<Map<number, number>> {
  if (selectorIds.length === 0) return new Map()
  const { results } = await db
    .prepare(
      `SELECT sn.selector_id AS id, COUNT(*) AS n FROM asset_group_tag_selector_nodes sn
       JOIN asset_group_members m ON m.asset_group_id = ?1 AND m.objectid = sn.objectid
       JOIN nodes n ON n.objectid = sn.objectid
       WHERE sn.selector_id IN (SELECT value FROM json_each(?2))
         AND (?3 IS NULL OR n.environment_id IN (SELECT value FROM json_each(?3)))
       GROUP BY sn.selector_id`,
    )
    .bind(groupId, JSON.stringify(selectorIds), environments ? JSON.stringify(environments) : null)
    .all<{ id: number; n: number }>()
  return new Map(results.map((r) => [r.id, r.n]))
}

/**
 * BloodHound's member counts of a selector (GET …/selectors/{id}/members/counts): per primary kind, the nodes the
 * selector picked in the last complete run that are members of its tag (the nodes its member list shows),
 * in the caller's environments (`access`, null: every environment), optionally narrowed to `environments`.
 */
export async function selectorMemberKindCounts(
  db: D1Database,
  q: { selectorId: number; groupId: number; access: string[] | null; environments: string[] | null },
): Promise<Map<string, number>> {
  const { results } = await db
    .prepare(
      `SELECT n.kind AS kind, COUNT(*) AS n FROM asset_group_tag_selector_nodes sn
       JOIN asset_group_members m ON m.asset_group_id = ?2 AND m.objectid = sn.objectid
       JOIN nodes n ON n.objectid = sn.objectid
       WHERE sn.selector_id = ?1
         AND (?3 IS NULL OR n.environment_id IN (SELECT value FROM json_each(?3)))
         AND (?4 IS NULL OR n.environment_id IN (SELECT value FROM json_each(?4)))
       GROUP BY n.kind ORDER BY n.kind`,
    )
    .bind(q.selectorId, q.groupId, q.access ? JSON.stringify(q.access) : null, q.environments ? JSON.stringify(q.environments) : null)
    .all<{ kind: string; n: number }>()
  return new Map(results.map((r) => [r.kind, r.n]))
}

/** The selectors of `groupIds` whose name contains `text` (case-insensitive), by id, at most `limit` (BloodHound's tag search). */
export async function searchTagSelectors(db: D1Database, groupIds: number[], text: string, limit: number): Promise<TagSelector[]> {
  if (groupIds.length === 0) return []
  const { results } = await db
    .prepare(
      `SELECT ${COLS} FROM asset_group_tag_selectors
       WHERE asset_group_id IN (SELECT value FROM json_each(?1)) AND instr(lower(name), ?2) > 0 ORDER BY id LIMIT ?3`,
    )
    .bind(JSON.stringify(groupIds), text.toLowerCase(), limit)
    .all<TagSelectorRow>()
  return withSeeds(db, results)
}

/** The enabled selectors of group `groupId` that picked node `objectid` in the last complete run (member info). */
export async function selectorsOfMember(db: D1Database, groupId: number, objectid: string): Promise<TagSelector[]> {
  const { results } = await db
    .prepare(
      `SELECT ${COLS} FROM asset_group_tag_selectors s
       WHERE s.asset_group_id = ?1 AND s.disabled_at IS NULL
         AND EXISTS (SELECT 1 FROM asset_group_tag_selector_nodes sn WHERE sn.selector_id = s.id AND sn.objectid = ?2)
       ORDER BY s.id`,
    )
    .bind(groupId, objectid)
    .all<TagSelectorRow>()
  return withSeeds(db, results)
}
