/**
 * Planning (pure): how one pattern part is matched. The engine walks a part from one end; the plan
 * picks that end (a node already bound by an earlier clause, else the one the store can find fastest:
 * exact object id or name, then WHERE conditions on it alone, then labels), turns the walk's
 * relationships around when it starts from the far end, and attaches to each node the WHERE conditions
 * that mention only that node (and variables bound before), so a walk is cut as early as possible.
 * The full WHERE is still applied to every result: attaching is an optimisation, never a change of
 * meaning.
 */
import type { Expr, NodePattern, PatternPart, RelPattern } from './ast'
import type { NodeScan, PropertyScalar, PropertyTest, RelCondition, ScanCondition } from './source'
import { relationshipKinds, scanKindsFor } from './labels'
import { variablesOf } from './eval'

export interface PartPlan {
  part: PatternPart
  /** the walk starts at the part's last node */
  reversed: boolean
  /** node patterns in walk order */
  nodes: NodePattern[]
  /** relationship patterns in walk order, directions as walked */
  rels: RelPattern[]
  /** conditions per node (walk order) */
  filters: Expr[][]
  /** per relationship (walk order): property conditions the store may apply when it reads them */
  relWhere: RelCondition[][]
  /** how to find the first node when it is not bound: the store-side part of its conditions */
  scan: NodeScan
  /**
   * per relationship (walk order): the store-side part of the conditions of the node it leads to (its labels,
   * property map, own WHERE conditions and pattern predicates), a superset the engine narrows; a single relationship's level is read joined with it (issue 28, GraphSource.expandLevel)
   */
  farScans: NodeScan[]
  /** readable summary (tests, the plan header) */
  describe: string
}

/** `a AND b AND c` → [a, b, c] */
export function conjuncts(e: Expr | null): Expr[] {
  if (!e) return []
  if (e.type === 'and') return [...conjuncts(e.left), ...conjuncts(e.right)]
  return [e]
}

function hasPatternPredicate(e: Expr): boolean {
  if (e.type === 'patternPredicate' || e.type === 'exists') return true
  return Object.values(e).some((v) =>
    Array.isArray(v) ? v.some((x) => x && typeof x === 'object' && 'type' in x && hasPatternPredicate(x as Expr)) : v && typeof v === 'object' && 'type' in v && hasPatternPredicate(v as Expr),
  )
}

/** `v.key = 'literal'` or `'literal' = v.key` → the literal, for key objectid / name */
function equalityOn(e: Expr, variable: string, key: 'objectid' | 'name'): string | null {
  if (e.type !== 'compare' || e.op !== '=') return null
  for (const [a, b] of [
    [e.left, e.right],
    [e.right, e.left],
  ]) {
    if (a.type === 'property' && a.key === key && a.expr.type === 'var' && a.expr.name === variable && b.type === 'literal' && typeof b.value === 'string')
      return b.value
  }
  return null
}

const isVar = (e: Expr, v: string) => e.type === 'var' && e.name === v
const propertyOf = (e: Expr, v: string): string | null => (e.type === 'property' && isVar(e.expr, v) ? e.key : null)
const stringLiteral = (e: Expr): string | null => (e.type === 'literal' && typeof e.value === 'string' ? e.value : null)

/**
 * Whether `e` (about variable `v`) can only be true for a node carrying the derived label `label`
 * (Tag_Tier_Zero / Tag_Owned): a label test, `v.system_tags` (or coalesce(v.system_tags, …)) containing or
 * equal to a literal that contains the label's tag (the derived system_tags holds the tag exactly when the
 * label holds; a stored one is caught by the store's text test), and AND / OR of those.
 */
