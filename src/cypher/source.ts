/**
 * What the engine needs from the graph. The D1 implementation is cypher.store.ts; tests use an
 * in-memory one. Every method applies the caller's environment access itself: a node outside it is
 * never returned, and no relationship leading to one is (so it is never traversed either).
 */
import type { NodeRecord } from '../graph/present'

export type { NodeRecord }

export interface EdgeRecord {
  id: number
  start: number
  end: number
  kind: string
  /** Read only when asked for (expand `withProperties`, else `edgeProperties`); reading them before throws. */
  properties: Record<string, unknown>
  updated_at: string
  /** estimated bytes this record holds (for the memory budget) */
  bytes?: number
}

/**
 * A relationship read without its properties: touching them is an engine bug, not a wrong answer. A class
 * (the getter on its prototype), not an object literal with its own getter: the literal gave every record a
 * closure, its context and the copied-from object, and a walk holds 100 000 of them. Measured
 * (`node --expose-gc`, 200 000 records held in a Map and per-node arrays as match.ts holds them, their
 * strings included): 624 B per record with the literal, 167 B with the class (8-byte pointers; workerd
 * compresses them), against the 200 B the memory budget charges (EDGE_BYTES).
 */
class EdgeWithoutProperties implements EdgeRecord {
  readonly id: number
  readonly start: number
  readonly end: number
  readonly kind: string
  readonly updated_at: string
  readonly bytes?: number
  constructor(e: Omit<EdgeRecord, 'properties'>) {
    this.id = e.id
    this.start = e.start
    this.end = e.end
    this.kind = e.kind
    this.updated_at = e.updated_at
    this.bytes = e.bytes
  }
  get properties(): Record<string, unknown> {
    throw new Error(`properties of relationship ${this.id} not loaded`)
  }
}

export function withoutProperties(e: Omit<EdgeRecord, 'properties'>): EdgeRecord {
  return new EdgeWithoutProperties(e)
}

/**
 * A necessary condition on a scanned node that the store may test: it returns at least every node that
 * satisfies it (a superset is fine: the engine tests every node it gets against the full pattern and WHERE).
 *  - `tierZero` / `owned`: nodes that may carry the derived label `Tag_Tier_Zero` / `Tag_Owned` (labels.ts);
 *  - `text`: the object id or name starts with, ends with or contains `value` (`anyCase`: ignoring case).
 */
export type ScanCondition =
  | { type: 'tierZero' }
  | { type: 'owned' }
  | { type: 'text'; column: 'objectid' | 'name'; op: 'startsWith' | 'endsWith' | 'contains'; value: string; anyCase: boolean }
  /**
   * the node has (negated: has no) relationship of these kinds (null: any) in this direction to a node the
   * caller may see: `WHERE [NOT] (n)-[:K]->()` read by the scan itself (plan.ts relatedCondition)
   */
  | { type: 'related'; direction: 'out' | 'in' | 'both'; kinds: string[] | null; negated: boolean }
  /** a test of the node's stored properties (plan.ts propertyTest), kept whenever the engine's could be true */
  | { type: 'property'; test: PropertyTest }

/** A scalar a stored property is compared with: a string without UTF-16 surrogates, a finite number, a boolean. */
export type PropertyScalar = string | number | boolean

/**
 * A WHERE condition (or a pattern's property map entry) on one stored node property `key` (letters, digits and `_`,
 * never `objectid` — a column — nor `system_tags` — derived), in Cypher's meaning (labels.ts nodeProperty: a
 * missing key and a JSON null are null; eval.ts equals / compare: a value of another type is never equal, and
 * never compares):
 *  - `eq`: `n.key = value` is true; `in`: `n.key IN [values]` is true (null items dropped: they are never equal);
 *  - `cmp`: `n.key < value` (…) is true, for a number;
 *  - `isNull` / `isNotNull`; `startsWith` / `endsWith` / `contains` a non-empty string;
 *  - `truthy` / `falsy`: `WHERE n.key` / `WHERE NOT n.key`: the stored value is true (false), or is not a boolean
 *    nor null (the engine then stops with a type error; the store keeps such a node so that it does);
 *  - `and` / `or` of tests.
 * The store keeps every node for which the test can be true (a superset is allowed: the engine tests each node again).
 */
export type PropertyTest =
  | { op: 'eq'; key: string; value: PropertyScalar }
  | { op: 'in'; key: string; values: PropertyScalar[] }
  | { op: 'cmp'; key: string; cmp: '<' | '<=' | '>' | '>='; value: number }
  | { op: 'isNull' | 'isNotNull' | 'truthy' | 'falsy'; key: string }
  | { op: 'startsWith' | 'endsWith' | 'contains'; key: string; value: string }
  | { op: 'and' | 'or'; tests: PropertyTest[] }

