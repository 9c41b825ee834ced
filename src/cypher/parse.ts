/**
 * Cypher text → syntax tree, with every refusal decided on the tree (never by searching the text).
 * Pure. Messages are BloodHound's (DAWGS cypher/frontend) where it has one.
 */
import type { Clause, Expr, PatternPart, Query } from './ast'
import { parse as peggyParse, SyntaxError as PeggySyntaxError } from './cypher.parser.js'
import { cypherRegex } from './eval'

/** A query the service refuses or cannot run: always a 400 with this message. */
export class CypherError extends Error {
  /** how the patterns were being matched when a running query was stopped (run.ts runQuery; the plan header of a refusal) */
  plans?: string[]
  constructor(message: string) {
    super(message)
    this.name = 'CypherError'
  }
}

export const MESSAGES = {
  invalidInput: 'invalid input',
  parameters: 'user-specified parameters are not supported',
  procedures: 'procedure invocation is not supported',
  updating: 'updating clauses are not supported',
  tooComplex: 'cypher query is too complex and is likely to result in poor or unstable database performance',
} as const

/** Longest query text accepted (characters); BloodHound's library queries are all under 2 KB. */
export const MAX_QUERY_LENGTH = 64 * 1024
/** Most syntax-tree nodes accepted (a guard against enormous generated queries). */
export const MAX_SYNTAX_NODES = 20_000
/**
 * Deepest syntax tree accepted. The engine evaluates expressions recursively, so a tree the parser could
 * still build (`RETURN NOT NOT … true` 2,000 times) would exhaust the isolate's stack while running; it is
 * refused here instead. The public Query Library's deepest query is 19 levels.
 */
export const MAX_SYNTAX_DEPTH = 200

export function parseCypher(text: string): Query {
  if (text.trim() === '') throw new CypherError(MESSAGES.invalidInput)
  if (text.length > MAX_QUERY_LENGTH) throw new CypherError(MESSAGES.tooComplex)
  let query: Query
  try {
    query = peggyParse(text)
  } catch (e) {
    if (e instanceof PeggySyntaxError) {
      // ANTLR's convention (BloodHound's parser): 1-based line, 0-based column.
      const { line, column } = e.location.start
      throw new CypherError(`line ${line}:${column - 1} ${e.message}`)
    }
    // Deeply nested input exhausts the recursive-descent parser's stack: refused, never a 5xx.
    if (e instanceof RangeError) throw new CypherError(MESSAGES.tooComplex)
    throw e
  }
  refuse(query)
  return query
}

/**
 * Walks the tree once: updating clauses, procedure calls and parameters are refused (in that order of
 * precedence, so a query with several gets one stable message), as is a tree above MAX_SYNTAX_NODES or
 * MAX_SYNTAX_DEPTH and a literal `=~` pattern of a catastrophic shape (eval.ts unsafeRegex).
 */
function refuse(query: Query): void {
  let nodes = 0
  let parameter = false
  const visit = (v: unknown, depth = 0): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth)
      return
    }
    if (v === null || typeof v !== 'object') return
    if (++nodes > MAX_SYNTAX_NODES || depth > MAX_SYNTAX_DEPTH) throw new CypherError(MESSAGES.tooComplex)
    if ((v as Expr).type === 'parameter') parameter = true
    // A literal pattern is checked (and compiled) here, so a catastrophic one is refused before any work.
    const e = v as Expr
    if (e.type === 'compare' && e.op === '=~' && e.right.type === 'literal' && typeof e.right.value === 'string') cypherRegex(e.right.value)
    for (const x of Object.values(v)) visit(x, depth + 1)
  }
  const clauses: Clause[] = query.clauses
  if (clauses.some((c) => c.type === 'update')) throw new CypherError(MESSAGES.updating)
  if (clauses.some((c) => c.type === 'call')) throw new CypherError(MESSAGES.procedures)
  try {
    visit(clauses)
  } catch (e) {
    if (e instanceof RangeError) throw new CypherError(MESSAGES.tooComplex)
    throw e
  }
  if (parameter) throw new CypherError(MESSAGES.parameters)
  const last = clauses[clauses.length - 1]
  if (last.type !== 'return') throw new CypherError('a query must end with RETURN')
  clauses.forEach((c, i) => {
    if (c.type === 'return' && i !== clauses.length - 1) throw new CypherError('RETURN can only be used at the end of the query')
  })
}

/** Every pattern part of a query's MATCH clauses (for tests and planning). */
export function patternsOf(query: Query): PatternPart[] {
  return query.clauses.flatMap((c) => (c.type === 'match' ? c.patterns : []))
}
