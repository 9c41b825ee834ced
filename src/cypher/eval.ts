/**
 * Expression evaluation (synchronous): every node or relationship a row refers to is already in the
 * run's cache, and pattern predicates are answered before a batch is filtered (match.ts), so nothing
 * here touches the store. Pure apart from reading those caches.
 */
import type { Expr } from './ast'
import { CypherError } from './parse'
import type { EdgeRecord, NodeRecord } from './source'
import { hasLabel, labelsOf, nodeProperties, nodeProperty } from './labels'
import { compare, DateTimeVal, equals, fromJson, isMap, keyOf, NodeRef, PathVal, RelRef, type MapValue, type Value } from './values'

export type Row = Record<string, Value>

export interface GraphCache {
  node(id: number): NodeRecord
  rel(id: number): EdgeRecord
}

export interface EvalContext {
  graph: GraphCache
  /** the query's clock (datetime(), timestamp()) */
  now: number
  /** answers of pattern predicates / EXISTS for the rows of the batch being filtered */
  predicates: Map<Expr, WeakMap<Row, boolean>>
  /** values of aggregate calls for the group being projected */
  aggregates?: Map<Expr, Value>
  /** the query's budget: what expressions build is charged to its value limit (budget.ts DEFAULT_MAX_VALUES) */
  budget?: { chargeValues(n: number): void }
}

/**
 * Longest string an expression may build (characters): `+` and replace() are checked before building (a
 * doubling `WITH s + s AS s` chain would otherwise reach V8's string limit, far past the isolate's memory).
 */
export const MAX_STRING_LENGTH = 1024 * 1024

/** Charges what an expression built (a list's elements, a string's 16-character pieces). */
function built<V extends Value>(ctx: EvalContext, v: V): V {
  if (Array.isArray(v)) ctx.budget?.chargeValues(v.length)
  else if (typeof v === 'string') ctx.budget?.chargeValues(Math.ceil(v.length / 16))
  return v
}

/** A string of `length` characters is refused before it is built. */
function checkLength(length: number): void {
  if (length > MAX_STRING_LENGTH)
    throw new CypherError(`the query was stopped: it would build a string longer than ${MAX_STRING_LENGTH} characters (value limit)`)
}

export const AGGREGATES = new Set(['count', 'collect', 'sum', 'avg', 'min', 'max'])

export function isAggregate(e: Expr): boolean {
  return e.type === 'countStar' || (e.type === 'call' && AGGREGATES.has(e.name))
}

/** Does the expression contain an aggregate (outside nested scopes it cannot see into)? */
export function containsAggregate(e: Expr): boolean {
  if (isAggregate(e)) return true
  return children(e).some(containsAggregate)
}

export function children(e: Expr): Expr[] {
  switch (e.type) {
    case 'list':
      return e.items
    case 'map':
      return e.entries.map((x) => x.value)
    case 'property':
    case 'hasLabels':
    case 'not':
    case 'neg':
    case 'isNull':
    case 'isNotNull':
      return [e.expr]
    case 'index':
      return [e.expr, e.index]
    case 'slice':
      return [e.expr, ...(e.from ? [e.from] : []), ...(e.to ? [e.to] : [])]
    case 'or':
    case 'xor':
    case 'and':
    case 'compare':
    case 'startsWith':
    case 'endsWith':
    case 'contains':
    case 'in':
    case 'arith':
      return [e.left, e.right]
    case 'call':
      return e.args
    case 'case':
      return [...(e.subject ? [e.subject] : []), ...e.whens.flatMap((w) => [w.when, w.then]), ...(e.otherwise ? [e.otherwise] : [])]
    case 'listComprehension':
      return [e.list, ...(e.where ? [e.where] : []), ...(e.map ? [e.map] : [])]
    case 'quantifier':
      return [e.list, e.where]
    default:
      return []
  }
}

