/**
 * BloodHound's query-parameter column filters (`?column=op:value`, model/filter.go), for the read routes
 * that take them on arbitrary keys (`GET /api/v2/graphs/kinds`, `GET /api/v2/graph-schema/edges`).
 *
 * BloodHound's rules, kept here:
 * - a value of the form `op:value` is a filter; a value without an operator is silently ignored;
 * - an operator BloodHound does not know → 400 `there are errors in the query parameter filters specified`;
 * - a key that is not a filterable column → 400 `the specified column cannot be filtered: <key>`;
 * - a known operator the column does not take → 400
 *   `the specified filter predicate is not supported for this column: <key> <op>`.
 * Keys listed in `ignore` (paging and the like) are not columns. Pure.
 */
import { ApiError } from '../http/errors'

export const KNOWN_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', '~eq'] as const
export type Operator = (typeof KNOWN_OPERATORS)[number]

export interface ColumnFilter {
  op: Operator
  value: string
}

export const BAD_FILTERS = 'there are errors in the query parameter filters specified'

/**
 * Parses every `key=op:value` of `queries` (all values of every key, as `c.req.queries()` gives them).
 * `columns` maps each filterable column to the operators it takes. Throws the 400 envelope on the first
 * refused filter; returns the filters by column (in request order).
 */
export function parseColumnFilters(
  queries: Record<string, string[]>,
  columns: Record<string, readonly Operator[]>,
  ignore: readonly string[] = [],
): Map<string, ColumnFilter[]> {
  const out = new Map<string, ColumnFilter[]>()
  for (const [key, values] of Object.entries(queries)) {
    if (ignore.includes(key)) continue
    for (const raw of values) {
      const m = /^([~\w]+):(.*)$/s.exec(raw)
      if (!m) continue // BloodHound ignores a value without an operator
      const op = m[1]
      if (!(KNOWN_OPERATORS as readonly string[]).includes(op)) throw new ApiError(400, BAD_FILTERS, `query.${key}`)
      const allowed = Object.hasOwn(columns, key) ? columns[key] : undefined
      if (!allowed) throw new ApiError(400, `the specified column cannot be filtered: ${key}`, `query.${key}`)
      if (!allowed.includes(op as Operator))
        throw new ApiError(400, `the specified filter predicate is not supported for this column: ${key} ${op}`, `query.${key}`)
      const list = out.get(key) ?? []
      list.push({ op: op as Operator, value: m[2] })
      out.set(key, list)
    }
  }
  return out
}
