import { ApiError } from './errors'

/**
 * The one over-budget answer. Every request's work is bounded before it is done (docs/budgets.md lists
 * each budget, where it is enforced and its value); a request that would go past one is refused with
 * this envelope, never answered partly and never with a 500:
 *
 *   status   413 when the request's *content* is over a budget (an upload's inflated bytes, members,
 *            elements, D1 statements): the same status as the body-size limit, which is the same kind of
 *            refusal; 400 when what the request *asks for* is (edges a search may touch, an answer's
 *            size, skip): narrowing the query parameters is the fix.
 *   context  where to narrow: the query parameter (`query.skip`, `query.relationship_kinds`, ...) or `body`
 *   message  `<what> exceeds the <budget> budget of <N>: <how to narrow the request>`
 *
 * The budget's name and value are always in the message, so a client (or an operator reading a log
 * line) sees which limit was met without looking anything up.
 */
export interface OverBudget {
  /** the request part to change: `body`, `query.skip`, ... */
  context: string
  /** what went over, e.g. `the archive's inflated size (31457280 bytes)` */
  what: string
  /** the budget's documented name, e.g. `inflated bytes per upload` */
  budget: string
  limit: number
  /** how to narrow the request */
  narrow: string
}

export function overBudget(status: 400 | 413, b: OverBudget): ApiError {
  return new ApiError(status, `${b.what} exceeds the ${b.budget} budget of ${b.limit}: ${b.narrow}`, b.context)
}
