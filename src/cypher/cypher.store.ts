/**
 * The graph as the Cypher engine reads it (GraphSource over D1). Environment access is applied in every
 * statement: `access` NULL sees everything, else a JSON array of environment ids; a node outside it is
 * never returned and no relationship leading to it is, so the engine can neither see nor traverse it.
 * Sets of ids travel as one JSON parameter (json_each), never as long IN lists.
 */
import { PRESENTED_KEYS, toNodeRecord, type NodeRow } from '../graph/present'
import { withoutProperties, type EdgeRecord, type FarNodeTest, type GoOn, type GraphSource, type NodeCountTest, type NodeRecord, type NodeScan, type OneHopPage, type OneHopScan, type ChainPage, type ChainScan, type PropertyTest, type Reach, type RelCondition, type ScanCondition, type ScanOrder } from './source'
import { chunks } from '../chunks'
import { NODE_COLUMNS, visible } from '../graph/graph.store'
import { KIND_PATTERN } from '../graph/kinds'
import { SELECTED_TAGS_COLUMN } from '../assetgroups/assetgroups.store'
import { TIER_ZERO_RID_SUFFIXES } from '../assetgroups/tierzero'

/** ids per statement (one JSON parameter of at most ~60 KB) */
const IDS_PER_STATEMENT = 5_000

interface EdgeRow {
  id: number
  start_id: number
  end_id: number
  kind: string
  properties?: string
  updated_at: string
}

/**
 * A relationship read with its properties, parsed on first use: most walked relationships are never looked
 * into. A class (the getter on its prototype), not a literal with its own getter and closure per record
 * (see source.ts withoutProperties: ~450 B more per record).
 */
class EdgeWithRawProperties implements EdgeRecord {
  private parsed: Record<string, unknown> | null = null
  readonly bytes: number
  constructor(
    readonly id: number,
    readonly start: number,
    readonly end: number,
    readonly kind: string,
    readonly updated_at: string,
    private readonly raw: string,
  ) {
    this.bytes = EDGE_BYTES + 2 * raw.length
  }
  get properties(): Record<string, unknown> {
    return (this.parsed ??= JSON.parse(this.raw) as Record<string, unknown>)
  }
}

function toEdge(r: EdgeRow): EdgeRecord {
  if (r.properties === undefined)
    return withoutProperties({ id: r.id, start: r.start_id, end: r.end_id, kind: r.kind, updated_at: r.updated_at, bytes: EDGE_BYTES })
  return new EdgeWithRawProperties(r.id, r.start_id, r.end_id, r.kind, r.updated_at, r.properties)
}

/** The asset-group tags of `n` selected by selectors and rules (the expression of SELECTED_TAGS_COLUMN). */
const SELECTED_TAGS = SELECTED_TAGS_COLUMN.replace(/\s+AS selected_tags\s*$/, '')

/**
 * The stored part of the Tier Zero superset (see conditionSql) on the nodes table's own columns: exactly the
 * WHERE of the partial index `nodes_tier_zero_hint` (migrations/0035_nodes_tier_zero_hint.sql). SQLite reads
 * `SELECT id FROM nodes WHERE <this>` from that index (a few entries) only when the two expressions are the
 * same, so they must stay identical (test/integration/cypher-tierzero-scan.test.ts checks the plan); were
 * they to differ, the answer would stay the same (the expression is still tested, over every node).
 */
export const TIER_ZERO_HINT = `kind IN ('Domain', 'AZTenant') OR instr(kinds, '"AZRole"') > 0 OR instr(kinds, '"Tag_Tier_Zero"') > 0
  OR substr(objectid, -4) IN ('-512', '-516', '-518', '-519', '-544')
  OR instr(properties, 'admin_tier_0') > 0 OR instr(lower(properties), 'istierzero') > 0`

/**
 * A range of an index that holds every value starting with a prefix: `objectid` by its unique index (binary),
 * `name` by nodes_name_nocase. With P the prefix (for NOCASE its ASCII capitals folded, as NOCASE folds them
 * and nothing else) and P' the same with its last character one higher, every value s starting with the
 * prefix compares P <= s < P' in the index's collation: s (folded) begins with P, and at P's last position
 * s has P's character, lower than P''s (were P''s last character a capital, NOCASE folds it higher still).
 * Only when that last character is printable ASCII (its successor is one character, never a surrogate). A
 * necessary condition added to the exact prefix test, never instead of it.
 */
interface PrefixRange {
  low: string
  high: string
}
export function prefixRange(column: 'objectid' | 'name', prefix: string): PrefixRange | null {
  if (prefix.length === 0) return null
  const last = prefix.charCodeAt(prefix.length - 1)
  if (last < 0x20 || last > 0x7e) return null
  const low = column === 'name' ? prefix.replace(/[A-Z]/g, (x) => x.toLowerCase()) : prefix
  return { low, high: low.slice(0, -1) + String.fromCharCode(low.charCodeAt(low.length - 1) + 1) }
}
const rangeColumn = (column: 'objectid' | 'name') => (column === 'name' ? 'n.name COLLATE NOCASE' : 'n.objectid')

/** The RID suffixes TIER_ZERO_HINT keeps every node of (src/assetgroups/tierzero.ts TIER_ZERO_RID_SUFFIXES). */
const RID_SUFFIXES: ReadonlySet<string> = new Set(TIER_ZERO_RID_SUFFIXES)

/**
 * SQL for a scan's necessary conditions (source.ts ScanCondition), parameters numbered from `first`.
 * Each is a superset of the engine's rule, written from src/assetgroups/tierzero.ts:
 *  - Tier Zero: a selector's admin_tier_0, system_tags with admin_tier_0 or the Tag_Tier_Zero kind, an
 *    isTierZero property, primary kind Domain / AZTenant, a Tier Zero RID suffix, or an AZRole (the engine
 *    then checks the AD kind, local principals and role templates); all but the selector read from the
 *    partial index nodes_tier_zero_hint (TIER_ZERO_HINT), the selectors from asset_group_members;
 *  - Owned: the Tag_Owned kind, `owned` anywhere in the properties, or a selector's owned tag.
 * Text conditions compare with substr / instr (exact, case-sensitive unless `anyCase`), never LIKE. The
 * `name` column is the `name` property as stored (ingest.store.ts), so a Cypher string test on it is exact.
 */
function conditionSql(
  conditions: ScanCondition[],
  first: number,
  access: string | null,
  ranges: ReadonlyMap<string, PrefixRange> = new Map(),
): { sql: string; params: (string | number | null)[]; indexed: boolean } {
  const parts: string[] = []
  const params: (string | number | null)[] = []
  /** whether a part reads a few nodes from an index of its own (the Tier Zero hint, a prefix range) */
  let indexed = false
  for (const c of conditions) {
    if (c.type === 'related') {
      // exactly the existence test of connected() with n as the near end (the engine checks it again)
      const k = `?${first + params.length}`
      params.push(c.kinds ? JSON.stringify(c.kinds) : null)
      // the access parameter only where the statement uses it (D1 refuses a binding it does not use)
      const a = `?${first + params.length}`
      if (access !== null) params.push(access)
      const sides: ['start_id' | 'end_id', 'start_id' | 'end_id'][] =
        c.direction === 'out' ? [['start_id', 'end_id']] : c.direction === 'in' ? [['end_id', 'start_id']] : [['start_id', 'end_id'], ['end_id', 'start_id']]
      const exists = sides
        .map(
          ([near, far]) =>
            `EXISTS (SELECT 1 FROM edges e ${access === null ? '' : `JOIN nodes v ON v.id = e.${far}`}
             WHERE e.${near} = n.id AND (${k} IS NULL OR e.kind IN (SELECT value FROM json_each(${k})))
             ${access === null ? '' : `AND ${visible('v.environment_id', a)}`})`,
        )
        .join(' OR ')
      parts.push(`${c.negated ? 'NOT ' : ''}(${exists})`)
    } else if (c.type === 'tierZero') {
      indexed = true
      // the stored part from the partial index (a few nodes, not a test of every node), the selectors' part
      // from asset_group_members (a tag containing admin_tier_0: group_concat joins tags with spaces, so the
      // old per-node test of the joined tags found it within one tag, exactly as this does)
      parts.push(`(n.id IN (SELECT t.id FROM nodes t WHERE ${TIER_ZERO_HINT})
        OR n.objectid IN (SELECT m.objectid FROM asset_group_members m JOIN asset_groups g ON g.id = m.asset_group_id
                          WHERE m.custom_member = 1 AND instr(g.tag, 'admin_tier_0') > 0))`)
    } else if (c.type === 'property') {
      parts.push(propertySql(c.test, (x) => (params.push(x), `?${first + params.length - 1}`)))
    } else if (c.type === 'owned')
      parts.push(`(instr(n.kinds, '"Tag_Owned"') > 0 OR instr(n.properties, 'owned') > 0 OR instr(coalesce(${SELECTED_TAGS}, ''), 'owned') > 0)`)
    else {
      const p = `?${first + params.length}`
      // ASCII letters only, as SQLite's lower() folds them (the column is the name property as stored)
      params.push(c.anyCase ? c.value.replace(/[A-Z]/g, (x) => x.toLowerCase()) : c.value)
      const col = c.anyCase ? `lower(n.${c.column})` : `n.${c.column}`
      parts.push(
        c.op === 'startsWith' ? `substr(${col}, 1, length(${p})) = ${p}` : c.op === 'endsWith' ? `substr(${col}, -length(${p})) = ${p}` : `instr(${col}, ${p}) > 0`,
      )
      // an object id ending with `…-512` (or another Tier Zero RID suffix) ends with that suffix, so the node
      // is in the partial index nodes_tier_zero_hint (TIER_ZERO_HINT tests substr(objectid, -4)): read from
      // there (a few nodes) instead of testing every node (`g.objectid ENDS WITH '-512'`)
      if (c.op === 'endsWith' && c.column === 'objectid' && !c.anyCase && RID_SUFFIXES.has(c.value.slice(-4))) {
        indexed = true
        parts.push(`n.id IN (SELECT t.id FROM nodes t WHERE ${TIER_ZERO_HINT})`)
      }
      // a selective STARTS WITH (see scanNodes): also the index range holding every value with the prefix
      const range = c.op === 'startsWith' && !c.anyCase ? ranges.get(`${c.column}|${c.value}`) : undefined
      if (range) {
        indexed = true
        const lo = `?${first + params.length}`
        params.push(range.low)
        const hi = `?${first + params.length}`
        params.push(range.high)
        parts.push(`${rangeColumn(c.column)} >= ${lo} AND ${rangeColumn(c.column)} < ${hi}`)
      }
    }
  }
  return { sql: parts.map((x) => `AND ${x}`).join('\n'), params, indexed }
}