function implies(e: Expr, v: string, label: 'Tag_Tier_Zero' | 'Tag_Owned'): boolean {
  const tag = label === 'Tag_Tier_Zero' ? 'admin_tier_0' : 'owned'
  switch (e.type) {
    case 'hasLabels':
      return isVar(e.expr, v) && e.labels.includes(label)
    case 'and':
      return implies(e.left, v, label) || implies(e.right, v, label)
    case 'or':
      return implies(e.left, v, label) && implies(e.right, v, label)
    case 'contains':
    case 'compare': {
      if (e.type === 'compare' && e.op !== '=') return false
      const lit = stringLiteral(e.right)
      if (lit === null || !lit.includes(tag)) return false
      const l = e.left
      const tags = (x: Expr) => propertyOf(x, v) === 'system_tags'
      return tags(l) || (l.type === 'call' && l.name.toLowerCase() === 'coalesce' && l.args.length > 0 && tags(l.args[0]))
    }
    default:
      return false
  }
}

/**
 * Literal text a regular expression's every match must contain (ignoring case when it has (?i)), from its
 * start (ASCII only: a case-blind JavaScript regex without the u flag folds ASCII letters only to ASCII
 * letters, exactly as SQLite's lower()): the leading run of plain characters after optional `^` / `.*`, cut before a quantifier that
 * could make its last character optional or repeated. Null when there is none or the pattern has an
 * alternation (`a|b` need not contain either side).
 */
export function regexLiteral(pattern: string): { value: string; anyCase: boolean } | null {
  let body = pattern
  let anyCase = false
  for (;;) {
    const m = /^\(\?([ism]+)\)/.exec(body)
    if (!m) break
    if (m[1].includes('i')) anyCase = true
    body = body.slice(m[0].length)
  }
  if (body.includes('|')) return null
  body = body.replace(/^\^/, '').replace(/^(\.\*)+/, '')
  const run = /^[A-Za-z0-9 _@#\-]+/.exec(body)
  if (!run) return null
  let value = run[0]
  if (/^[?*{]/.test(body.slice(value.length))) value = value.slice(0, -1)
  return value.length >= 2 ? { value, anyCase } : null
}

/**
 * The value of an expression that is the same for every row of the query (a literal, or what run.ts lets
 * through: `datetime().epochseconds - 86400`), or undefined when it is not one. The plan only reads
 * literals (and lists of them) itself; match.ts passes an evaluator for the rest.
 */
export type Constant = (e: Expr) => unknown

export const literalOnly: Constant = (e) =>
  e.type === 'literal' ? e.value : e.type === 'list' && e.items.every((x) => x.type === 'literal') ? e.items.map((x) => (x as { value: unknown }).value) : undefined

/** A stored property key the store reads from the properties JSON (objectid is a column, system_tags derived). */
const PROPERTY_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/
const storedKey = (e: Expr, v: string): string | null => {
  const k = propertyOf(e, v)
  return k !== null && PROPERTY_KEY.test(k) && k !== 'objectid' && k !== 'system_tags' ? k : null
}
/** a string the store compares exactly as JavaScript does: no UTF-16 surrogate (SQLite compares UTF-8) */
const plainString = (x: unknown): x is string => typeof x === 'string' && !/[\uD800-\uDFFF]/.test(x)
const scalar = (x: unknown): x is PropertyScalar => plainString(x) || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x))
/** tests per pushed condition at most (the SQL stays far from D1's 100 parameters and expression depth) */
const MAX_TESTS = 12

/**
 * The store-side test of a WHERE condition about node `v`'s stored properties (source.ts PropertyTest), or
 * null when it has none. Each test holds whenever the condition can be true; AND keeps the parts it can
 * push (a superset), OR only when every side is pushed.
 */
export function propertyTest(e: Expr, v: string, constant: Constant = literalOnly): PropertyTest | null {
  const t = propertyTestOf(e, v, constant)
  if (!t) return null
  const size = (x: PropertyTest): number => (x.op === 'and' || x.op === 'or' ? x.tests.reduce((a, y) => a + size(y), 1) : 1)
  return size(t) <= MAX_TESTS ? t : null
}