/** Variables an expression reads (free variables, ignoring the ones comprehensions bind). */
export function variablesOf(e: Expr, out = new Set<string>()): Set<string> {
  if (e.type === 'var') out.add(e.name)
  else if (e.type === 'listComprehension' || e.type === 'quantifier') {
    variablesOf(e.list, out)
    const inner = new Set<string>()
    for (const c of children(e).slice(1)) variablesOf(c, inner)
    inner.delete(e.variable)
    for (const v of inner) out.add(v)
  } else if (e.type === 'patternPredicate' || e.type === 'exists') {
    const parts = e.type === 'exists' ? e.patterns : [e.pattern]
    for (const p of parts) {
      for (const n of p.nodes) if (n.variable) out.add(n.variable)
      for (const r of p.rels) if (r.variable) out.add(r.variable)
    }
    if (e.type === 'exists' && e.where) variablesOf(e.where, out)
  } else for (const c of children(e)) variablesOf(c, out)
  return out
}

const bool = (v: Value): boolean | null => (v === null ? null : v === true ? true : v === false ? false : typeError('a boolean', v))

function typeError(expected: string, got: Value): never {
  throw new CypherError(`type mismatch: expected ${expected} but got ${describe(got)}`)
}

function describe(v: Value): string {
  if (v === null) return 'null'
  if (v instanceof NodeRef) return 'a node'
  if (v instanceof RelRef) return 'a relationship'
  if (v instanceof PathVal) return 'a path'
  if (v instanceof DateTimeVal) return 'a datetime'
  if (Array.isArray(v)) return 'a list'
  if (isMap(v)) return 'a map'
  return `a ${typeof v}`
}

// ---- regular expressions -------------------------------------------------------------------------------------

const regexCache = new Map<string, RegExp>()
export const MAX_REGEX_LENGTH = 1_000

/**
 * Cypher's `=~` (Java regular expressions, whole-string match) as a JavaScript RegExp. Leading inline
 * flags `(?i)`, `(?s)`, `(?m)` (any combination) become RegExp flags. Refused (400, too complex): patterns
 * longer than MAX_REGEX_LENGTH, back-references, and a quantified group that itself contains a quantifier
 * (`(a+)+`, `(a|a*)*`): the shapes of catastrophic backtracking, which no timer could interrupt.
 */
export function cypherRegex(pattern: string): RegExp {
  const hit = regexCache.get(pattern)
  if (hit) return hit
  if (pattern.length > MAX_REGEX_LENGTH) throw new CypherError('cypher query is too complex and is likely to result in poor or unstable database performance')
  let body = pattern
  let flags = ''
  for (;;) {
    const m = /^\(\?([ism]+)\)/.exec(body)
    if (!m) break
    for (const f of m[1]) if (!flags.includes(f)) flags += f
    body = body.slice(m[0].length)
  }
  if (unsafeRegex(body)) throw new CypherError('cypher query is too complex and is likely to result in poor or unstable database performance')
  let re: RegExp
  try {
    re = new RegExp(`^(?:${body})$`, flags)
  } catch {
    throw new CypherError(`invalid regular expression: ${pattern}`)
  }
  if (regexCache.size > 256) regexCache.clear()
  regexCache.set(pattern, re)
  return re
}

/** Unbounded quantifiers (`*`, `+`, `{n,}` or any `{…}`) a pattern may have (BloodHound's library uses at most 3). */
export const MAX_REGEX_QUANTIFIERS = 3

/**
 * The shapes of catastrophic backtracking (see cypherRegex), found by a scan of the regex, not of the
 * query. JavaScript's engine backtracks, and a single match cannot be interrupted, so these are refused
 * before any value is tested:
 *  - back-references (`\1`, `\k<name>`);
 *  - a quantified group that itself contains a quantifier (`(a+)+`, `(a*)?`, `(.{2}){9}`): exponential;
 *  - a group with alternatives repeated by `*`, `+` or `{…}` (`(.|.)*`, `(a|aa)+`): the alternatives
 *    can overlap, and then every way of splitting the text is tried, also exponential (`(a|b)?` is fine);
 *  - more than MAX_REGEX_QUANTIFIERS unbounded quantifiers (`.*.*.*.*x`): polynomial of that degree
 *    in the length of the text.
 */