/**
 * Node `v` carries one of the kinds of the JSON list `p`: its primary kind (the `kind` column, one of its
 * kinds), else its stored kinds (json_each, as hasLabel's includes), as scanSql keeps a node.
 */
function kindsSql(v: string, p: string): string {
  return `(${v}.kind IN (SELECT value FROM json_each(${p})) OR EXISTS (SELECT 1 FROM json_each(${v}.kinds) k WHERE k.value IN (SELECT value FROM json_each(${p}))))`
}

/** A property key written into a JSON path as is (anything else is not pushed down: counts.ts). */
export const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/

/** the integers JavaScript holds exactly (beyond them JSON.parse rounds, SQLite does not) */
const SAFE_INTEGERS = 'BETWEEN -9007199254740991 AND 9007199254740991'

/**
 * SQL that is true for node `n` whenever the engine's test can be (source.ts PropertyTest), from the stored
 * properties JSON: json_type gives the JSON type ('true', 'false', 'null', 'integer', 'real', 'text', …; SQL
 * NULL for a missing key), json_extract the value (a boolean as 1 / 0, so booleans are told by json_type, never
 * by value). Cypher's `=` and `<` hold only between values of one type (eval.ts equals / compare: 1 is not true
 * nor '1'), so each test first asks for the JSON type:
 *  - a string: type 'text' and the text equal (SQLite's binary comparison: exact for strings without
 *    surrogates, plan.ts plainString); prefix / suffix / substring with substr / instr (character counts,
 *    exact, never LIKE);
 *  - a number: an 'integer' within JavaScript's exact range compared as SQL numbers (exact); any 'real' or a
 *    larger integer is kept (JSON.parse and SQLite may read its digits a unit apart; the engine decides);
 *  - a boolean: the type 'true' / 'false'.
 * Parameters come from `param` (strings and numbers only); the key is part of the SQL text, so it must be
 * PLAIN_KEY (else every node is kept).
 */
export function propertySql(t: PropertyTest, param: (x: string | number) => string): string {
  if (t.op === 'and' || t.op === 'or') return `(${t.tests.map((x) => propertySql(x, param)).join(t.op === 'and' ? ' AND ' : ' OR ')})`
  return leafSql(t as Exclude<PropertyTest, { op: 'and' | 'or' }>, param)
}

function leafSql(t: Exclude<PropertyTest, { op: 'and' | 'or' }>, param: (x: string | number) => string): string {
  if (!PLAIN_KEY.test(t.key)) return '1'
  const type = `json_type(n.properties, '$.${t.key}')`
  const value = `json_extract(n.properties, '$.${t.key}')`
  const number = (test: string) => `(${type} = 'real' OR (${type} = 'integer' AND (${value} NOT ${SAFE_INTEGERS} OR ${value} ${test})))`
  const one = (x: string | number | boolean) =>
    typeof x === 'boolean' ? `${type} = '${x}'` : typeof x === 'string' ? `(${type} = 'text' AND ${value} = ${param(x)})` : number(`= ${param(x)}`)
  switch (t.op) {
    case 'eq':
      return one(t.value)
    case 'cmp':
      return number(`${t.cmp} ${param(t.value)}`)
    case 'in': {
      if (t.values.length === 0) return '0'
      const texts = t.values.filter((x) => typeof x === 'string')
      const numbers = t.values.filter((x) => typeof x === 'number')
      const bools = [...new Set(t.values.filter((x) => typeof x === 'boolean'))]
      const out = bools.map((b) => `${type} = '${b}'`)
      if (texts.length) out.push(`(${type} = 'text' AND ${value} IN (SELECT value FROM json_each(${param(JSON.stringify(texts))})))`)
      // integral numbers only (their JSON digits are exact); another number never equals an integer in range
      const integral = numbers.filter((x) => Number.isSafeInteger(x))
      if (numbers.length) out.push(number(`IN (SELECT value FROM json_each(${param(JSON.stringify(integral))}))`))
      return `(${out.join(' OR ')})`
    }
    case 'isNull':
      return `coalesce(${type}, 'null') = 'null'`
    case 'isNotNull':
      return `${type} <> 'null'`
    case 'truthy':
      return `${type} NOT IN ('false', 'null')`
    case 'falsy':
      return `${type} NOT IN ('true', 'null')`
    case 'startsWith':
    case 'endsWith':
    case 'contains': {
      const p = param(t.value)
      return `(${type} = 'text' AND ${t.op === 'startsWith' ? `substr(${value}, 1, length(${p})) = ${p}` : t.op === 'endsWith' ? `substr(${value}, -length(${p})) = ${p}` : `instr(${value}, ${p}) > 0`})`
    }
  }
}

/**
 * SQL tests on node `v` that hold exactly when the engine's would (source.ts FarNodeTest): a label is one of
 * its stored kinds (json_each over the kinds array, as hasLabel's includes); `objectid` is the column (as
 * nodeProperty); another key is the stored property, whose JSON type must be a string (a number, list or
 * map is never equal to a string in Cypher) or the boolean itself.
 */
function farNodeSql(far: FarNodeTest, v: string, param: (x: string) => string): string[] {
  const out: string[] = []
  for (const any of far.kinds) out.push(`EXISTS (SELECT 1 FROM json_each(${v}.kinds) k WHERE k.value IN (SELECT value FROM json_each(${param(JSON.stringify(any))})))`)
  for (const { key, value } of far.properties) {
    if (key === 'objectid') {
      out.push(typeof value === 'string' ? `${v}.objectid = ${param(value)}` : '0')
      continue
    }
    if (!PLAIN_KEY.test(key)) throw new Error(`property key ${JSON.stringify(key)} is not pushed down`)
    const path = param(`$.${key}`)
    out.push(typeof value === 'string' ? `json_type(${v}.properties, ${path}) = 'text' AND json_extract(${v}.properties, ${path}) = ${param(value)}` : `json_type(${v}.properties, ${path}) = '${value ? 'true' : 'false'}'`)
  }
  return out
}

/**
 * D1 refuses a statement with more than 100 bound parameters or an expression tree deeper than 100 (an
 * AND chain of ~90 terms), and SQLite a function call of more than 127 arguments: a query with many
 * conditions or property reads would get a 500. So the store applies at most this many of a scan's or a
 * walk's necessary conditions (they are only ever a superset the engine narrows: dropping some returns more
 * records, never a different answer), and reads at most this many properties one by one (more: the whole
 * properties object, a superset of what the query reads).
 */
const MAX_SCAN_CONDITIONS = 8
const MAX_REL_CONDITIONS = 8
const MAX_NODE_KEYS = 48

/**
 * A walk's relationship conditions on `e` as the store applies them (expand, expandLevel, oneHop): at most
 * MAX_REL_CONDITIONS, each `json_extract(e.properties, '$."key"') = value` with key and value bound (keys are
 * letters, digits and _ only, checked here: they are part of a bound JSON path, never SQL text); `r.isacl` from its
 * index when `aclIndexed` (ACL_TRUE_SQL below).
 */
function relConditionSql(where: RelCondition[], param: (x: string | number) => string, aclIndexed = false): { conds: RelCondition[]; sql: string } {
  const conds = where.filter((c) => /^[A-Za-z0-9_]+$/.test(c.key)).slice(0, MAX_REL_CONDITIONS)
  const sql = conds
    .map((c) =>
      aclIndexed && aclTrue(c)
        ? `AND ${ACL_TRUE_SQL}`
        : `AND json_extract(e.properties, ${param(`$."${c.key}"`)}) = ${param(typeof c.value === 'boolean' ? (c.value ? 1 : 0) : c.value)}`,
    )
    .join(' ')
  return { conds, sql }
}

/**
 * `r.isacl` / `r.isacl = true` from the partial index of migration 0050 (edges_acl_start, led by the start node):
 * the condition written exactly as its WHERE, a literal (a bound key or value rules a partial index out). It is
 * `= 1` narrowed to a stored true, so the store writes it only while no relationship holds isacl as a number
 * (edges_acl_numeric, asked once per query: d1GraphSource's aclIndexed); with one, `= 1` as before, so that the engine still
 * sees a stored 1 (and stops with its type error on `WHERE r.isacl`).
 */
const ACL_KEY = 'isacl'
const ACL_TRUE_SQL = `json_type(e.properties, '$.${ACL_KEY}') = 'true'`
const aclTrue = (c: RelCondition): boolean => c.key === ACL_KEY && c.value === true

