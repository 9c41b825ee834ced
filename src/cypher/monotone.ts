/**
 * Is a query's answer monotone in the graph it reads? Used by the evaluation of asset-group rules
 * (src/assetgroups/rules.ts) to skip evaluations whose answer is known to be empty.
 *
 * The property: for every graph G and every SUBGRAPH H of G (some of G's nodes, and some of the relationships
 * between them, each node and relationship with the same labels, type and properties as in G), every row of the
 * query's answer over H is a row of its answer over G, so the nodes the answer over H refers to are among those
 * the answer over G refers to. An environment's view (the Cypher source restricted to it: its nodes and the
 * relationships between them) is such a subgraph of the whole graph.
 *
 * Why it holds for the queries accepted here: a pattern (MATCH, without OPTIONAL) found in H is found in G with the
 * same bindings; an expression evaluated on bound values (properties, labels, ids, string and list functions, any
 * comparison, NOT included) depends on those values alone, and they are the same in H and G; UNWIND, WITH and
 * RETURN without aggregation, SKIP or LIMIT map each row to rows on their own (DISTINCT and ORDER BY only remove
 * duplicates and reorder). Refused, because their result over H can hold what the result over G does not:
 *  - OPTIONAL MATCH (a row with nulls over H where G has a match),
 *  - pattern predicates and EXISTS { } (NOT (n)-->() holds in H and not in G; a count of relationships differs),
 *  - aggregation (count(*) over H is smaller: `WITH count(n) AS c WHERE c < 10`), SKIP and LIMIT (the first rows
 *    over H are not the first over G),
 *  - shortestPath / allShortestPaths (a shortest path in H is not one in G when G has a shorter one),
 *  - anything else than MATCH, UNWIND, WITH and RETURN (updates and procedure calls, refused by the engine anyway).
 * The test is syntactic and conservative: a query it refuses may still be monotone (it is then evaluated as if it
 * were not, which costs time, never a different answer).
 */
import type { Expr, PatternPart, Projection, Query } from './ast'
import { children, isAggregate } from './eval'

function exprOk(e: Expr | null): boolean {
  if (e === null) return true
  if (e.type === 'patternPredicate' || e.type === 'exists' || isAggregate(e)) return false
  return children(e).every(exprOk)
}

function patternOk(p: PatternPart): boolean {
  if (p.shortest !== null) return false
  return p.nodes.every((n) => exprOk(n.properties)) && p.rels.every((r) => exprOk(r.properties))
}

function projectionOk(p: Projection): boolean {
  return p.skip === null && p.limit === null && p.items.every((i) => exprOk(i.expr)) && p.orderBy.every((o) => exprOk(o.expr))
}

export function isMonotone(query: Query): boolean {
  return query.clauses.every((c) => {
    switch (c.type) {
      case 'match':
        return !c.optional && c.patterns.every(patternOk) && exprOk(c.where)
      case 'unwind':
        return exprOk(c.expr)
      case 'with':
        return projectionOk(c) && exprOk(c.where)
      case 'return':
        return projectionOk(c)
      default:
        return false
    }
  })
}