/**
 * Conditions on the other end of a counted relationship that the store tests exactly as the engine would
 * (labels.ts hasLabel on stored kinds, nodeProperty and Cypher equality), never as a superset: a count
 * cannot be re-checked by the engine.
 */
export interface FarNodeTest {
  /** every entry must hold: the node's stored kinds include at least one of the entry's kinds */
  kinds: string[][]
  /** `objectid` is the column; any other key a stored property, equal to the string, or being the boolean */
  properties: { key: string; value: string | boolean }[]
}

/**
 * A node count the store answers exactly (nodecount.ts): visible nodes whose stored kinds include one of each
 * entry of `kinds`, whose object id is `objectid` (null: any) and for which every test holds, each test exact
 * (never a superset: nodecount.ts says which are).
 */
export interface NodeCountTest {
  kinds: string[][]
  objectid: string | null
  tests: PropertyTest[]
}

/**
 * The order of an ordered scan (topk.ts): by each key (a stored property of letters, digits and `_`, or
 * `objectid`, the column) as ORDER BY sorts it (values.ts orderCompare, DESC reversed), then by id ascending.
 */
export interface ScanOrder {
  keys: { key: string; descending: boolean }[]
}

export interface NodeScan {
  /** necessary conditions (all of them), pushed to the store; absent or empty: none */
  where?: ScanCondition[]
  /** keep nodes having at least one of these stored kinds (null: any node) */
  kinds: string[] | null
  /** exact object id (null: any) */
  objectid: string | null
  /** exact name (null: any) */
  name: string | null
}

/**
 * A necessary condition on a relationship a walk reads: its stored property `key` equals `value` (SQL's
 * comparison of the JSON value: true and false as 1 and 0, so a stored 1 passes `true` — a superset the
 * engine narrows, as it re-tests the whole WHERE).
 */
export interface RelCondition {
  /** a property name of letters, digits and `_` */
  key: string
  value: string | number | boolean
}

