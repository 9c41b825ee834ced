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
 *  - Each rule's bytes count against the isolate's pool shared with the Cypher endpoint (budget.ts
 *    ISOLATE_POOL), so a run cannot take the isolate's memory from concurrent queries nor they from it. A rule
 *    refused only because other queries held the pool is run again (RULE_ATTEMPTS, RULE_RETRY_MS apart): Tier
 *    Zero must not depend on what users were querying at the time; after the last attempt it is recorded as
 *    any other refusal.
 *  - Rules see the graph as the previous complete run left it: a rule that tests `Tag_Tier_Zero` sees the
 *    Tier Zero of that run, never one half-computed by this run.
 */
import { DEFAULT_LIMITS, SharedMemoryLimit, withPooledBudget, type BytePool, type CypherLimits } from '../cypher/budget'
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

/** Attempts of a rule refused because concurrent queries held the isolate's memory pool, and the wait between. */
export const RULE_ATTEMPTS = 3
export const RULE_RETRY_MS = 2_000

export async function evaluateRules(
  db: D1Database,
  rules: readonly CypherRule[],
  opts: { limits?: CypherLimits; now?: number; pool?: BytePool; retryMs?: number } = {},
): Promise<RuleResult[]> {
  const out: RuleResult[] = []
  // Rules run one after the other: each has the whole budget, and a slow one cannot starve the next.
  for (const rule of rules) {
    for (let attempt = 1; ; attempt++) {
      try {
        const query = parseCypher(rule.cypher)
        const source = d1GraphSource(db, null)
        const objectids = await withPooledBudget(
          async (budget) => {
            const result = await runQuery(query, source, { budget, now: opts.now })
            const ids = referencedNodes(result.rows)
            await loadNodes(result.ctx, ids)
            return [...new Set(ids.map((id) => result.ctx.graph.node(id).objectid))]
          },
          { limits: opts.limits ?? DEFAULT_LIMITS, pool: opts.pool },
        )
        out.push({ rule, objectids, error: null })
      } catch (e) {
        if (e instanceof SharedMemoryLimit && attempt < RULE_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, opts.retryMs ?? RULE_RETRY_MS))
          continue
        }
        if (e instanceof CypherError) out.push({ rule, objectids: [], error: e.message.slice(0, MAX_ERROR) })
        else {
          console.error(JSON.stringify({ msg: 'cypher rule evaluation failed', selector_id: rule.selectorId, error: String(e).slice(0, 300) }))
          out.push({ rule, objectids: [], error: 'the rule could not be evaluated (internal error); it selected nothing in this run' })
        }
      }
      break
    }
  }
  return out
}

export function outcomes(results: readonly RuleResult[]): RuleOutcome[] {
  return results.map((r) => [r.rule.selectorId, r.objectids.length, r.error])
}
