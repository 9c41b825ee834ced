/**
 * Evaluation of Cypher rules (selectors with Cypher seeds) by an analysis run (docs/asset-groups.md).
 *
 * Decisions, with their reasons:
 *  - A rule runs as the system, over the whole graph (no environment restriction): it decides what is Tier
 *    Zero for everyone, and a rule written by an administrator must not change meaning with the reader.
 *    Only unrestricted administrators may write rules (src/assetgroups/tags.routes.ts), so no caller can use a
 *    rule to reach beyond its environments.
 *  - The rule runs through the same engine as POST /api/v2/graphs/cypher (parse → run), with the same budgets
 *    (src/cypher/budget.ts) unless the caller passes others. A rule that does not parse, is refused, or crosses
 *    a budget selects nothing in this run; its message is recorded on the selector (`eval_error`) and the run
 *    goes on. An unexpected failure (the database) is recorded the same way with a generic message.
 *  - Every node the answer refers to is selected: returned nodes, both ends of returned relationships and
 *    every node of returned paths (exactly the nodes the Cypher endpoint would show for the query).
 *  - Rules see the graph as the previous complete run left it: a rule that tests `Tag_Tier_Zero` sees the
 *    Tier Zero of that run, never one half-computed by this run.
 */
import { DEFAULT_LIMITS, type CypherLimits } from '../cypher/budget'
import { d1GraphSource } from '../cypher/cypher.store'
import { CypherError, parseCypher } from '../cypher/parse'
import { referencedNodes } from '../cypher/present'
import { runQuery } from '../cypher/run'
import { loadNodes } from '../cypher/match'
import type { CypherRule, RuleOutcome } from './selectors.store'

export interface RuleResult {
  rule: CypherRule
  objectids: string[]
  error: string | null
}

/** Longest error text recorded on a selector. */
const MAX_ERROR = 500

export async function evaluateRules(
  db: D1Database,
  rules: readonly CypherRule[],
  opts: { limits?: CypherLimits; now?: number } = {},
): Promise<RuleResult[]> {
  const out: RuleResult[] = []
  // Rules run one after the other: each has the whole budget, and a slow one cannot starve the next.
  for (const rule of rules) {
    try {
      const query = parseCypher(rule.cypher)
      const source = d1GraphSource(db, null)
      const result = await runQuery(query, source, { limits: opts.limits ?? DEFAULT_LIMITS, now: opts.now })
      const ids = referencedNodes(result.rows)
      await loadNodes(result.ctx, ids)
      const objectids = [...new Set(ids.map((id) => result.ctx.graph.node(id).objectid))]
      out.push({ rule, objectids, error: null })
    } catch (e) {
      if (e instanceof CypherError) out.push({ rule, objectids: [], error: e.message.slice(0, MAX_ERROR) })
      else {
        console.error(JSON.stringify({ msg: 'cypher rule evaluation failed', selector_id: rule.selectorId, error: String(e).slice(0, 300) }))
        out.push({ rule, objectids: [], error: 'the rule could not be evaluated (internal error); it selected nothing in this run' })
      }
    }
  }
  return out
}

export function outcomes(results: readonly RuleResult[]): RuleOutcome[] {
  return results.map((r) => [r.rule.selectorId, r.objectids.length, r.error])
}