/** Rough heap cost of one relationship record and its cache entries (object, strings, map slots). */
const EDGE_BYTES = 200

/**
 * The node columns a source reads: all of them, or (`nodeKeys`, needs.ts nodePropertyKeys) only what a query
 * that never needs a whole node can read — the id, the kinds (label tests), the object id when it is asked
 * for, and the listed properties as one JSON object (`->` keeps each value's JSON type; a missing key reads
 * as null, as nodeProperty gives it). Such a query never presents a node and never applies the Tier Zero /
 * Owned rule (needs.ts), the only readers of the other fields, which are left blank (kind, name,
 * environment, time, asset-group tags): a 22,500-computer scan then moves a third of the bytes.
 */
/** NODE_COLUMNS before and after its `n.properties` (a presented node's columns put the listed properties there) */
const NODE_COLUMNS_AROUND_PROPERTIES = NODE_COLUMNS.split('n.properties')
if (NODE_COLUMNS_AROUND_PROPERTIES.length !== 2) throw new Error('NODE_COLUMNS must name n.properties once')

function nodeColumns(nodeKeys: string[] | null, presented: boolean): string {
  if (nodeKeys === null) return NODE_COLUMNS
  for (const k of nodeKeys) if (!PLAIN_KEY.test(k)) throw new Error(`property key ${JSON.stringify(k)} is not read on its own`)
  const object = (keys: readonly string[]) => `json_object(${keys.map((k) => `'${k}', n.properties -> '$.${k}'`).join(', ')})`
  if (presented) {
    // every column, as NODE_COLUMNS, with the query's properties (a missing one as null, as nodeProperty reads it)
    // and PRESENTED_KEYS: those only presented are merged in by json_patch, which leaves out the missing ones (null)
    // — most nodes have none of them (`{}` instead of ~90 bytes of nulls); json_patch also drops null members of an
    // object value, which presenting cannot tell apart (it only asks whether a value is true, a string or tags)
    const only = PRESENTED_KEYS.filter((k) => !nodeKeys.includes(k))
    const props = nodeKeys.length + only.length > MAX_NODE_KEYS ? 'n.properties' : `json_patch(${nodeKeys.length ? object(nodeKeys) : `'{}'`}, ${object(only)})`
    return NODE_COLUMNS_AROUND_PROPERTIES.join(`${props} AS properties`)
  }
  const props = nodeKeys.length > MAX_NODE_KEYS ? 'n.properties' : nodeKeys.length ? object(nodeKeys) : `'{}'`
  return `n.id, ${nodeKeys.includes('objectid') ? 'n.objectid' : 'NULL AS objectid'}, n.kinds, ${props} AS properties`
}

function toPartialNode(r: { id: number; objectid: string | null; kinds: string; properties: string }): NodeRecord {
  return { id: r.id, objectid: r.objectid ?? '', kind: '', kinds: JSON.parse(r.kinds) as string[], name: null, environment_id: null, properties: JSON.parse(r.properties) as Record<string, unknown>, updated_at: '' }
}

/**
 * The label scan's statement (d1GraphSource scanNodes): ?1 after, ?2 kinds (JSON or NULL), ?3 objectid, ?4 name,
 * ?5 access, ?6 limit, ?7… conditions. One statement for each kind of caller, so that each is planned for its own
 * case (the shared form `(?5 IS NULL OR … IN …)`, graph.store.ts visible, kept SQLite from the index nodes_env and
 * walked every node of the graph in id order, filtering the environment afterwards: a rule evaluated per
 * environment read the whole table once per environment, src/assetgroups/rules.ts):
 *  - `index`, a restricted caller: `n.environment_id IN (json_each(?5))` read from nodes_env, a range per
 *    environment (the caller's nodes only, then sorted by id);
 *  - `filter`, a restricted caller whose conditions read a few nodes from an index of their own (the Tier Zero
 *    hint, a prefix range: conditionSql `indexed`): the environment is tested on those nodes (`+` keeps SQLite from
 *    choosing nodes_env instead, which would read every node of the environment);
 *  - `all`, an unrestricted caller: the primary key from ?1 in id order, stopping at the page's end. It tests ?5
 *    against itself (always true for the bound NO_ACCESS) only so that every form binds the same parameters: D1
 *    refuses a bound parameter a statement does not use.
 * test/integration/cypher-scan-plans.test.ts checks each plan.
 */
export function scanSql(columns: string, access: 'index' | 'filter' | 'all', prefilter: string, conditions: string, order: ScanOrder | null = null): string {
  const visibleSql = access === 'index' ? 'n.environment_id IN (SELECT value FROM json_each(?5))' : access === 'filter' ? '+n.environment_id IN (SELECT value FROM json_each(?5))' : '?5 = ?5'
  const sorted = order ? orderSql(order) : null
  return `SELECT ${columns}${sorted ? `, ${sorted.unorderable} AS unorderable` : ''} FROM nodes n
           WHERE ${sorted ? '1' : 'n.id > ?1'}
             AND (?2 IS NULL OR n.kind IN (SELECT value FROM json_each(?2))
                  OR (${prefilter}EXISTS (SELECT 1 FROM json_each(n.kinds) k WHERE k.value IN (SELECT value FROM json_each(?2)))))
             AND (?3 IS NULL OR n.objectid = ?3)
             AND (?4 IS NULL OR (n.name = ?4 COLLATE NOCASE AND n.name = ?4))
             AND ${visibleSql}
             ${conditions}
           ${sorted ? `ORDER BY unorderable DESC, ${sorted.keys}, n.id LIMIT ?6 OFFSET ?1` : 'ORDER BY n.id LIMIT ?6'}`
}

/**
 * ORDER BY of an ordered scan (topk.ts has the reasoning): per key its type rank as values.ts orderCompare
 * ranks them (a string, a boolean, a number, null or missing last), then its value (a boolean as 0 / 1), both
 * reversed for DESC; the caller adds the id. `unorderable`: 1 for a node holding a value the store cannot
 * order as JavaScript does (a list or map, a real, an integer beyond 2^53, a string with a byte from 0xEE up:
 * the UTF-8 lead bytes of U+E000 and above), sorted first so that the first page shows it.
 */
function orderSql(order: ScanOrder): { keys: string; unorderable: string } {
  const keys: string[] = []
  const flags: string[] = []
  for (const { key, descending } of order.keys) {
    if (!PLAIN_KEY.test(key)) throw new Error(`property key ${JSON.stringify(key)} is not ordered by the store`)
    const column = key === 'objectid'
    const type = column ? `'text'` : `json_type(n.properties, '$.${key}')`
    const value = column ? 'n.objectid' : `json_extract(n.properties, '$.${key}')`
    const dir = descending ? ' DESC' : ''
    keys.push(`${rankSql(type)}${dir}`, `${value}${dir}`)
    const high = ['EE', 'EF', 'F0', 'F1', 'F2', 'F3', 'F4'].map((b) => `instr(CAST(${value} AS BLOB), X'${b}') > 0`).join(' OR ')
    flags.push(
      column
        ? `(${high})`
        : `CASE ${type} WHEN 'text' THEN (${high}) WHEN 'integer' THEN ${value} NOT ${SAFE_INTEGERS} WHEN 'real' THEN 1 WHEN 'object' THEN 1 WHEN 'array' THEN 1 ELSE 0 END`,
    )
  }
  return { keys: keys.join(', '), unorderable: `(${flags.join(' OR ')})` }
}
/**
 * ORDER BY's type rank of a key (values.ts orderCompare): a string 0, a boolean 1, a number 2, null or missing 3;
 * a map or list 4 (unorderable: such a node never reaches the engine in the store's order). Migration 0049's
 * order indexes hold this very expression (ORDER_INDEXED).
 */
function rankSql(type: string): string {
  return `CASE ${type} WHEN 'text' THEN 0 WHEN 'true' THEN 1 WHEN 'false' THEN 1 WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'object' THEN 4 WHEN 'array' THEN 4 ELSE 3 END`
}

/**
 * The properties with an order index (migration 0049: (kind, rankSql, json_extract)): ORDER BY one of them over
 * a label that is a primary kind walks that index in order (scanOrdered) instead of sorting every node.
 */
export const ORDER_INDEXED: ReadonlySet<string> = new Set(['pwdlastset'])

/** What an unrestricted scan binds as ?5 (see scanSql). */
const NO_ACCESS = '*'

/**
 * The WHERE of countNodes and distinctValues (nodecount.ts): exact tests only. A kind is tested on the stored
 * kinds array itself (json_each, as hasLabel's includes; never the `kind` column, which the scan uses as a
 * shortcut), after instr() rules out nodes whose kinds text cannot hold it (as scanNodes does). A restricted
 * caller's nodes are read from nodes_env (the environment IN its list), an unrestricted caller's from the whole
 * table.
 */
function exactWhere(test: NodeCountTest, access: string | null, param: (x: string | number) => string): string {
  const parts = exactConditions(test, access, param)
  return parts.length ? ` WHERE ${parts.join(' AND ')}` : ''
}

/**
 * A necessary condition of Cypher's `a.ka <> b.kb` being true (onehop.ts wherePushdown), on the stored JSON of
 * nodes `a` and `b` (keys PLAIN_KEY, checked by the caller). The engine reads a missing key or a JSON null as
 * null (labels.ts nodeProperty), and `null <> x` is null: the row is dropped, so both must be stored and not
 * null. Two values are equal in Cypher when they have the same type and value; SQL's json_extract maps `true`
 * and `1` (and `false` and `0`) to the same 1 (0) while `true <> 1` is true in Cypher, so a row is dropped only
 * when both json_type and json_extract agree, and only for types whose equal extracts are equal Cypher values:
 * text (the same string), integer (the same 64-bit integer, hence the same JS number), true / false, and array
 * / object (json_extract gives their JSON text: the same text parses to the same list or map, whose Cypher
 * equality is true, or null when it holds a null: `<>` is then null as well, dropped either way). Reals are
 * kept whatever their values (SQLite's and JavaScript's parsing of the text might differ in the last bit), and
 * so are values of different types (an integer and a real that are equal numbers included): the engine decides.
 */