export function unsafeRegex(src: string): boolean {
  /** per open group: it contains a quantifier / a top-level `|` */
  const quantifiedInside: boolean[] = [false]
  const alternation: boolean[] = [false]
  let unbounded = 0
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]
    if (ch === '\\') {
      if (/[1-9k]/.test(src[i + 1] ?? '')) return true
      i++
      continue
    }
    if (ch === '[') {
      // skip a character class
      i++
      if (src[i] === '^') i++
      if (src[i] === ']') i++
      while (i < src.length && src[i] !== ']') {
        if (src[i] === '\\') i++
        i++
      }
      continue
    }
    if (ch === '(') {
      quantifiedInside.push(false)
      alternation.push(false)
    } else if (ch === '|') alternation[alternation.length - 1] = true
    else if (ch === ')') {
      const inner = quantifiedInside.pop() ?? false
      const alternatives = alternation.pop() ?? false
      if (quantifiedInside.length === 0) {
        quantifiedInside.push(false)
        alternation.push(false)
      }
      const next = src[i + 1]
      const quantified = next === '*' || next === '+' || next === '{' || next === '?'
      if (inner && quantified) return true
      if (alternatives && quantified && next !== '?') return true
      if (inner || quantified) quantifiedInside[quantifiedInside.length - 1] = true
    } else if (ch === '*' || ch === '+' || ch === '{') {
      quantifiedInside[quantifiedInside.length - 1] = true
      if (++unbounded > MAX_REGEX_QUANTIFIERS) return true
    }
  }
  return false
}

// ---- evaluation ----------------------------------------------------------------------------------------------