function propertyTestOf(e: Expr, v: string, constant: Constant): PropertyTest | null {
  const flipped: Record<string, '<' | '<=' | '>' | '>='> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' }
  switch (e.type) {
    case 'property': {
      const key = storedKey(e, v)
      return key ? { op: 'truthy', key } : null
    }
    case 'not': {
      const key = storedKey(e.expr, v)
      return key ? { op: 'falsy', key } : null
    }
    case 'isNull':
    case 'isNotNull': {
      const key = storedKey(e.expr, v)
      return key ? { op: e.type, key } : null
    }
    case 'compare': {
      if (e.op !== '=' && e.op !== '<' && e.op !== '<=' && e.op !== '>' && e.op !== '>=') return null
      for (const [a, b, op] of [
        [e.left, e.right, e.op],
        [e.right, e.left, e.op === '=' ? '=' : flipped[e.op]],
      ] as const) {
        const key = storedKey(a, v)
        if (!key) continue
        const value = constant(b)
        if (op === '=') return scalar(value) ? { op: 'eq', key, value } : null
        return typeof value === 'number' && Number.isFinite(value) ? { op: 'cmp', key, cmp: op, value } : null
      }
      return null
    }
    case 'in': {
      const key = storedKey(e.left, v)
      const list = key ? constant(e.right) : undefined
      if (!key || !Array.isArray(list)) return null
      const values = list.filter((x) => x !== null)
      return values.every(scalar) ? { op: 'in', key, values } : null
    }
    case 'startsWith':
    case 'endsWith':
    case 'contains': {
      const key = storedKey(e.left, v)
      // name: the scan's own text condition on the column (conditionsFor)
      if (!key || key === 'name') return null
      const value = constant(e.right)
      return plainString(value) && value.length > 0 ? { op: e.type, key, value } : null
    }
    case 'and': {
      const tests = [propertyTestOf(e.left, v, constant), propertyTestOf(e.right, v, constant)].filter((x): x is PropertyTest => x !== null)
      return tests.length === 0 ? null : tests.length === 1 ? tests[0] : { op: 'and', tests }
    }
    case 'or': {
      const l = propertyTestOf(e.left, v, constant)
      const r = l && propertyTestOf(e.right, v, constant)
      return l && r ? { op: 'or', tests: [l, r] } : null
    }
    default:
      return null
  }
}

/** The store-side necessary conditions of a node's labels and its own WHERE conditions. */
function conditionsFor(node: NodePattern, filters: Expr[], constant: Constant = literalOnly): ScanCondition[] {
  const out: ScanCondition[] = []
  const v = node.variable
  const labels = node.labels
  if (labels.includes('Tag_Tier_Zero') || (v !== null && filters.some((f) => implies(f, v, 'Tag_Tier_Zero')))) out.push({ type: 'tierZero' })
  if (labels.includes('Tag_Owned') || (v !== null && filters.some((f) => implies(f, v, 'Tag_Owned')))) out.push({ type: 'owned' })
  if (v === null) return out
  for (const f of filters) {
    if (f.type !== 'startsWith' && f.type !== 'endsWith' && f.type !== 'contains' && !(f.type === 'compare' && f.op === '=~')) continue
    const key = propertyOf(f.left, v)
    const lit = stringLiteral(f.right)
    if ((key !== 'objectid' && key !== 'name') || lit === null) continue
    if (f.type === 'compare') {
      const r = regexLiteral(lit)
      if (r) out.push({ type: 'text', column: key, op: 'contains', value: r.value, anyCase: r.anyCase })
    } else if (lit.length > 0) out.push({ type: 'text', column: key, op: f.type, value: lit, anyCase: false })
  }
  // stored property tests: the WHERE's conditions on v, and the pattern's map (`(u:User {enabled: true})`, as
  // match.ts nodeOk tests it: Cypher equality)
  for (const f of filters) {
    const test = propertyTest(f, v, constant)
    if (test) out.push({ type: 'property', test })
  }
  for (const { key, value } of node.properties?.entries ?? []) {
    const test = propertyTest({ type: 'compare', op: '=', left: { type: 'property', expr: { type: 'var', name: v }, key }, right: value }, v, constant)
    if (test) out.push({ type: 'property', test })
  }
  return out
}