function differSql(a: string, ka: string, b: string, kb: string): string {
  const ta = `json_type(${a}.properties, '$.${ka}')`
  const tb = `json_type(${b}.properties, '$.${kb}')`
  return `(${ta} <> 'null' AND ${tb} <> 'null' AND NOT (${ta} = ${tb} AND ${ta} IN ('text', 'integer', 'true', 'false', 'array', 'object') AND json_extract(${a}.properties, '$.${ka}') = json_extract(${b}.properties, '$.${kb}')))`
}

/** exactWhere's conditions on node `n`, one by one. */
function exactConditions(test: NodeCountTest, access: string | null, param: (x: string | number) => string, envIndex = true, v = 'n'): string[] {
  // property tests are written on `n` (propertySql): only kinds, object id and access on another alias
  if (v !== 'n' && test.tests.length) throw new Error('property tests are written on n')
  const parts: string[] = []
  if (access !== null) parts.push(`${envIndex ? '' : '+'}${v}.environment_id IN (SELECT value FROM json_each(${param(access)}))`)
  for (const any of test.kinds) parts.push(...kindTest(any, param, v))
  if (test.objectid !== null) parts.push(`${v}.objectid = ${param(test.objectid)}`)
  for (const t of test.tests) parts.push(propertySql(t, param))
  return parts
}

/** node `v` carries one of the kinds `any` (stored kinds, json_each; instr first rules out most nodes) */
function kindTest(any: string[], param: (x: string | number) => string, v = 'n'): string[] {
  const parts: string[] = []
  if (any.length <= 32 && any.every((k) => KIND_PATTERN.test(k))) parts.push(`(${any.map((k) => `instr(${v}.kinds, ${param(JSON.stringify(k))}) > 0`).join(' OR ')})`)
  parts.push(`EXISTS (SELECT 1 FROM json_each(${v}.kinds) k WHERE k.value IN (SELECT value FROM json_each(${param(JSON.stringify(any))})))`)
  return parts
}

/**
 * The partial index nodes_kinds_extra's condition (migration 0048), written as its WHERE so that SQLite reads
 * the index: the nodes whose stored kinds are not exactly [kind], [kind, "Base"] or [kind, "AZBase"].
 */
const KINDS_EXTRA = (v: string) => `NOT (${v}.kinds = json_array(${v}.kind) OR ${v}.kinds = json_array(${v}.kind, 'Base') OR ${v}.kinds = json_array(${v}.kind, 'AZBase'))`

/**
 * exactWhere's nodes as one or two disjoint WHEREs on `n` whose union is exactly those nodes, so that a count or a
 * GROUP BY reads an index on the primary kind (issue 28: nodes_kind_env, and migration 0048's property indexes on
 * (kind, json_type, json_extract, environment) of the common properties) instead of every node's kinds array.
 * Why it is exact: a node outside nodes_kinds_extra has stored kinds equal (as JSON text, json_array's) to [kind],
 * [kind, "Base"] or [kind, "AZBase"], so for a set S of kinds holding neither Base nor AZBase it carries one of S
 * exactly when its `kind` is in S. So the nodes carrying one of S are (1) those whose kind is in S and which are
 * not in nodes_kinds_extra, and (2) those in nodes_kinds_extra whose kinds array holds one of S (tested as before).
 * (1) tests `n.id NOT IN (the partial index)`: the id is in every index, so the property indexes still answer
 * alone. The first label whose kinds allow it is split so; the other labels, the environment, the object id and
 * the property tests apply to both parts as in exactWhere. Any other test (no label; only Base / AZBase): one part,
 * exactWhere's.
 */
function exactBranches(test: NodeCountTest, access: string | null, param: (x: string | number) => string): string[] {
  const i = test.kinds.findIndex((any) => any.length > 0 && !any.includes('Base') && !any.includes('AZBase'))
  if (i < 0) {
    const parts = exactConditions(test, access, param)
    return [parts.length ? parts.join(' AND ') : '1']
  }
  // the environment tested on the index's rows (`+`: never the nodes_env range, which would read every node of
  // the caller's environments from the table)
  const rest = exactConditions({ ...test, kinds: test.kinds.filter((_, j) => j !== i) }, access, param, false)
  // one kind as `=`, so that a GROUP BY of an indexed property reads the index in its order (with IN, SQLite sorts
  // the groups in a temporary B-tree and computes their values from the table)
  const any = test.kinds[i]
  const kind = any.length === 1 ? `n.kind = ${param(any[0])}` : `n.kind IN (SELECT value FROM json_each(${param(JSON.stringify(any))}))`
  const byKind = [kind, `n.id NOT IN (SELECT x.id FROM nodes x WHERE ${KINDS_EXTRA('x')})`, ...rest]
  const extra = [KINDS_EXTRA('n'), ...kindTest(test.kinds[i], param), ...rest]
  return [byKind.join(' AND '), extra.join(' AND ')]
}

/**
 * `opts.nodeKeys`: read only these node properties (needs.ts nodePropertyKeys / nodeReads for the query being run;
 * absent or null: whole nodes); `opts.presented` (nodeReads): with every other column, as a presented node needs.
 */