export function evaluate(e: Expr, row: Row, ctx: EvalContext): Value {
  switch (e.type) {
    case 'literal':
      return e.value
    case 'list':
      return e.items.map((x) => evaluate(x, row, ctx))
    case 'map': {
      const out: MapValue = {}
      for (const { key, value } of e.entries) out[key] = evaluate(value, row, ctx)
      return out
    }
    case 'parameter':
      throw new CypherError('user-specified parameters are not supported')
    case 'var': {
      if (!(e.name in row)) throw new CypherError(`variable \`${e.name}\` not defined`)
      return row[e.name]
    }
    case 'property':
      return property(evaluate(e.expr, row, ctx), e.key, ctx)
    case 'index': {
      const base = evaluate(e.expr, row, ctx)
      const idx = evaluate(e.index, row, ctx)
      if (base === null || idx === null) return null
      if (Array.isArray(base)) {
        if (typeof idx !== 'number') typeError('an integer index', idx)
        const i = idx < 0 ? base.length + idx : idx
        return base[Math.trunc(i)] ?? null
      }
      if (typeof idx === 'string') return property(base, idx, ctx)
      return typeError('a list or map', base)
    }
    case 'slice': {
      const base = evaluate(e.expr, row, ctx)
      if (base === null) return null
      if (!Array.isArray(base)) typeError('a list', base)
      const from = e.from ? evaluate(e.from, row, ctx) : 0
      const to = e.to ? evaluate(e.to, row, ctx) : base.length
      if (from === null || to === null) return null
      if (typeof from !== 'number' || typeof to !== 'number') typeError('integer bounds', typeof from !== 'number' ? from : to)
      return base.slice(from, to)
    }
    case 'hasLabels': {
      const v = evaluate(e.expr, row, ctx)
      if (v === null) return null
      if (v instanceof NodeRef) {
        const n = ctx.graph.node(v.id)
        return e.labels.every((l) => hasLabel(n, l))
      }
      if (v instanceof RelRef) return e.labels.length === 1 && ctx.graph.rel(v.id).kind === e.labels[0]
      return typeError('a node', v)
    }
    case 'or': {
      const l = bool(evaluate(e.left, row, ctx))
      if (l === true) return true
      const r = bool(evaluate(e.right, row, ctx))
      if (r === true) return true
      return l === null || r === null ? null : false
    }
    case 'and': {
      const l = bool(evaluate(e.left, row, ctx))
      if (l === false) return false
      const r = bool(evaluate(e.right, row, ctx))
      if (r === false) return false
      return l === null || r === null ? null : true
    }
    case 'xor': {
      const l = bool(evaluate(e.left, row, ctx))
      const r = bool(evaluate(e.right, row, ctx))
      return l === null || r === null ? null : l !== r
    }
    case 'not': {
      const v = bool(evaluate(e.expr, row, ctx))
      return v === null ? null : !v
    }
    case 'neg': {
      const v = evaluate(e.expr, row, ctx)
      if (v === null) return null
      if (typeof v !== 'number') typeError('a number', v)
      return -v
    }
    case 'compare': {
      const l = evaluate(e.left, row, ctx)
      const r = evaluate(e.right, row, ctx)
      switch (e.op) {
        case '=':
          return equals(l, r)
        case '<>':
        case '!=': {
          const q = equals(l, r)
          return q === null ? null : !q
        }
        case '=~':
          if (l === null || r === null) return null
          if (typeof l !== 'string') return null
          if (typeof r !== 'string') typeError('a string pattern', r)
          return cypherRegex(r).test(l)
        default: {
          const c = compare(l, r)
          if (c === null) return null
          return e.op === '<' ? c < 0 : e.op === '>' ? c > 0 : e.op === '<=' ? c <= 0 : c >= 0
        }
      }
    }
    case 'startsWith':
    case 'endsWith':
    case 'contains': {
      const l = evaluate(e.left, row, ctx)
      const r = evaluate(e.right, row, ctx)
      if (typeof l !== 'string' || typeof r !== 'string') return null
      return e.type === 'startsWith' ? l.startsWith(r) : e.type === 'endsWith' ? l.endsWith(r) : l.includes(r)
    }
    case 'in': {
      const l = evaluate(e.left, row, ctx)
      const r = evaluate(e.right, row, ctx)
      if (r === null) return null
      if (!Array.isArray(r)) typeError('a list', r)
      let unknown = false
      for (const x of r) {
        const q = equals(l, x)
        if (q === true) return true
        if (q === null) unknown = true
      }
      return unknown ? null : false
    }
    case 'isNull':
      return evaluate(e.expr, row, ctx) === null
    case 'isNotNull':
      return evaluate(e.expr, row, ctx) !== null
    case 'arith':
      if (e.op === '+') {
        const l = evaluate(e.left, row, ctx)
        const r = evaluate(e.right, row, ctx)
        if ((typeof l === 'string' || typeof r === 'string') && (l !== null && r !== null)) checkLength(String(l).length + String(r).length)
        return built(ctx, arith(e.op, l, r))
      }
      return arith(e.op, evaluate(e.left, row, ctx), evaluate(e.right, row, ctx))
    case 'countStar':
    case 'call':
      if (isAggregate(e)) {
        const v = ctx.aggregates?.get(e)
        if (v === undefined) throw new CypherError('aggregation functions are only allowed in WITH and RETURN')
        return v
      }
      return callFunction(e as Extract<Expr, { type: 'call' }>, row, ctx)
    case 'case': {
      if (e.subject) {
        const s = evaluate(e.subject, row, ctx)
        for (const w of e.whens) if (equals(s, evaluate(w.when, row, ctx)) === true) return evaluate(w.then, row, ctx)
      } else {
        for (const w of e.whens) if (evaluate(w.when, row, ctx) === true) return evaluate(w.then, row, ctx)
      }
      return e.otherwise ? evaluate(e.otherwise, row, ctx) : null
    }
    case 'listComprehension': {
      const list = evaluate(e.list, row, ctx)
      if (list === null) return null
      if (!Array.isArray(list)) typeError('a list', list)
      ctx.budget?.chargeValues(list.length)
      const out: Value[] = []
      // one scope row for the whole list, its variable rebound per element (nothing keeps a reference to
      // it: pattern predicates, whose answers are keyed by row, are refused inside list expressions)
      const inner: Row = { ...row }
      for (const x of list) {
        inner[e.variable] = x
        if (e.where && evaluate(e.where, inner, ctx) !== true) continue
        out.push(e.map ? evaluate(e.map, inner, ctx) : x)
      }
      return out
    }
    case 'quantifier': {
      const list = evaluate(e.list, row, ctx)
      if (list === null) return null
      if (!Array.isArray(list)) typeError('a list', list)
      ctx.budget?.chargeValues(list.length)
      let yes = 0
      let unknown = 0
      const inner: Row = { ...row }
      for (const x of list) {
        inner[e.variable] = x
        const v = bool(evaluate(e.where, inner, ctx))
        if (v === true) yes++
        else if (v === null) unknown++
      }
      const no = list.length - yes - unknown
      switch (e.fn) {
        case 'any':
          return yes > 0 ? true : unknown > 0 ? null : false
        case 'all':
          return no > 0 ? false : unknown > 0 ? null : true
        case 'none':
          return yes > 0 ? false : unknown > 0 ? null : true
        case 'single':
          return yes > 1 ? false : unknown > 0 ? null : yes === 1
      }
      return null
    }
    case 'exists':
    case 'patternPredicate': {
      const answer = ctx.predicates.get(e)?.get(row)
      if (answer === undefined) throw new CypherError('pattern predicates are supported in WHERE clauses only (not inside list expressions)')
      return answer
    }
  }
}