/**
 * `[NOT] (v)-[:K]->()` (or `()-[:K]->(v)`, `EXISTS { … }` without WHERE): one relationship without variable,
 * properties or range, `v` without labels or properties there, the other end anonymous and unconstrained —
 * the shape run.ts existenceTest answers per batch. As a conjunct of the WHERE it is a necessary condition
 * of every result, so the scan of `v` may take it to the store (the engine still tests every node).
 */
function relatedCondition(f: Expr, v: string): ScanCondition | null {
  let e = f
  let negated = false
  if (e.type === 'not') {
    negated = true
    e = e.expr
  }
  const parts = e.type === 'patternPredicate' ? [e.pattern] : e.type === 'exists' && e.where === null ? e.patterns : null
  if (!parts || parts.length !== 1) return null
  const part = parts[0]
  if (part.variable || part.shortest || part.rels.length !== 1) return null
  const rel = part.rels[0]
  if (rel.variable || rel.properties || rel.range) return null
  const free = (n: NodePattern) => n.variable === null && n.labels.length === 0 && n.properties === null
  const self = (n: NodePattern) => n.variable === v && n.labels.length === 0 && n.properties === null
  const [a, b] = part.nodes
  const kinds = relationshipKinds(rel.types)
  if (self(a) && free(b)) return { type: 'related', direction: rel.direction, kinds, negated }
  if (free(a) && self(b)) return { type: 'related', direction: rel.direction === 'out' ? 'in' : rel.direction === 'in' ? 'out' : 'both', kinds, negated }
  return null
}

function scanFor(node: NodePattern, filters: Expr[], constant: Constant = literalOnly): NodeScan {
  let kinds: string[] | null = null
  for (const l of node.labels) {
    kinds = scanKindsFor(l)
    if (kinds) break
  }
  const scan: NodeScan = { kinds, objectid: null, name: null }
  const where = conditionsFor(node, filters, constant)
  if (where.length) scan.where = where
  for (const key of ['objectid', 'name'] as const) {
    const entry = node.properties?.entries.find((x) => x.key === key)
    if (entry && entry.value.type === 'literal' && typeof entry.value.value === 'string') scan[key] = entry.value.value
    if (node.variable && scan[key] === null)
      for (const f of filters) {
        const v = equalityOn(f, node.variable, key)
        if (v !== null) scan[key] = v
      }
  }
  return scan
}

/** Kinds that are usually the most numerous of their graph: a scan of one of them reads much of it. */
const NUMEROUS_KINDS = new Set(['User', 'Computer', 'Group', 'AZUser', 'AZGroup', 'AZServicePrincipal', 'AZDevice', 'AZApp'])

/**
 * How well a condition narrows a scan: a negation (`NOT …`, `<>`, `IS NOT NULL`) keeps nearly every node
 * (`NOT n.name STARTS WITH 'X'`), so it barely counts; a positive test (`=`, `STARTS WITH`, `= true`, …)
 * usually keeps few.
 */
function narrowing(e: Expr): number {
  if (e.type === 'not' || (e.type === 'compare' && e.op === '<>') || e.type === 'isNotNull') return 3
  return 20
}

/**
 * Which end of a part to walk from (higher is better): a bound node, then exact object id / name, then
 * conditions the store tests, then the node's own WHERE conditions (positive ones far more than negated
 * ones), then its label: a rare single kind (Domain, Container, CertTemplate, …) before a numerous one
 * (User, Computer, Group, …), before the broad Base / AZBase, before none. Static guesses, never a change
 * of meaning: either end gives the same answers.
 */
function score(node: NodePattern, bound: ReadonlySet<string>, filters: Expr[]): number {
  if (node.variable && bound.has(node.variable)) return 1000
  const s = scanFor(node, filters)
  const kinds = s.kinds === null ? 0 : s.kinds.length > 1 ? 5 : NUMEROUS_KINDS.has(s.kinds[0]) ? 10 : 15
  // property tests (issue 28) are not counted: `enabled = true` keeps most nodes, and the walk's end chosen
  // before they were pushed stays the same
  const pushed = (s.where ?? []).filter((c) => c.type !== 'property').length
  return (s.objectid !== null ? 500 : 0) + (s.name !== null ? 400 : 0) + pushed * 50 + filters.reduce((a, f) => a + narrowing(f), 0) + kinds
}