export function d1GraphSource(db: D1Database, access: string | null, opts: { nodeKeys?: string[] | null; presented?: boolean } = {}): GraphSource {
  const NODE_COLUMNS = nodeColumns(opts.nodeKeys ?? null, opts.presented === true)
  const toNode = (r: NodeRow): NodeRecord => (opts.nodeKeys && !opts.presented ? toPartialNode(r) : toNodeRecord(r))
  /** per `column|prefix`: whether its index range was small enough for the first page asked (scanNodes) */
  const selective = new Map<string, boolean>()
  /** whether a relationship holds isacl as a number (relConditionSql, ACL_KEY), asked once per source, when first needed */
  let numericAcl: Promise<boolean> | null = null
  const aclIndexed = async (where: RelCondition[]): Promise<boolean> => {
    if (!where.some(aclTrue)) return false
    numericAcl ??= db
      .prepare(`SELECT 1 AS x FROM edges WHERE json_type(properties, '$.${ACL_KEY}') IN ('integer', 'real') LIMIT 1`)
      .first()
      .then((r) => r !== null)
    return !(await numericAcl)
  }
  return {
    async scanNodes(scan: NodeScan, afterId: number, limit: number): Promise<NodeRecord[]> {
      // ?1 after, ?2 kinds (JSON or NULL), ?3 objectid, ?4 name, ?5 access, ?6 limit, ?7… conditions
      // A STARTS WITH on objectid / name whose index range holds at most `limit` entries (counted in the index,
      // at most limit + 1 of them) is read through that range (prefixRange): `name STARTS WITH 'USER00000'`
      // reads 18 index entries instead of every node. A broader one is not: the range is read again and sorted
      // by id for every page, where a scan by id stops at the page's end.
      const where = (scan.where ?? []).slice(0, MAX_SCAN_CONDITIONS)
      const ranges = new Map<string, PrefixRange>()
      for (const c of where) {
        if (c.type !== 'text' || c.op !== 'startsWith' || c.anyCase) continue
        const key = `${c.column}|${c.value}`
        const range = prefixRange(c.column, c.value)
        if (!range || ranges.has(key)) continue
        let small = selective.get(key)
        if (small === undefined) {
          const row = await db
            .prepare(`SELECT count(*) AS c FROM (SELECT 1 FROM nodes n WHERE ${rangeColumn(c.column)} >= ?1 AND ${rangeColumn(c.column)} < ?2 LIMIT ?3)`)
            .bind(range.low, range.high, limit + 1)
            .first<{ c: number }>()
          small = (row?.c ?? 0) <= limit
          selective.set(key, small)
        }
        if (small) ranges.set(key, range)
      }
      const cond = conditionSql(where, 7, access, ranges)
      // A node's stored kinds are JSON text written by JSON.stringify (ingest's staging) or by SQLite's json
      // functions, both of which write a kind made of KIND_PATTERN's characters as "Kind", nothing else: a
      // node carrying such a kind has that text in its kinds, so instr() rules out the other nodes before
      // json_each parses their kinds (a scan for Computer parsed 77,500 other nodes' kinds at 1 M edges).
      // Only a necessary condition: json_each still decides. Other kind names: no shortcut.
      const needles = scan.kinds && scan.kinds.length <= 32 && scan.kinds.every((k) => KIND_PATTERN.test(k)) ? scan.kinds.map((k) => JSON.stringify(k)) : []
      const n0 = 7 + cond.params.length
      const prefilter = needles.length ? `(${needles.map((_, i) => `instr(n.kinds, ?${n0 + i}) > 0`).join(' OR ')}) AND ` : ''
      const rows = await db
        .prepare(scanSql(NODE_COLUMNS, access === null ? 'all' : cond.indexed ? 'filter' : 'index', prefilter, cond.sql))
        .bind(afterId, scan.kinds ? JSON.stringify(scan.kinds) : null, scan.objectid, scan.name, access ?? NO_ACCESS, limit, ...cond.params, ...needles)
        .all<NodeRow>()
      return rows.results.map(toNode)
    },

    /**
     * topk.ts: the statement of scanNodes with its ORDER BY (orderSql) and OFFSET ?1 instead of `id > ?1`: the
     * same kinds, conditions and environment access, so the same nodes in another order. Null when the page
     * holds a node the store cannot order exactly (they sort first: the first page shows one if any exists).
     */
    async scanOrdered(scan: NodeScan, order: ScanOrder, offset: number, limit: number): Promise<NodeRecord[] | null> {
      const where = (scan.where ?? []).slice(0, MAX_SCAN_CONDITIONS)
      // no index range for STARTS WITH here: the whole scan is read and sorted by SQLite anyway
      const cond = conditionSql(where, 7, access)
      const needles = scan.kinds && scan.kinds.length <= 32 && scan.kinds.every((k) => KIND_PATTERN.test(k)) ? scan.kinds.map((k) => JSON.stringify(k)) : []
      const n0 = 7 + cond.params.length
      const prefilter = needles.length ? `(${needles.map((_, i) => `instr(n.kinds, ?${n0 + i}) > 0`).join(' OR ')}) AND ` : ''
      const key = order.keys.length === 1 ? order.keys[0] : null
      if (key && ORDER_INDEXED.has(key.key) && scan.kinds?.length === 1 && scan.kinds[0] !== 'Base' && scan.kinds[0] !== 'AZBase' && needles.length === 1) {
        // Walk the order index (migration 0049). The scan's nodes are (1) those of primary kind K outside
        // nodes_kinds_extra, read in the index's order, and (2) the few in nodes_kinds_extra carrying K, sorted;
        // SQLite merges the two ordered parts (exactBranches has why they are the scan's nodes exactly). The
        // environment is tested on the rows (`+`: never nodes_env). Unorderable values are looked for first, on the
        // first page only, among every node of kind K (a superset of the scan's: it may send the query to the
        // engine needlessly, never wrongly): a map or list (rank 4), a real or an integer beyond 2^53 among the
        // numbers, a string with a byte from 0xEE up; in part (2) with orderSql's test.
        const kp = `?${n0 + 1}`
        const type = `json_type(n.properties, '$.${key.key}')`
        const value = `json_extract(n.properties, '$.${key.key}')`
        const rank = rankSql(type)
        const visibleSql = access === null ? '?5 = ?5' : '+n.environment_id IN (SELECT value FROM json_each(?5))'
        const common = `AND (?3 IS NULL OR n.objectid = ?3) AND (?4 IS NULL OR (n.name = ?4 COLLATE NOCASE AND n.name = ?4)) AND ${visibleSql} AND ?2 = ?2 ${cond.sql}`
        const kindTestSql = `(${prefilter}EXISTS (SELECT 1 FROM json_each(n.kinds) k WHERE k.value = ${kp}))`
        const params = [offset, JSON.stringify(scan.kinds), scan.objectid, scan.name, access ?? NO_ACCESS, limit, ...cond.params, ...needles, scan.kinds[0]]
        const dir = key.descending ? ' DESC' : ''
        const page = db
          .prepare(
            `SELECT ${NODE_COLUMNS}, ${rank} AS r0, ${value} AS v0 FROM nodes n
               WHERE n.kind = ${kp} AND n.id NOT IN (SELECT x.id FROM nodes x WHERE ${KINDS_EXTRA('x')}) ${common}
             UNION ALL
             SELECT ${NODE_COLUMNS}, ${rank} AS r0, ${value} AS v0 FROM nodes n
               WHERE ${KINDS_EXTRA('n')} AND ${kindTestSql} ${common}
             ORDER BY r0${dir}, v0${dir}, id LIMIT ?6 OFFSET ?1`,
          )
          .bind(...params)
        let rows: D1Result<NodeRow & { r0: unknown; v0: unknown }>
        if (offset === 0) {
          // the check and the first page in one round trip (the page is not used when the check finds one)
          const flag = orderSql({ keys: [key] }).unorderable
          const high = ['EE', 'EF', 'F0', 'F1', 'F2', 'F3', 'F4'].map((b) => `instr(CAST(${value} AS BLOB), X'${b}') > 0`).join(' OR ')
          const check = db
            .prepare(
              `SELECT EXISTS (SELECT 1 FROM nodes n WHERE n.kind = ?1 AND ${rank} = 4)
                   OR EXISTS (SELECT 1 FROM nodes n WHERE n.kind = ?1 AND ${rank} = 2 AND (typeof(${value}) <> 'integer' OR ${value} NOT ${SAFE_INTEGERS}))
                   OR EXISTS (SELECT 1 FROM nodes n WHERE n.kind = ?1 AND ${rank} = 0 AND (${high}))
                   OR EXISTS (SELECT 1 FROM nodes n WHERE ${KINDS_EXTRA('n')} AND instr(n.kinds, ?2) > 0 AND EXISTS (SELECT 1 FROM json_each(n.kinds) k WHERE k.value = ?1) AND ${flag}) AS u`,
            )
            .bind(scan.kinds[0], JSON.stringify(scan.kinds[0]))
          const [u, first] = await db.batch([check, page])
          if ((u.results as { u: number }[])[0]?.u) return null
          rows = first as D1Result<NodeRow & { r0: unknown; v0: unknown }>
        } else rows = await page.all<NodeRow & { r0: unknown; v0: unknown }>()
        return rows.results.map(({ r0: _r, v0: _v, ...r }) => toNode(r as NodeRow))
      }
      const rows = await db
        .prepare(scanSql(NODE_COLUMNS, access === null ? 'all' : cond.indexed ? 'filter' : 'index', prefilter, cond.sql, order))
        .bind(offset, scan.kinds ? JSON.stringify(scan.kinds) : null, scan.objectid, scan.name, access ?? NO_ACCESS, limit, ...cond.params, ...needles)
        .all<NodeRow & { unorderable: number }>()
      const out: NodeRecord[] = []
      for (const { unorderable, ...r } of rows.results) {
        if (unorderable) return null
        out.push(toNode(r))
      }
      return out
    },

    /** nodecount.ts: one count(*) with the tests as exact SQL (exactWhere). */
    async countNodes(test: NodeCountTest): Promise<number> {
      const params: (string | number)[] = []
      const param = (x: string | number) => (params.push(x), `?${params.length}`)
      const counts = exactBranches(test, access, param).map((w) => `(SELECT count(*) FROM nodes n WHERE ${w})`)
      const row = await db
        .prepare(`SELECT ${counts.join(' + ')} AS c`)
        .bind(...params)
        .first<{ c: number }>()
      return row?.c ?? 0
    },

    async nodeIds(test: NodeCountTest, afterId: number, limit: number): Promise<number[]> {
      // the nodes countNodes counts (exactWhere), by the primary key from `afterId`: ids leave SQLite as one
      // text (a row object per id would cost more than the id)
      const params: (string | number)[] = []
      const param = (x: string | number) => (params.push(x), `?${params.length}`)
      const where = exactWhere(test, access, param)
      const after = param(afterId)
      const row = await db
        .prepare(`SELECT group_concat(id) AS ids FROM (SELECT n.id FROM nodes n${where ? `${where} AND` : ' WHERE'} n.id > ${after} ORDER BY n.id LIMIT ${param(limit)})`)
        .bind(...params)
        .first<{ ids: string | null }>()
      return row?.ids ? row.ids.split(',').map(Number).sort((a, b) => a - b) : []
    },

    /**
     * distinct.ts: a GROUP BY over the nodes countNodes would count (its parts, exactBranches), per key its JSON
     * type and value as stored (json_type / json_extract, the property indexes' own expressions, so that an
     * indexed key is grouped in the index's order, reading the index alone), then those groups grouped again by
     * each key's type class (orderSql's rank: string, boolean, number, null or missing — json_type 'null' and a
     * missing key are one group, as are 'integer' and 'real') and value; each group's value as JSON (from its type
     * and value: json_extract gives a boolean as 1 / 0), its first id, and whether it holds a value the store
     * cannot compare as the engine (orderSql's unorderable, from type and value: such groups sort first, so the
     * answer's first row shows one if any exists).
     */
    async distinctValues(test: NodeCountTest, keys: string[], order: ScanOrder, skip: number, limit: number | null): Promise<unknown[][] | null> {
      const params: (string | number)[] = []
      const param = (x: string | number) => (params.push(x), `?${params.length}`)
      for (const k of keys) if (!PLAIN_KEY.test(k)) throw new Error(`property key ${JSON.stringify(k)} is not grouped by the store`)
      // inner: per part, type and value of each key (objectid: the column, text)
      const typeOf = (k: string) => (k === 'objectid' ? `'text'` : `json_type(n.properties, '$.${k}')`)
      const valueOf = (k: string) => (k === 'objectid' ? 'n.objectid' : `json_extract(n.properties, '$.${k}')`)
      const inner = exactBranches(test, access, param).map(
        (w) =>
          `SELECT ${keys.map((k, i) => `${typeOf(k)} AS t${i}, ${valueOf(k)} AS v${i}`).join(', ')}, min(n.id) AS first FROM nodes n WHERE ${w}
           GROUP BY ${keys.map((k) => (k === 'objectid' ? valueOf(k) : `${typeOf(k)}, ${valueOf(k)}`)).join(', ')}`,
      )
      const rank = (i: number) => `CASE t${i} WHEN 'text' THEN 0 WHEN 'true' THEN 1 WHEN 'false' THEN 1 WHEN 'integer' THEN 2 WHEN 'real' THEN 2 ELSE 3 END`
      const json = (i: number) => `CASE t${i} WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'object' THEN v${i} WHEN 'array' THEN v${i} WHEN 'text' THEN json_quote(v${i}) WHEN 'integer' THEN json_quote(v${i}) WHEN 'real' THEN json_quote(v${i}) ELSE NULL END`
      const high = (i: number) => ['EE', 'EF', 'F0', 'F1', 'F2', 'F3', 'F4'].map((b) => `instr(CAST(v${i} AS BLOB), X'${b}') > 0`).join(' OR ')
      const unorderable = keys
        .map((_, i) => `CASE t${i} WHEN 'text' THEN (${high(i)}) WHEN 'integer' THEN v${i} NOT ${SAFE_INTEGERS} WHEN 'real' THEN 1 WHEN 'object' THEN 1 WHEN 'array' THEN 1 ELSE 0 END`)
        .join(' OR ')
      const sorted = order.keys.map(({ key, descending }) => {
        const i = keys.indexOf(key)
        const dir = descending ? ' DESC' : ''
        return `${rank(i)}${dir}, v${i}${dir}, `
      })
      const rows = await db
        .prepare(
          `SELECT ${keys.map((_, i) => `${json(i)} AS j${i}`).join(', ')}, max(${unorderable}) AS unorderable, min(first) AS first
           FROM (${inner.join(' UNION ALL ')})
           GROUP BY ${keys.map((_, i) => `${rank(i)}, v${i}`).join(', ')}
           ORDER BY unorderable DESC, ${sorted.join('')}first LIMIT ${param(limit ?? -1)} OFFSET ${param(skip)}`,
        )
        .bind(...params)
        .all<Record<string, string | number | null>>()
      const out: unknown[][] = []
      for (const r of rows.results) {
        if (r.unorderable) return null
        out.push(keys.map((_, i) => (r[`j${i}`] === null ? null : JSON.parse(String(r[`j${i}`])))))
      }
      return out
    },
    async nodesByIds(ids: number[]): Promise<NodeRecord[]> {
      if (ids.length === 0) return []
      const results = await db.batch(
        chunks(ids, IDS_PER_STATEMENT).map((c) =>
          db
            .prepare(`SELECT ${NODE_COLUMNS} FROM json_each(?1) f JOIN nodes n ON n.id = f.value WHERE ${visible('n.environment_id', '?2')}`)
            .bind(JSON.stringify(c), access),
        ),
      )
      return results.flatMap((r) => (r.results as NodeRow[]).map(toNode))
    },

    async edgesByIds(ids: number[], withProperties: boolean): Promise<EdgeRecord[]> {
      if (ids.length === 0) return []
      const results = await db.batch(
        chunks(ids, IDS_PER_STATEMENT).map((c) =>
          db
            .prepare(
              `SELECT e.id, e.start_id, e.end_id, e.kind, ${withProperties ? 'e.properties, ' : ''}e.updated_at FROM json_each(?1) f JOIN edges e ON e.id = f.value
               ${access === null ? '' : `JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
               WHERE ${visible('s.environment_id', '?2')} AND ${visible('t.environment_id', '?2')}`}`,
            )
            .bind(...[JSON.stringify(c), ...(access === null ? [] : [access])]),
        ),
      )
      return results.flatMap((r) => (r.results as EdgeRow[]).map(toEdge))
    },

    async edgeProperties(ids: number[]): Promise<Map<number, Record<string, unknown>>> {
      const out = new Map<number, Record<string, unknown>>()
      if (ids.length === 0) return out
      const results = await db.batch(
        chunks(ids, IDS_PER_STATEMENT).map((c) =>
          db
            .prepare(
              `SELECT e.id, e.properties FROM json_each(?1) f JOIN edges e ON e.id = f.value
               ${access === null ? '' : `JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
               WHERE ${visible('s.environment_id', '?2')} AND ${visible('t.environment_id', '?2')}`}`,
            )
            .bind(...[JSON.stringify(c), ...(access === null ? [] : [access])]),
        ),
      )
      for (const r of results) for (const row of r.results as { id: number; properties: string }[]) out.set(row.id, JSON.parse(row.properties) as Record<string, unknown>)
      return out
    },

    async connected(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null): Promise<Set<number>> {
      const out = new Set<number>()
      if (ids.length === 0) return out
      const sides: ['start_id' | 'end_id', 'start_id' | 'end_id'][] =
        direction === 'out' ? [['start_id', 'end_id']] : direction === 'in' ? [['end_id', 'start_id']] : [['start_id', 'end_id'], ['end_id', 'start_id']]
      // one EXISTS per side, each answered from an index (edges' unique (start_id, kind, end_id), edges_end_kind)
      const exists = sides
        .map(
          ([near, far]) =>
            `EXISTS (SELECT 1 FROM edges e ${access === null ? '' : `JOIN nodes v ON v.id = e.${far}`}
             WHERE e.${near} = f.value AND (?2 IS NULL OR e.kind IN (SELECT value FROM json_each(?2)))
             ${access === null ? '' : `AND ${visible('v.environment_id', '?3')}`})`,
        )
        .join(' OR ')
      const results = await db.batch(
        chunks(ids, IDS_PER_STATEMENT).map((c) =>
          db.prepare(`SELECT f.value AS id FROM json_each(?1) f WHERE ${exists}`).bind(...[JSON.stringify(c), kinds ? JSON.stringify(kinds) : null, ...(access === null ? [] : [access])]),
        ),
      )
      for (const r of results) for (const row of r.results as { id: number }[]) out.add(row.id)
      return out
    },

    async countRelationships(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, far: FarNodeTest | null, distinct: boolean): Promise<Map<number, number>> {
      const out = new Map<number, number>()
      if (ids.length === 0) return out
      const sides: ['start_id' | 'end_id', 'start_id' | 'end_id'][] =
        direction === 'out' ? [['start_id', 'end_id']] : direction === 'in' ? [['end_id', 'start_id']] : [['start_id', 'end_id'], ['end_id', 'start_id']]
      if (distinct && sides.length > 1) throw new Error('a distinct count is counted in one direction')
      // A correlated count per id, answered from an index (edges' unique (start_id, kind, end_id),
      // edges_end_kind); the other end, when it is tested, by its primary key. `both` adds the incoming
      // side without self-loops (expand returns a self-loop once).
      const results = await db.batch(
        chunks(ids, IDS_PER_STATEMENT).map((c) => {
          const params: (string | number)[] = [JSON.stringify(c)]
          const param = (v: string | number) => (params.push(v), `?${params.length}`)
          const k = kinds ? param(JSON.stringify(kinds)) : null
          const a = access !== null ? param(access) : null
          const tests = far ? farNodeSql(far, 'v', param) : []
          const join = a !== null || tests.length > 0
          const counts = sides.map(
            ([near, other], i) =>
              `(SELECT ${distinct ? `count(DISTINCT e.${other})` : 'count(*)'} FROM edges e ${join ? `JOIN nodes v ON v.id = e.${other}` : ''}
                WHERE e.${near} = f.value ${k ? `AND e.kind IN (SELECT value FROM json_each(${k}))` : ''} ${i === 1 ? 'AND e.start_id <> f.value' : ''}
                ${a ? `AND ${visible('v.environment_id', a)}` : ''} ${tests.map((t) => `AND ${t}`).join(' ')})`,
          )
          return db.prepare(`SELECT f.value AS id, ${counts.join(' + ')} AS c FROM json_each(?1) f`).bind(...params)
        }),
      )
      for (const r of results) for (const row of r.results as { id: number; c: number }[]) if (row.c > 0) out.set(row.id, row.c)
      return out
    },

    async reach(seeds: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, limit: number, targets: number[]): Promise<Reach> {
      if (seeds.length === 0 || limit <= 0) return { nodes: 0, complete: seeds.length === 0, found: [] }
      // ?1 seeds, ?2 kinds (JSON or NULL), ?3 limit, ?4 targets, ?5 access (only when restricted)
      const sides: ['start_id' | 'end_id', 'start_id' | 'end_id'][] =
        direction === 'out' ? [['start_id', 'end_id']] : direction === 'in' ? [['end_id', 'start_id']] : [['start_id', 'end_id'], ['end_id', 'start_id']]
      // One recursive step per side, each a lookup of r's node in an index led by the near end (edges'
      // unique (start_id, kind, end_id), edges_end_kind). `+e.kind` keeps SQLite from seeking once per
      // kind of the list (59 kinds for AD_ATTACK_PATHS: 3-4x slower, measured); the kind is tested on the
      // index entry instead. UNION keeps each node once; the LIMIT bounds the rows the recursion adds (the
      // seeds included), so a reach larger than `limit` costs `limit` nodes and answers "incomplete".
      // Environment access is inside the recursion: a node the caller may not see is never added, so
      // nothing beyond it is walked.
      const steps = sides.map(
        ([near, far]) =>
          `SELECT e.${far} FROM r JOIN edges e ON e.${near} = r.id
           ${access === null ? '' : `JOIN nodes v ON v.id = e.${far}`}
           WHERE (?2 IS NULL OR +e.kind IN (SELECT value FROM json_each(?2)))
             ${access === null ? '' : `AND ${visible('v.environment_id', '?5')}`}`,
      )
      const row = await db
        .prepare(
          `WITH RECURSIVE r(id) AS (SELECT f.value FROM json_each(?1) f ${access === null ? '' : `JOIN nodes s ON s.id = f.value WHERE ${visible('s.environment_id', '?5')}`}
             UNION ${steps.join(' UNION ')} LIMIT ?3)
           SELECT count(*) AS n, group_concat(CASE WHEN r.id IN (SELECT value FROM json_each(?4)) THEN r.id END) AS found FROM r`,
        )
        .bind(...[JSON.stringify(seeds), kinds ? JSON.stringify(kinds) : null, limit, JSON.stringify(targets), ...(access === null ? [] : [access])])
        .first<{ n: number; found: string | null }>()
      const n = row?.n ?? 0
      return { nodes: n, complete: n < limit, found: row?.found ? row.found.split(',').map(Number) : [] }
    },

    /**
     * One page of a one-hop pattern as one join (issue 28, onehop.ts): the first `nearPage` visible nodes passing
     * `hop.near` with id > `afterId` (by id, as scanNodes pages a scan), their relationships of `hop.kinds` in
     * `hop.direction` (from relationship indexes led by the near end: edges' unique (start_id, kind, end_id),
     * edges_end_kind) whose other end is visible and passes `hop.far` (its primary key), ordered by near node,
     * kind and other end, at most `limit`. Both node tests are exactWhere's (exact, on the stored kinds). The
     * page's statistics (how many near nodes, the last id) come from a second statement of the same batch that
     * binds only the page's own parameters (?1…: D1 refuses a binding a statement does not use). The far node is
     * `n` as well, in the outer query (the page's `n` is the CTE's own scope). The relationships come with their
     * properties (parsed when first read): presenting them reads `lastseen`, and a statement of its own for
     * them afterwards (loadRelProperties) moved as many rows again.
     */
    async oneHop(hop: OneHopScan, afterId: number, nearPage: number, limit: number, offset = 0, cap = 0): Promise<OneHopPage> {
      // every statement of the batch binds only the parameters it uses (D1 refuses others): each is built with its own
      const differ = (hop.differ ?? []).filter((d) => PLAIN_KEY.test(d.near) && PLAIN_KEY.test(d.far))
      const acl = await aclIndexed(hop.rel ?? [])
      const build = (what: 'rows' | 'stats') => {
        const params: (string | number)[] = []
        const param = (x: string | number) => (params.push(x), `?${params.length}`)
        const near = exactConditions(hop.near, access, param)
        const page = `SELECT n.id FROM nodes n WHERE n.id > ${param(afterId)} ${near.map((c) => `AND ${c}`).join(' ')} ORDER BY n.id LIMIT ${param(nearPage)}`
        if (what === 'stats') return { sql: `SELECT count(*) AS scanned, max(id) AS last FROM (${page})`, params }
        const far = exactConditions(hop.far, access, param)
        const [nearEnd, farEnd] = hop.direction === 'out' ? ['start_id', 'end_id'] : ['end_id', 'start_id']
        // a few kinds: one index seek per kind; many: `+` tests the kind on the entries of one seek (see reach)
        const kindSql = hop.kinds ? `AND ${hop.kinds.length > 4 ? '+' : ''}e.kind IN (SELECT value FROM json_each(${param(JSON.stringify(hop.kinds))}))` : ''
        // relationship conditions as expand writes them (keys checked again: part of a bound JSON path)
        const { conds: rel, sql: relSql } = relConditionSql(hop.rel ?? [], param, acl)
        const from = `FROM w ${differ.length ? 'CROSS JOIN nodes m ON m.id = w.id' : ''} CROSS JOIN edges e ON e.${nearEnd} = w.id CROSS JOIN nodes n ON n.id = e.${farEnd}
             WHERE 1 ${kindSql} ${relSql} ${far.map((c) => `AND ${c}`).join(' ')}`
        const order = `ORDER BY w.id, e.kind, e.${farEnd}`
        const cols = 'e.id, e.start_id, e.end_id, e.kind, e.properties, e.updated_at'
        if (!differ.length) return { sql: `WITH w AS (${page}) SELECT ${cols} ${from} ${order} LIMIT ${param(limit)} OFFSET ${param(offset)}`, params }
        // The candidates (every condition but differ), at most `cap` of them, read once (a MATERIALIZED CTE, ids and
        // the differ test only): their count and the page's rows passing the test come from the same statement.
        // No order is needed to cap them: fewer than `cap` are all of them; `cap` is one more than the steps left,
        // in candidates (onehop.ts CANDIDATES_PER_STEP), so charging them stops the query at the step limit before
        // any row of the page is used (oneHopStream).
        // The rows passing (at most `limit`) are then ordered as the walk orders them and their records read by id.
        // (Two statements, a count and the rows, each joined and sorted the page's candidates with their
        // properties: twice the work, the bulk of "Principals with foreign domain group membership" near 1 M edges.)
        // A row whose relationship condition `r.k` (true) holds a value that is not `true` but passes `= 1` (1, 1.0)
        // is kept whatever differ says: the walk reads it (its level applies the same `= 1`) and the engine's WHERE
        // may stop there with a type error (`r.isacl` on 1, onehop.ts wherePushdown); the engine re-tests it here too.
        // (none for an isacl read from its index: a stored true only)
        const failing = rel.filter((c) => c.value === true && !(acl && aclTrue(c))).map((c) => `json_type(e.properties, '$."${c.key}"') <> 'true'`)
        const keep = [`(${differ.map((d) => differSql('m', d.near, 'n', d.far)).join(' AND ')})`, ...failing].join(' OR ')
        const candidates = `SELECT e.id AS id, w.id AS near_id, e.kind AS kind, e.${farEnd} AS far_id, coalesce(${keep}, 0) AS keep ${from} LIMIT ${param(cap)}`
        return {
          sql: `WITH w AS (${page}), c AS MATERIALIZED (${candidates}), t AS (SELECT count(*) AS n FROM c),
                k AS (SELECT id, near_id, kind, far_id FROM c WHERE keep ORDER BY near_id, kind, far_id LIMIT ${param(limit)} OFFSET ${param(offset)})
                SELECT t.n AS candidates, x.id, x.start_id, x.end_id, x.kind, x.properties, x.updated_at FROM t LEFT JOIN
                (SELECT k.near_id, k.kind AS k_kind, k.far_id, ${cols} FROM k CROSS JOIN edges e ON e.id = k.id) x ON 1
                ORDER BY x.near_id, x.k_kind, x.far_id`,
          params,
        }
      }
      const statements = (['rows', 'stats'] as const).map((w) => {
        const b = build(w)
        return db.prepare(b.sql).bind(...b.params)
      })
      const [rows, stats] = await db.batch(statements)
      const st = (stats.results as { scanned: number; last: number | null }[])[0]
      const found = rows.results as (EdgeRow & { candidates?: number })[]
      // with differ: every row carries the candidates' count; none passing the test: one row of it alone (id null)
      const candidates = differ.length ? (found[0]?.candidates ?? 0) : undefined
      const edges = (candidates === undefined ? found : found.filter((r) => r.id !== null)).map(toEdge)
      return { edges, scanned: st?.scanned ?? 0, lastId: st?.last ?? null, ...(candidates === undefined ? {} : { candidates }) }
    },

    /**
     * One page of a chain of 2-3 single relationships as one join (issue 28, onehop.ts): the first `nearPage` visible
     * nodes passing `scan.near` with id > `afterId` (by id, as scanNodes pages a scan; written as the id range of that
     * page, `w.id <= max(page)`, so that the join's outer loop is the nodes' primary key in id order), then for each
     * hop its relationships of the hop's kinds and direction (indexes led by the near end: edges' unique (start_id,
     * kind, end_id), edges_end_kind) and the hop's far node (primary key), visible and passing the hop's test, each
     * relationship different from the walk's earlier ones (the walk's relationship uniqueness). CROSS JOIN keeps
     * that loop order, which is the ORDER BY's (near id, then each hop's kind and far id): SQLite reads the rows
     * in order without sorting and stops at the LIMIT.
     *
     * The candidates (every node and relationship but the last node tested) are capped at `cap` in an inner
     * query: a page whose walks multiply (members of groups whose many relationships end at nodes the last test
     * rejects) never costs the statement more than `cap` candidate walks, where the walk would charge each a step.
     * The rows are read from that inner query in its order (one loop, the last node by primary key). When the
     * page answers fewer than `limit` rows, a capped count tells whether the cap cut it (`capped`): its rows may
     * then be missing some, and the caller stops the query as the walk's step limit would have.
     */
    async chain(scan: ChainScan, afterId: number, nearPage: number, limit: number, cap: number): Promise<ChainPage> {
      const params: (string | number)[] = []
      const param = (x: string | number) => (params.push(x), `?${params.length}`)
      const after = param(afterId)
      const nearPart = exactConditions(scan.near, access, param)
      const page = `SELECT n.id FROM nodes n WHERE n.id > ${after} ${nearPart.map((c) => `AND ${c}`).join(' ')} ORDER BY n.id LIMIT ${param(nearPage)}`
      const pageParams = params.length
      const near = exactConditions(scan.near, access, param, false, 'w')
      const joins: string[] = []
      const where: string[] = [`w.id > ${after}`, `w.id <= (SELECT max(id) FROM (${page}))`, ...near]
      const order: string[] = ['w.id']
      const cols: string[] = []
      let at = 'w'
      const last = scan.hops.length
      scan.hops.forEach((h, i) => {
        const e = `e${i + 1}`
        const [nearEnd, farEnd] = h.direction === 'out' ? ['start_id', 'end_id'] : ['end_id', 'start_id']
        joins.push(`CROSS JOIN edges ${e} ON ${e}.${nearEnd} = ${at}.id`)
        // a few kinds: one index seek per kind; many: `+` tests the kind on the entries of one seek (see reach)
        if (h.kinds) where.push(`${h.kinds.length > 4 ? '+' : ''}${e}.kind IN (SELECT value FROM json_each(${param(JSON.stringify(h.kinds))}))`)
        for (let j = 1; j <= i; j++) where.push(`${e}.id <> e${j}.id`)
        order.push(`${e}.kind`, `${e}.${farEnd}`)
        cols.push(`${e}.id AS id${i + 1}`, `${e}.start_id AS s${i + 1}`, `${e}.end_id AS t${i + 1}`, `${e}.kind AS k${i + 1}`, `${e}.properties AS p${i + 1}`, `${e}.updated_at AS u${i + 1}`)
        if (i + 1 < last) {
          const m = `m${i + 1}`
          joins.push(`CROSS JOIN nodes ${m} ON ${m}.id = ${e}.${farEnd}`)
          where.push(...exactConditions(h.far, access, param, false, m))
          at = m
        } else cols.push(`${e}.${farEnd} AS far`)
      })
      const candidates = `FROM nodes w ${joins.join(' ')} WHERE ${where.join(' AND ')} ORDER BY ${order.join(', ')} LIMIT ${param(cap)}`
      const candidateParams = params.length
      const far = exactConditions(scan.hops[last - 1].far, access, param, false)
      const rowsSql = `SELECT c.* FROM (SELECT ${cols.join(', ')} ${candidates}) c CROSS JOIN nodes n ON n.id = c.far ${far.length ? `WHERE ${far.join(' AND ')}` : ''} LIMIT ${param(limit)}`
      const [rows, stats] = await db.batch([
        db.prepare(rowsSql).bind(...params),
        db.prepare(`SELECT count(*) AS scanned, max(id) AS last FROM (${page})`).bind(...params.slice(0, pageParams)),
      ])
      const got = rows.results as Record<string, string | number>[]
      let capped = false
      if (got.length < limit) {
        const n = await db.prepare(`SELECT count(*) AS n FROM (SELECT 1 ${candidates})`).bind(...params.slice(0, candidateParams)).first<{ n: number }>()
        capped = (n?.n ?? 0) >= cap
      }
      const st = (stats.results as { scanned: number; last: number | null }[])[0]
      return {
        rows: got.map((r) =>
          scan.hops.map((_, i) =>
            toEdge({ id: r[`id${i + 1}`] as number, start_id: r[`s${i + 1}`] as number, end_id: r[`t${i + 1}`] as number, kind: r[`k${i + 1}`] as string, properties: r[`p${i + 1}`] as string, updated_at: r[`u${i + 1}`] as string }),
          ),
        ),
        scanned: st?.scanned ?? 0,
        lastId: st?.last ?? null,
        capped,
      }
    },

    /**
     * One walk level (issue 28), one round trip: a batch of one statement per direction for the relationships
     * at `ids` whose other end `n` passes `far` (kinds, object id, name, access and the necessary conditions,
     * conditionSql, as scanNodes tests a node), and one for the other ends' records of the first `maxNodes`
     * of them in the order of `ids` (the same join): read from the relationship indexes led by the near end (edges' unique (start_id, kind,
     * end_id), edges_end_kind) and the nodes' primary key. Relationship conditions as `expand`. With `orGoOn`
     * (a variable-length level, match.ts hops) `n` passes when it is visible and either passes `far` or has a
     * relationship to go on (conditionSql's `related` EXISTS, read from the same indexes): a test on the row of
     * `n` only, so the CROSS JOIN order (ids, then each id's relationships from its index, then `n`) is the one
     * the statement has without it, and the relationships kept come in the order they would come without it.
     */
    async expandLevel(
      ids: number[],
      direction: 'out' | 'in' | 'both',
      kinds: string[] | null,
      withProperties: boolean,
      where: RelCondition[],
      far: NodeScan,
      maxNodes: number,
      orGoOn: GoOn | null = null,
    ): Promise<{ edges: EdgeRecord[]; nodes: NodeRecord[] }> {
      if (ids.length === 0) return { edges: [], nodes: [] }
      const acl = await aclIndexed(where)
      const sides: ['start_id' | 'end_id', 'start_id' | 'end_id'][] =
        direction === 'out' ? [['start_id', 'end_id']] : direction === 'in' ? [['end_id', 'start_id']] : [['start_id', 'end_id'], ['end_id', 'start_id']]
      const statements: D1PreparedStatement[] = []
      /** per statement: whether it reads the far nodes (else relationships) */
      const readsNodes: boolean[] = []
      for (const c of chunks(ids, IDS_PER_STATEMENT)) {
        // parameters by number, each bound once and used by every side of the statement
        const params: (string | number | null)[] = [JSON.stringify(c)]
        const param = (x: string | number | null) => (params.push(x), `?${params.length}`)
        const k = kinds ? param(JSON.stringify(kinds)) : null
        const relSql = relConditionSql(where, param, acl).sql
        const tests: string[] = []
        const visibleSql = access !== null ? `AND ${visible('n.environment_id', param(access))}` : ''
        if (far.kinds) tests.push(kindsSql('n', param(JSON.stringify(far.kinds))))
        if (far.objectid !== null) tests.push(`n.objectid = ${param(far.objectid)}`)
        if (far.name !== null) {
          const p = param(far.name)
          tests.push(`n.name = ${p} COLLATE NOCASE AND n.name = ${p}`)
        }
        const cond = conditionSql((far.where ?? []).slice(0, MAX_SCAN_CONDITIONS), params.length + 1, access)
        params.push(...cond.params)
        const passes = `${tests.map((t) => `AND ${t}`).join(' ')} ${cond.sql}`
        let farSql = `${visibleSql} ${passes}`
        if (orGoOn) {
          const goOn = conditionSql([{ type: 'related', direction: orGoOn.direction, kinds: orGoOn.kinds, negated: false }], params.length + 1, access)
          params.push(...goOn.params)
          farSql = `${visibleSql} AND ((1 ${passes}) OR (1 ${goOn.sql}))`
        }
        // a few kinds: one index seek per kind; many (AD_ATTACK_PATHS, 59): `+` tests the kind on the entries
        // of one seek instead (see reach)
        const kindSql = k ? `AND ${kinds!.length > 4 ? '+' : ''}e.kind IN (SELECT value FROM json_each(${k}))` : ''
        // CROSS JOIN keeps this order: the ids, their relationships by index, the far node by primary key
        const edgeSide = ([near, other]: ['start_id' | 'end_id', 'start_id' | 'end_id']) =>
          `FROM json_each(?1) f CROSS JOIN edges e ON e.${near} = f.value CROSS JOIN nodes n ON n.id = e.${other}
           WHERE 1 ${kindSql} ${relSql} ${farSql}`
        for (const side of sides) {
          statements.push(
            db.prepare(`SELECT e.id, e.start_id, e.end_id, e.kind, ${withProperties ? 'e.properties, ' : ''}e.updated_at ${edgeSide(side)}`).bind(...params),
          )
          readsNodes.push(false)
        }
        if (maxNodes > 0) {
          // the far nodes of the first relationships in the order of the ids (the walks the engine makes
          // first): a LIMIT downstream often stops the walk before the others are needed
          const lim = param(maxNodes)
          const first = sides.map((side) => `SELECT e.${side[1]} AS id, f.key AS k ${edgeSide(side)}`).join(' UNION ALL ')
          statements.push(db.prepare(`SELECT ${NODE_COLUMNS} FROM nodes n WHERE n.id IN (SELECT id FROM (${first}) ORDER BY k LIMIT ${lim})`).bind(...params))
          readsNodes.push(true)
        }
      }
      const results = await db.batch(statements)
      const seen = new Set<number>()
      const edges: EdgeRecord[] = []
      const nodes: NodeRecord[] = []
      results.forEach((r, i) => {
        if (readsNodes[i]) {
          for (const row of r.results as NodeRow[]) nodes.push(toNode(row))
          return
        }
        for (const row of r.results as EdgeRow[]) {
          if (seen.has(row.id)) continue
          seen.add(row.id)
          edges.push(toEdge(row))
        }
      })
      return { edges, nodes }
    },

    async expand(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, withProperties: boolean, where: RelCondition[] = []): Promise<EdgeRecord[]> {
      if (ids.length === 0) return []
      // the relationship conditions as every walk statement writes them (relConditionSql), bound after the fixed parameters
      const first = access === null ? 3 : 4
      const condArgs: (string | number)[] = []
      const condSql = relConditionSql(where, (x) => (condArgs.push(x), `?${first + condArgs.length - 1}`), await aclIndexed(where)).sql
      const sides: ['start_id' | 'end_id', 'start_id' | 'end_id'][] =
        direction === 'out' ? [['start_id', 'end_id']] : direction === 'in' ? [['end_id', 'start_id']] : [['start_id', 'end_id'], ['end_id', 'start_id']]
      const statements = chunks(ids, IDS_PER_STATEMENT).flatMap((c) =>
        sides.map(([near, far]) =>
          db
            .prepare(
              `SELECT e.id, e.start_id, e.end_id, e.kind, ${withProperties ? 'e.properties, ' : ''}e.updated_at
               FROM json_each(?1) f JOIN edges e ON e.${near} = f.value
               ${access === null ? '' : `JOIN nodes v ON v.id = e.${far}`}
               WHERE (?2 IS NULL OR e.kind IN (SELECT value FROM json_each(?2)))
                 ${access === null ? '' : `AND ${visible('v.environment_id', '?3')}`}
                 ${condSql}`,
            )
            .bind(...[JSON.stringify(c), kinds ? JSON.stringify(kinds) : null, ...(access === null ? [] : [access]), ...condArgs]),
        ),
      )
      const results = await db.batch(statements)
      const seen = new Set<number>()
      const out: EdgeRecord[] = []
      for (const r of results)
        for (const row of r.results as EdgeRow[]) {
          if (seen.has(row.id)) continue
          seen.add(row.id)
          out.push(toEdge(row))
        }
      return out
    },
  }
}
