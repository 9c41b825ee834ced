/**
 * The syntax tree the generated parser (cypher.parser.js, from cypher.peggy) returns. Plain data.
 */

export type Expr =
  | { type: 'literal'; value: string | number | boolean | null }
  | { type: 'list'; items: Expr[] }
  | { type: 'map'; entries: { key: string; value: Expr }[] }
  | { type: 'parameter'; text: string }
  | { type: 'var'; name: string }
  | { type: 'property'; expr: Expr; key: string }
  | { type: 'index'; expr: Expr; index: Expr }
  | { type: 'slice'; expr: Expr; from: Expr | null; to: Expr | null }
  | { type: 'hasLabels'; expr: Expr; labels: string[] }
  | { type: 'or' | 'xor' | 'and'; left: Expr; right: Expr }
  | { type: 'not'; expr: Expr }
  | { type: 'neg'; expr: Expr }
  | { type: 'compare'; op: '=~' | '<>' | '!=' | '<=' | '>=' | '=' | '<' | '>'; left: Expr; right: Expr }
  | { type: 'startsWith' | 'endsWith' | 'contains' | 'in'; left: Expr; right: Expr }
  | { type: 'isNull' | 'isNotNull'; expr: Expr }
  | { type: 'arith'; op: '+' | '-' | '*' | '/' | '%' | '^'; left: Expr; right: Expr }
  | { type: 'countStar' }
  | { type: 'call'; name: string; distinct: boolean; args: Expr[] }
  | { type: 'case'; subject: Expr | null; whens: { when: Expr; then: Expr }[]; otherwise: Expr | null }
  | { type: 'listComprehension'; variable: string; list: Expr; where: Expr | null; map: Expr | null }
  | { type: 'quantifier'; fn: 'any' | 'all' | 'none' | 'single'; variable: string; list: Expr; where: Expr }
  | { type: 'exists'; patterns: PatternPart[]; where: Expr | null }
  | { type: 'patternPredicate'; pattern: PatternPart }

export interface NodePattern {
  variable: string | null
  labels: string[]
  properties: Extract<Expr, { type: 'map' }> | null
}

export interface RelPattern {
  variable: string | null
  types: string[]
  /** null: exactly one relationship; else a variable-length range (max null = unbounded) */
  range: { min: number; max: number | null } | null
  properties: Extract<Expr, { type: 'map' }> | null
  direction: 'out' | 'in' | 'both'
}

export interface PatternPart {
  variable: string | null
  shortest: 'shortest' | 'all' | null
  nodes: NodePattern[]
  rels: RelPattern[]
}

export interface ProjectionItem {
  expr: Expr
  alias: string | null
  /** the expression as written (the column name when there is no alias) */
  text: string
}

export interface Projection {
  distinct: boolean
  star: boolean
  items: ProjectionItem[]
  orderBy: { expr: Expr; descending: boolean }[]
  skip: Expr | null
  limit: Expr | null
}

export type Clause =
  | { type: 'match'; optional: boolean; patterns: PatternPart[]; where: Expr | null }
  | { type: 'unwind'; expr: Expr; variable: string }
  | ({ type: 'with'; where: Expr | null } & Projection)
  | ({ type: 'return' } & Projection)
  | { type: 'update'; clause: 'CREATE' | 'MERGE' | 'SET' | 'DELETE' | 'REMOVE' }
  | { type: 'call' }

export interface Query {
  type: 'query'
  clauses: Clause[]
}