/**
 * The kinds a single relationship `[r:…]` may have given the WHERE's conjuncts about `r` alone: `NOT r:K`
 * drops K, `r:K` keeps only K (a relationship has one type). Only when the pattern names its types (an
 * untyped `[r]` has no list to narrow), `r` is new in this clause and not variable-length (there `r` is a
 * list). The narrowed list replaces the pattern's types (shortcuts such as AD_ATTACK_PATHS expanded), so the
 * store never returns relationships the WHERE would drop (`(n)-[r:AD_ATTACK_PATHS]->(m) WHERE NOT r:MemberOf`
 * reads no membership); the WHERE still tests every row. An empty result keeps the pattern as written
 * (an empty type list would mean any type): the WHERE then drops everything.
 */
function narrowedTypes(r: RelPattern, bound: ReadonlySet<string>, cs: Expr[]): string[] | null {
  const v = r.variable
  if (!v || r.range !== null || bound.has(v) || r.types.length === 0) return null
  const about = (e: Expr): string[] | null => (e.type === 'hasLabels' && e.expr.type === 'var' && e.expr.name === v ? e.labels : null)
  const drop = new Set<string>()
  let keep: string[] | null = null
  for (const c of cs) {
    const negated = c.type === 'not' ? about(c.expr) : null
    if (negated && negated.length === 1) drop.add(negated[0])
    for (const l of about(c) ?? []) keep = keep === null ? [l] : keep.filter((k) => k === l)
  }
  if (drop.size === 0 && keep === null) return null
  const only = keep === null ? null : new Set<string>(keep)
  const kinds = (relationshipKinds(r.types) ?? []).filter((k) => !drop.has(k) && (only === null || only.has(k)))
  return kinds.length > 0 ? kinds : null
}

/**
 * Property conditions on a single relationship `[r…]` new in this clause (not variable-length: there `r` is
 * a list) that every row must meet: top-level WHERE conjuncts `r.key` (true) and `r.key = literal` (either
 * side; string, number or boolean). The store applies them while reading (`RelCondition`), so a walk over
 * the whole graph testing `r.isacl` reads the ACL relationships only; the WHERE still tests every row.
 */
function relConditions(r: RelPattern, bound: ReadonlySet<string>, cs: Expr[]): RelCondition[] {
  const v = r.variable
  if (!v || r.range !== null || bound.has(v)) return []
  const keyOf = (e: Expr): string | null => (e.type === 'property' && isVar(e.expr, v) && /^[A-Za-z0-9_]+$/.test(e.key) ? e.key : null)
  const lit = (e: Expr): string | number | boolean | null =>
    e.type === 'literal' && (typeof e.value === 'string' || typeof e.value === 'number' || typeof e.value === 'boolean') ? e.value : null
  const out: RelCondition[] = []
  for (const c of cs) {
    const bare = keyOf(c)
    if (bare) out.push({ key: bare, value: true })
    else if (c.type === 'compare' && c.op === '=')
      for (const [a, b] of [
        [c.left, c.right],
        [c.right, c.left],
      ]) {
        const key = keyOf(a)
        const value = lit(b)
        if (key && value !== null) {
          out.push({ key, value })
          break
        }
      }
  }
  return out
}

function flip(r: RelPattern): RelPattern {
  return { ...r, direction: r.direction === 'out' ? 'in' : r.direction === 'in' ? 'out' : 'both' }
}

/**
 * `bound`: variables bound before this part. `where`: the clause's WHERE (null: none). `reversed` overrides
 * the end chosen by the static scores (match.ts smallerEnd: the end the store counts fewer nodes at); either
 * end gives the same rows.
 */