function property(base: Value, key: string, ctx: EvalContext): Value {
  if (base === null) return null
  if (base instanceof NodeRef) return fromJson(nodeProperty(ctx.graph.node(base.id), key))
  if (base instanceof RelRef) return fromJson(ctx.graph.rel(base.id).properties[key])
  if (base instanceof DateTimeVal) {
    const d = new Date(base.ms)
    switch (key.toLowerCase()) {
      case 'epochseconds':
        return Math.floor(base.ms / 1000)
      case 'epochmillis':
        return base.ms
      case 'year':
        return d.getUTCFullYear()
      case 'month':
        return d.getUTCMonth() + 1
      case 'day':
        return d.getUTCDate()
      case 'hour':
        return d.getUTCHours()
      case 'minute':
        return d.getUTCMinutes()
      case 'second':
        return d.getUTCSeconds()
      default:
        throw new CypherError(`unsupported datetime property: ${key}`)
    }
  }
  if (isMap(base)) return base[key] ?? null
  return typeError('a node, relationship or map', base)
}

function arith(op: string, l: Value, r: Value): Value {
  if (l === null || r === null) return null
  if (op === '+') {
    if (Array.isArray(l)) return Array.isArray(r) ? [...l, ...r] : [...l, r]
    if (Array.isArray(r)) return [l, ...r]
    if (typeof l === 'string' || typeof r === 'string') {
      if ((typeof l === 'string' || typeof l === 'number') && (typeof r === 'string' || typeof r === 'number')) return String(l) + String(r)
      return typeError('strings or numbers', typeof l === 'string' ? r : l)
    }
  }
  if (l instanceof DateTimeVal && typeof r === 'number' && (op === '+' || op === '-')) return new DateTimeVal(op === '+' ? l.ms + r : l.ms - r)
  if (typeof l !== 'number') return typeError('a number', l)
  if (typeof r !== 'number') return typeError('a number', r)
  switch (op) {
    case '+':
      return l + r
    case '-':
      return l - r
    case '*':
      return l * r
    case '/':
      if (Number.isInteger(l) && Number.isInteger(r)) {
        if (r === 0) throw new CypherError('division by zero')
        return Math.trunc(l / r)
      }
      return l / r
    case '%':
      return l % r
    default:
      return l ** r
  }
}