export interface GraphSource {
  /** visible nodes matching `scan` with id > afterId, by id, at most `limit` */
  scanNodes(scan: NodeScan, afterId: number, limit: number): Promise<NodeRecord[]>
  /**
   * The nodes `scanNodes` would return for `scan` (all pages), in `order`, from the `offset`-th on, at most
   * `limit`; null when one of them holds a value the store cannot order exactly as the engine does (topk.ts
   * says which): the caller then sorts them itself. Optional: without it the engine sorts.
   */
  scanOrdered?(scan: NodeScan, order: ScanOrder, offset: number, limit: number): Promise<NodeRecord[] | null>
  /**
   * The different values of `keys` (a stored property, or `objectid`) over the visible nodes passing `test`
   * (as countNodes counts them), one row per set of values equal as DISTINCT compares them, in `order` and then
   * by the first node (by id) holding them, from the `skip`-th on, at most `limit` (null: all); each value as
   * stored (parsed JSON; null for a missing key). Null when one of them is a value the store cannot compare as
   * the engine does (distinct.ts). Optional: without it the engine scans.
   */
  distinctValues?(test: NodeCountTest, keys: string[], order: ScanOrder, skip: number, limit: number | null): Promise<unknown[][] | null>
  /** how many visible nodes pass `test`, counted by the store (optional: without it the engine scans and counts) */
  countNodes?(test: NodeCountTest): Promise<number>
  /**
   * The ids of the visible nodes countNodes would count for `test`, by id, those above `afterId`, at most `limit`:
   * ids only, no record (the ends of a shortest-path pattern, match.ts endIds). Optional: without it the engine
   * scans the nodes and tests them.
   */
  nodeIds?(test: NodeCountTest, afterId: number, limit: number): Promise<number[]>
  /** the visible nodes among `ids` (any order) */
  nodesByIds(ids: number[]): Promise<NodeRecord[]>
  /**
   * Relationships touching `ids`: `out` those starting there, `in` those ending there, `both` either.
   * `kinds` null: any kind. Only relationships whose other end is visible. `where`: necessary conditions
   * the store may apply (a store that ignores them returns a superset, which the engine narrows).
   */
  expand(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, withProperties: boolean, where?: RelCondition[]): Promise<EdgeRecord[]>
  /**
   * One level of a walk as one store round trip (issue 28): what `expand` returns at `ids`, keeping only the
   * relationships whose other end passes `far` (as scanNodes keeps a node: its kinds, object id, name and
   * necessary conditions — a superset the engine narrows), and the records of the other ends of the first
   * `maxNodes` of those relationships in the order of `ids` (the walks the engine makes first; it reads the
   * others when it needs them). Optional: without it the engine expands and reads the far nodes separately.
   * With `orGoOn`, a relationship is also kept when its other end has at least one relationship `expand` would
   * return there in `orGoOn.direction` of `orGoOn.kinds` (null: any; the other end of that one visible), as
   * ScanCondition `related` tests it: a variable-length walk may go on from there (match.ts hops). The order
   * of the relationships kept is the order in which they would be returned without the condition.
   */
  expandLevel?(
    ids: number[],
    direction: 'out' | 'in' | 'both',
    kinds: string[] | null,
    withProperties: boolean,
    where: RelCondition[],
    far: NodeScan,
    maxNodes: number,
    orGoOn?: GoOn | null,
  ): Promise<{ edges: EdgeRecord[]; nodes: NodeRecord[] }>
  /**
   * One page of a one-hop pattern answered by one join (issue 28, onehop.ts): of the first `nearPage` visible
   * nodes with id > `afterId` passing `hop.near` (by id), the relationships `expand` would return there (kinds,
   * direction, the other end visible) whose other end passes `hop.far`, ordered by near node id, then kind, then
   * the other end's id, at most `limit`, with their properties; `scanned` how many near nodes the page held
   * (fewer than `nearPage`: the last page), `lastId` the last of them. Both node tests exact (countNodes').
   * Optional: without it the engine scans and walks.
   */
  oneHop?(hop: OneHopScan, afterId: number, nearPage: number, limit: number, offset?: number, cap?: number): Promise<OneHopPage>
  /**
   * One page of a chain of single relationships (2-3) as one join, rows in the walk's order (onehop.ts): the
   * first `nearPage` nodes passing `scan.near` after `afterId`, at most `limit` rows (each the chain's
   * relationships in walk order), at most `cap` candidate walks examined; `capped` when the cap may have cut
   * the page's rows short.
   */
  chain?(scan: ChainScan, afterId: number, nearPage: number, limit: number, cap: number): Promise<ChainPage>
  /**
   * Which of `ids` have at least one relationship as `expand` would return it (same direction, kinds and
   * visibility of the other end), without reading any: pattern predicates such as `(u)-[:MemberOf]->()`.
   */
  connected(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null): Promise<Set<number>>
  /**
   * The visible relationships among `ids` (both ends visible; any order), with their properties when
   * `withProperties`: shortest-path searches keep ids only and read the records of the paths they return.
   */
  edgesByIds(ids: number[], withProperties: boolean): Promise<EdgeRecord[]>
  /**
   * For each of `ids`, how many relationships `expand` would return there (same direction, kinds and
   * visibility of the other end; `both`: a self-loop once), counted by the store without reading them,
   * keeping only those whose other end passes `far` (null: any); `distinct` counts the different other
   * ends instead (one direction only). Ids with none are left out.
   */
  countRelationships(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, far: FarNodeTest | null, distinct: boolean): Promise<Map<number, number>>
  /** the properties of the visible relationships among `ids` */
  edgeProperties(ids: number[]): Promise<Map<number, Record<string, unknown>>>
  /**
   * The nodes reachable from `seeds` (the seeds included) walking relationships of `kinds` (null: any) in
   * `direction` (`both`: either way), through visible nodes only, as `expand` would walk them step by step,
   * counted by the store without returning them: `nodes` how many (at most `limit`; the store stops there),
   * `complete` whether that is all of them (fewer than `limit`), `found` those of `targets` among them.
   * Shortest-path searches use a complete answer to prove pairs unreachable in bulk (match.ts Reaches).
   */
  reach(seeds: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, limit: number, targets: number[]): Promise<Reach>
}

/** The next step a variable-length walk could take from a node (GraphSource.expandLevel `orGoOn`). */
export interface GoOn {
  direction: 'out' | 'in'
  kinds: string[] | null
}

/** A one-hop pattern seen from the end its walk starts at (GraphSource.oneHop). */
export interface OneHopScan {
  near: NodeCountTest
  far: NodeCountTest
  /** from the near end: `out` the near node is the relationship's start */
  direction: 'out' | 'in'
  /** null: any kind */
  kinds: string[] | null
  /** necessary conditions on the relationship (as `expand` applies them; onehop.ts wherePushdown) */
  rel?: RelCondition[]
  /**
   * necessary conditions `near.k <> far.k` (keys of letters, digits and `_`): both stored, neither a JSON null,
   * and not the same stored value. With any, the page also counts its candidates (`OneHopPage.candidates`,
   * at most `cap`): the relationships passing every other condition.
   */
  differ?: { near: string; far: string }[]
}

/** A chain of single relationships seen from the end its walk starts at (GraphSource.chain), hops in walk order. */
export interface ChainScan {
  near: NodeCountTest
  hops: { direction: 'out' | 'in'; kinds: string[] | null; far: NodeCountTest }[]
}

export interface ChainPage {
  rows: EdgeRecord[][]
  scanned: number
  lastId: number | null
  capped: boolean
}

export interface OneHopPage {
  edges: EdgeRecord[]
  /** with `differ` conditions: the page's candidates (see OneHopScan), at most `cap` */
  candidates?: number
  scanned: number
  lastId: number | null
}

/** What `GraphSource.reach` found. */
export interface Reach {
  nodes: number
  complete: boolean
  found: number[]
}