export function planPart(part: PatternPart, bound: ReadonlySet<string>, where: Expr | null, constant: Constant = literalOnly, reversedOverride?: boolean): PartPlan {
  const cs = conjuncts(where).filter((c) => !hasPatternPredicate(c))
  const filtersOf = (n: NodePattern): Expr[] => {
    if (!n.variable || bound.has(n.variable)) return []
    return cs.filter((c) => {
      const vars = variablesOf(c)
      return vars.has(n.variable!) && [...vars].every((v) => v === n.variable || bound.has(v))
    })
  }
  const all = part.nodes.map(filtersOf)
  const first = score(part.nodes[0], bound, all[0])
  const last = score(part.nodes[part.nodes.length - 1], bound, all[all.length - 1])
  const reversed = part.rels.length > 0 && (reversedOverride ?? last > first)
  const nodes = reversed ? [...part.nodes].reverse() : part.nodes
  const narrowed = part.rels.map((r) => {
    const types = narrowedTypes(r, bound, cs)
    return types ? { ...r, types } : r
  })
  const rels = reversed ? [...narrowed].reverse().map(flip) : narrowed
  const relWhere = rels.map((r) => relConditions(r, bound, cs))
  const filters = reversed ? [...all].reverse() : all
  /**
   * The store-side conditions of node `i` (walk order): its scan (labels, property map, own WHERE conditions)
   * and its WHERE's `[NOT] (v)-[:K]->()` conjuncts, each a necessary condition of every walk. A node they drop
   * is never tested by the engine, so on a node reached by a walk (not the first, whose scan has always taken
   * them) the pattern predicates are taken only when the node's own conditions cannot stop the query with an
   * error (a type error the engine would raise on it must still be raised). (A test that the walk's next hop
   * can leave the node, an EXISTS in the scan's or the level's statement, was measured: it cost more workerd
   * CPU at 100 k edges than the walks it saved, BENCHMARKS.md issue 28, and is not made.)
   */
  const storeSide = (i: number): NodeScan => {
    const s = scanFor(nodes[i], filters[i], constant)
    const v = nodes[i].variable
    const unfailing = filters[i].every((f) => cannotFail(f, v))
    const extra: ScanCondition[] = v && !bound.has(v) && (i === 0 || unfailing) ? conjuncts(where).flatMap((c) => relatedCondition(c, v) ?? []) : []
    if (extra.length) s.where = [...(s.where ?? []), ...extra]
    return s
  }
  const scan = storeSide(0)
  const farScans = rels.map((_, i) => storeSide(i + 1))
  const start = nodes[0].variable && bound.has(nodes[0].variable) ? `bound ${nodes[0].variable}` : `scan ${JSON.stringify(scan)}`
  const inStore = relWhere.flatMap((w, i) => w.map((c) => `${rels[i].variable}.${c.key} = ${JSON.stringify(c.value)}`))
  const joined = farScans.map((s, i) => (rels[i].range === null ? `${i + 1}: ${JSON.stringify(s)}` : null)).filter((x) => x !== null)
  return {
    part,
    reversed,
    nodes,
    rels,
    filters,
    relWhere,
    scan,
    farScans,
    describe: `${start}; ${rels.length} hop(s)${reversed ? ' from the last node' : ''}${inStore.length ? `; relationships read where ${inStore.join(' and ')}` : ''}${joined.length ? `; levels read joined with their far ends (hop ${joined.join(', hop ')})` : ''}`,
  }
}

/** A value read without evaluating anything that can fail: a literal, a variable, a property of node `v`. */
const atom = (e: Expr, v: string | null): boolean => e.type === 'literal' || e.type === 'var' || (e.type === 'property' && v !== null && isVar(e.expr, v))

/**
 * Whether a WHERE condition can never stop the query with an error, whatever node it is tested on (eval.ts):
 * a comparison, `=~` a string literal, STARTS WITH / ENDS WITH / CONTAINS, IS [NOT] NULL and IN a literal
 * list of plain values, label tests of a variable, and AND / OR / XOR / NOT of those (each a boolean or null,
 * never a type error). Anything else (`WHERE n.flag`: the value may not be a boolean; a function call) may.
 */