function str(v: Value, fn: string): string | null {
  if (v === null) return null
  if (typeof v !== 'string') typeError(`a string for ${fn}()`, v)
  return v
}

function num(v: Value, fn: string): number | null {
  if (v === null) return null
  if (typeof v !== 'number') typeError(`a number for ${fn}()`, v)
  return v
}

function arity(e: Extract<Expr, { type: 'call' }>, min: number, max = min): void {
  if (e.args.length < min || e.args.length > max)
    throw new CypherError(`function ${e.name}() takes ${min === max ? min : `${min} to ${max}`} argument(s), got ${e.args.length}`)
}

export function toStringValue(v: Value): string | null {
  if (v === null) return null
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (v instanceof DateTimeVal) return new Date(v.ms).toISOString()
  return typeError('a string, number or boolean for toString()', v)
}

function callFunction(e: Extract<Expr, { type: 'call' }>, row: Row, ctx: EvalContext): Value {
  const args = () => e.args.map((a) => evaluate(a, row, ctx))
  switch (e.name) {
    case 'coalesce': {
      for (const a of e.args) {
        const v = evaluate(a, row, ctx)
        if (v !== null) return v
      }
      return null
    }
    case 'toupper':
    case 'tolower': {
      arity(e, 1)
      const s = str(args()[0], e.name)
      return s === null ? null : e.name === 'toupper' ? s.toUpperCase() : s.toLowerCase()
    }
    case 'tostring':
      arity(e, 1)
      return toStringValue(args()[0])
    case 'tointeger':
    case 'tofloat': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v.trim()) : typeof v === 'boolean' && e.name === 'tointeger' ? Number(v) : NaN
      if (v === '' || Number.isNaN(n)) return null
      return e.name === 'tointeger' ? Math.trunc(n) : n
    }
    case 'toboolean': {
      arity(e, 1)
      const v = args()[0]
      if (typeof v === 'boolean' || v === null) return v
      if (typeof v === 'string') return v.toLowerCase() === 'true' ? true : v.toLowerCase() === 'false' ? false : null
      return typeError('a string or boolean', v)
    }
    case 'size': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (typeof v === 'string' || Array.isArray(v)) return v.length
      return typeError('a string or list for size()', v)
    }
    case 'length': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (v instanceof PathVal) return v.rels.length
      if (typeof v === 'string' || Array.isArray(v)) return v.length
      return typeError('a path for length()', v)
    }
    case 'split': {
      arity(e, 2)
      const [s, sep] = args()
      if (s === null || sep === null) return null
      return built(ctx, str(s, 'split')!.split(str(sep, 'split')!))
    }
    case 'replace': {
      arity(e, 3)
      const [s, from, to] = args()
      if (s === null || from === null || to === null) return null
      const parts = built(ctx, str(s, 'replace')!.split(str(from, 'replace')!))
      const by = str(to, 'replace')!
      checkLength(parts.reduce((n, p) => n + p.length, 0) + (parts.length - 1) * by.length)
      return built(ctx, parts.join(by))
    }
    case 'substring': {
      arity(e, 2, 3)
      const [s, start, len] = args()
      if (s === null) return null
      const t = str(s, 'substring')!
      const a = num(start, 'substring') ?? 0
      return len === undefined || len === null ? t.slice(a) : t.slice(a, a + num(len, 'substring')!)
    }
    case 'left':
    case 'right': {
      arity(e, 2)
      const [s, n] = args()
      if (s === null) return null
      const t = str(s, e.name)!
      const k = num(n, e.name) ?? 0
      return e.name === 'left' ? t.slice(0, k) : k === 0 ? '' : t.slice(-k)
    }
    case 'trim':
    case 'ltrim':
    case 'rtrim': {
      arity(e, 1)
      const s = str(args()[0], e.name)
      if (s === null) return null
      return e.name === 'trim' ? s.trim() : e.name === 'ltrim' ? s.trimStart() : s.trimEnd()
    }
    case 'reverse': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (typeof v === 'string') return [...v].reverse().join('')
      if (Array.isArray(v)) return [...v].reverse()
      return typeError('a string or list', v)
    }
    case 'head':
    case 'last': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (!Array.isArray(v)) typeError(`a list for ${e.name}()`, v)
      return (e.name === 'head' ? v[0] : v[v.length - 1]) ?? null
    }
    case 'tail': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (!Array.isArray(v)) typeError('a list for tail()', v)
      return v.slice(1)
    }
    case 'range': {
      arity(e, 2, 3)
      const [a, b, s] = args().map((x) => num(x, 'range'))
      const step = s ?? 1
      if (a === null || b === null || step === 0) return null
      const n = Math.floor((b - a) / step) + 1
      if (n > 100_000) throw new CypherError('the query was stopped: range() would produce more than 100000 elements (range() size limit); use a smaller range')
      if (n > 0) ctx.budget?.chargeValues(n)
      return n <= 0 ? [] : Array.from({ length: n }, (_, i) => a + i * step)
    }
    case 'abs':
    case 'ceil':
    case 'floor':
    case 'round':
    case 'sqrt':
    case 'sign': {
      arity(e, 1)
      const n = num(args()[0], e.name)
      if (n === null) return null
      return e.name === 'abs' ? Math.abs(n) : e.name === 'ceil' ? Math.ceil(n) : e.name === 'floor' ? Math.floor(n) : e.name === 'round' ? Math.round(n) : e.name === 'sqrt' ? Math.sqrt(n) : Math.sign(n)
    }
    case 'labels': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (!(v instanceof NodeRef)) typeError('a node for labels()', v)
      return labelsOf(ctx.graph.node(v.id))
    }
    case 'type': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (!(v instanceof RelRef)) typeError('a relationship for type()', v)
      return v.kind
    }
    case 'id': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (v instanceof NodeRef || v instanceof RelRef) return v.id
      return typeError('a node or relationship for id()', v)
    }
    case 'keys':
    case 'properties': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      const props: MapValue =
        v instanceof NodeRef
          ? (fromJson(nodeProperties(ctx.graph.node(v.id))) as MapValue)
          : v instanceof RelRef
            ? (fromJson(ctx.graph.rel(v.id).properties) as MapValue)
            : isMap(v)
              ? v
              : typeError('a node, relationship or map', v)
      return e.name === 'keys' ? Object.keys(props).sort() : props
    }
    case 'nodes':
    case 'relationships': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (!(v instanceof PathVal)) typeError(`a path for ${e.name}()`, v)
      return e.name === 'nodes' ? v.nodes.map((id) => new NodeRef(id)) : [...v.rels]
    }
    case 'startnode':
    case 'endnode': {
      arity(e, 1)
      const v = args()[0]
      if (v === null) return null
      if (!(v instanceof RelRef)) typeError('a relationship', v)
      return new NodeRef(e.name === 'startnode' ? v.start : v.end)
    }
    case 'exists': {
      arity(e, 1)
      return args()[0] !== null
    }
    case 'datetime': {
      arity(e, 0, 1)
      if (e.args.length === 0) return new DateTimeVal(ctx.now)
      const v = args()[0]
      if (v === null) return null
      if (typeof v === 'string') {
        const ms = Date.parse(v)
        if (Number.isNaN(ms)) throw new CypherError(`invalid datetime: ${v}`)
        return new DateTimeVal(ms)
      }
      if (isMap(v) && typeof v.epochSeconds === 'number') return new DateTimeVal(v.epochSeconds * 1000)
      if (isMap(v) && typeof v.epochMillis === 'number') return new DateTimeVal(v.epochMillis)
      return typeError('a string or map for datetime()', v)
    }
    case 'timestamp':
      arity(e, 0)
      return ctx.now
    case 'tolist':
      arity(e, 1)
      return args()[0]
    default:
      throw new CypherError(`unknown or unsupported function: ${e.name}()`)
  }
}

export { keyOf }