export function cannotFail(e: Expr, v: string | null): boolean {
  switch (e.type) {
    case 'and':
    case 'or':
    case 'xor':
      return cannotFail(e.left, v) && cannotFail(e.right, v)
    case 'not':
      return cannotFail(e.expr, v)
    case 'compare':
      return atom(e.left, v) && atom(e.right, v) && (e.op !== '=~' || (e.right.type === 'literal' && typeof e.right.value === 'string'))
    case 'startsWith':
    case 'endsWith':
    case 'contains':
      return atom(e.left, v) && atom(e.right, v)
    case 'isNull':
    case 'isNotNull':
      return atom(e.expr, v)
    case 'in':
      return atom(e.left, v) && e.right.type === 'list' && e.right.items.every((x) => x.type === 'literal')
    case 'hasLabels':
      return v !== null && isVar(e.expr, v)
    default:
      return false
  }
}


function disjuncts(e: Expr): Expr[] {
  return e.type === 'or' ? [...disjuncts(e.left), ...disjuncts(e.right)] : [e]
}

const anyOf = (es: Expr[]): Expr => es.reduce((l, r) => ({ type: 'or', left: l, right: r }))
const allOf = (es: Expr[]): Expr => es.reduce((l, r) => ({ type: 'and', left: l, right: r }))

/**
 * A WHERE whose term `A(a) OR B(b)` reads two different nodes of the part (each disjunct one node not bound
 * before, `cannotFail`), split into one WHERE per node: `A(a)`, then `NOT coalesce(A(a), false) AND B(b)`,
 * each with the WHERE's other terms. Walking the part once per WHERE starts each walk at the node its
 * disjunct selects (plan.ts attaches it there), where a single walk cannot cut at either end and makes every
 * row of the pattern ("AdminSDHolder protected Accounts and Groups": `(n:Base)-[:MemberOf*0..]->(m:Group)
 * WHERE n.objectid =~ … OR m.objectid =~ … OR n.objectid =~ …`, every membership path of the graph, refused
 * by the row limit at 20,000 users). Null when the WHERE has no such term.
 *
 * Why it is the same answer. A row passes `A OR B` when A is true, or A is not true (false or null) and B is
 * true: exactly one of the WHEREs above, so each row of the single walk is made by exactly one of the walks
 * (a walk's rows are its pattern's rows that pass its node conditions; the caller still applies the full
 * WHERE). Disjuncts that cannot fail raise no error the single walk would not, and vice versa. Only the order
 * of the rows changes (the first WHERE's walk, then the next), which Cypher leaves unspecified without ORDER BY.
 */
export function splitByEnd(part: PatternPart, bound: ReadonlySet<string>, where: Expr | null): Expr[] | null {
  if (part.shortest || part.rels.length === 0) return null
  const ends = new Set(part.nodes.flatMap((n) => (n.variable && !bound.has(n.variable) ? [n.variable] : [])))
  const cs = conjuncts(where)
  for (const [j, c] of cs.entries()) {
    if (c.type !== 'or') continue
    const groups = new Map<string, Expr[]>()
    let ok = true
    for (const d of disjuncts(c)) {
      const vars = [...variablesOf(d)].filter((v) => !bound.has(v))
      if (vars.length !== 1 || !ends.has(vars[0]) || !cannotFail(d, vars[0])) {
        ok = false
        break
      }
      groups.set(vars[0], [...(groups.get(vars[0]) ?? []), d])
    }
    if (!ok || groups.size < 2) continue
    const rest = cs.filter((_, k) => k !== j)
    const seen: Expr[] = []
    return [...groups.values()].map((g) => {
      const mine = anyOf(g)
      const notBefore = seen.map((e): Expr => ({ type: 'not', expr: { type: 'call', name: 'coalesce', distinct: false, args: [e, { type: 'literal', value: false }] } }))
      seen.push(mine)
      return allOf([...rest, ...notBefore, mine])
    })
  }
  return null
}
