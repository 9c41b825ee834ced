/**
 * Evaluation of Cypher rules (selectors with Cypher seeds) by an analysis run (docs/asset-groups.md, "Rules and
 * environments").
 *
 * Decisions, with their reasons:
 *  - One environment's data must never change Tier Zero in another (issue 24: a restricted ingester's nested
 *    groups in environment A pushed a global rule over its row budget, the rule selected nothing, and a Tier Zero
 *    account of environment B lost Tier Zero and its finding). So a rule is evaluated in SCOPES:
 *      · once per environment, over that environment's nodes only (the Cypher source restricted to it, exactly as
 *        for a reader of that one environment): its answer depends on that environment's data alone, and each
 *        environment's evaluation has the whole budget to itself (skipped when its answer is known to be empty: see
 *        "Cost" below);
 *      · once over the whole graph (scope WHOLE_GRAPH): it finds what no single environment holds, a pattern that
 *        crosses environments (a user of a child domain that is MemberOf the forest root's Enterprise Admins: the
 *        edge crosses a trust) and nodes without an environment. BloodHound evaluates rules over the whole graph, so
 *        dropping this pass would lose real Tier Zero; keeping it ALONE is what failed. Its contribution is stored as
 *        the nodes it found that no environment's own pass found.
 *  - A scope whose evaluation fails (a budget crossed, a refusal, a database error) keeps its LAST GOOD selection
 *    (asset_group_rule_selections, written by the run whose evaluation of that scope succeeded) instead of
 *    selecting nothing, and the failure is recorded for that scope (asset_group_rule_scopes: error, failing since,
 *    selection kept from). It is surfaced to administrators on the selector (`evaluation.failures`) and to every
 *    reader of the affected environment on the tag (`rule_failures`, only for the environments the caller can
 *    read; whole-graph failures only to callers who read every environment). A scope that has never succeeded
 *    selects nothing. When the scope succeeds again, its selection is recomputed and the failure cleared.
 *    So in issue 24's scenario A's own pass and the whole-graph pass fail (A keeps its last selection), B's pass
 *    succeeds: B's Tier Zero is B's rule answer, whatever A holds.
 *  - Last good selections belong to a seed (its id): changing a rule's Cypher replaces its seeds, and the new rule
 *    starts without a kept selection (a changed rule never keeps the old rule's nodes).
 *  - A rule runs as the system (no reader's access), through the same engine as POST /api/v2/graphs/cypher
 *    (parse → run), with the same budgets (src/cypher/budget.ts) unless the caller passes others, per scope.
 *    Only unrestricted administrators may write rules (src/assetgroups/tags.routes.ts).
 *  - Every node the answer refers to is selected: returned nodes, both ends of returned relationships and every
 *    node of returned paths (exactly the nodes the Cypher endpoint would show for the query).
 *  - Each evaluation's bytes count against the isolate's pool shared with the Cypher endpoint (budget.ts
 *    ISOLATE_POOL), so a run cannot take the isolate's memory from concurrent queries nor they from it. An
 *    evaluation refused only because other queries held the pool is run again (RULE_ATTEMPTS, RULE_RETRY_MS apart).
 *  - Rules see the graph as the previous complete run left it: a rule that tests `Tag_Tier_Zero` sees the Tier Zero
 *    of that run, never one half-computed by this run.
 *  - Cost: the whole-graph pass runs first, and an environment's own pass is skipped when its answer is known to be
 *    empty: the rule is MONOTONE (src/cypher/monotone.ts: MATCH / WHERE / WITH / UNWIND / RETURN without OPTIONAL
 *    MATCH, pattern predicates, aggregation, SKIP / LIMIT or shortest paths), so its answer over an environment's
 *    view (a subgraph of the whole graph) is contained in its answer over the whole graph, and the whole-graph pass
 *    succeeded and found no node of that environment. The skipped pass is recorded as what it would have been: a
 *    success selecting nothing (its failure, if any, cleared; its last good selection now empty). Only the
 *    environments holding nodes of the whole-graph answer are evaluated on their own, so a rule that selects in a
 *    few environments costs a few evaluations, not (environments + 1).
 *    Why those passes still run, rather than splitting the whole-graph answer by each node's environment: the split
 *    is NOT each environment's own answer when a pattern crosses environments (C's user MemberOf B's Enterprise
 *    Admins is in C's part of the split, and not in C's own answer). The scopes' last good selections must keep
 *    today's meaning, or a later failure of the whole-graph pass would keep the wrong nodes: were C's own
 *    selection to hold the cross-trust member, a membership removed in C would stay Tier Zero while another
 *    environment's data fails the whole-graph pass; were the whole-graph selection to hold every node it found, so
 *    would a membership removed in B (B's data must decide B's Tier Zero: tierzero-environments.test.ts).
 *    When the whole-graph pass fails (another environment's data exhausted a budget) or the rule is not monotone,
 *    every environment is evaluated on its own, as before: the guarantee above does not depend on the shortcut.
 *    A label scan for one environment reads that environment's rows from the index nodes_env (cypher.store.ts
 *    scanSql). Off the request path (the Analyzer's alarm). Measured by `npm run bench:rules` (BENCHMARKS.md).
 */
import { DEFAULT_LIMITS, SharedMemoryLimit, withPooledBudget, type BytePool, type CypherLimits } from '../cypher/budget'
import { d1GraphSource } from '../cypher/cypher.store'
import { CypherError, parseCypher } from '../cypher/parse'
import { referencedNodes } from '../cypher/present'
import { runQuery } from '../cypher/run'
import { isMonotone } from '../cypher/monotone'
import { loadNodes } from '../cypher/match'
import { loadRuleSelection, ruleEnvironments, type CypherRule, type RuleOutcome, type RuleScopeRow, type RuleSelectionRow } from './selectors.store'

/** The scope of the whole-graph pass (an environment's scope is its id). */
export const WHOLE_GRAPH = ''

export interface ScopeResult {
  /** environment id, or WHOLE_GRAPH */
  scope: string
  /** nodes this scope adds to the rule's selection in this run (its fresh answer, or its kept last good one) */
  objectids: string[]
  /** why this run's evaluation of the scope failed; null: it succeeded */
  error: string | null
  /** when it succeeded: the selection to keep as its last good one (null when it failed: the old one stays) */
  fresh: string[] | null
}

export interface RuleResult {
  rule: CypherRule
  /** every node the rule selects in this run (all scopes) */
  objectids: string[]
  /** null when every scope succeeded; else a summary naming the failing scopes */
  error: string | null
  scopes: ScopeResult[]
}

/** Longest error text recorded. */
const MAX_ERROR = 500

/** Attempts of an evaluation refused because concurrent queries held the isolate's memory pool, and the wait between. */
export const RULE_ATTEMPTS = 3
export const RULE_RETRY_MS = 2_000

interface Found {
  objectid: string
  environment: string | null
}

type Attempt = { ok: true; found: Found[] } | { ok: false; error: string }

async function evaluateScope(
  db: D1Database,
  rule: CypherRule,
  access: string | null,
  opts: { limits?: CypherLimits; now?: number; pool?: BytePool; retryMs?: number },
): Promise<Attempt> {
  for (let attempt = 1; ; attempt++) {
    try {
      const query = parseCypher(rule.cypher)
      const source = d1GraphSource(db, access)
      const found = await withPooledBudget(
        async (budget) => {
          const result = await runQuery(query, source, { budget, now: opts.now })
          const ids = referencedNodes(result.rows)
          await loadNodes(result.ctx, ids)
          const by = new Map<string, Found>()
          for (const id of ids) {
            const n = result.ctx.graph.node(id)
            by.set(n.objectid, { objectid: n.objectid, environment: n.environment_id })
          }
          return [...by.values()]
        },
        { limits: opts.limits ?? DEFAULT_LIMITS, pool: opts.pool },
      )
      return { ok: true, found }
    } catch (e) {
      if (e instanceof SharedMemoryLimit && attempt < RULE_ATTEMPTS) {
        await new Promise((resolve) => setTimeout(resolve, opts.retryMs ?? RULE_RETRY_MS))
        continue
      }
      if (e instanceof CypherError) return { ok: false, error: e.message.slice(0, MAX_ERROR) }
      console.error(JSON.stringify({ msg: 'cypher rule evaluation failed', selector_id: rule.selectorId, seed_id: rule.seedId, scope: access, error: String(e).slice(0, 300) }))
      return { ok: false, error: 'the rule could not be evaluated (internal error)' }
    }
  }
}

/** Whether the rule's Cypher is monotone (src/cypher/monotone.ts); a rule that does not parse is not. */
function monotone(rule: CypherRule): boolean {
  try {
    return isMonotone(parseCypher(rule.cypher))
  } catch {
    return false
  }
}

export async function evaluateRules(
  db: D1Database,
  rules: readonly CypherRule[],
  opts: { limits?: CypherLimits; now?: number; pool?: BytePool; retryMs?: number } = {},
): Promise<RuleResult[]> {
  if (rules.length === 0) return []
  const environments = await ruleEnvironments(db)
  const out: RuleResult[] = []
  // Rules and scopes run one after the other: each has the whole budget, and a slow one cannot starve the next.
  for (const rule of rules) {
    // The whole-graph pass first. When it succeeds and the rule is monotone, an environment holding none of the
    // nodes it found would find nothing on its own (see "Cost" above): its pass is not run, it succeeds with no
    // nodes. Every other environment is evaluated on its own, as before.
    const whole = await evaluateScope(db, rule, null, opts)
    const found = whole.ok && monotone(rule) ? new Set(whole.found.map((f) => f.environment)) : null
    const scopes: ScopeResult[] = []
    const selected = new Set<string>()
    /** environments whose own pass succeeded (run, or known empty) */
    const okEnvironments = new Set<string>()
    for (const environment of environments) {
      const r: Attempt = found && !found.has(environment) ? { ok: true, found: [] } : await evaluateScope(db, rule, JSON.stringify([environment]), opts)
      if (r.ok) {
        okEnvironments.add(environment)
        const ids = r.found.map((f) => f.objectid)
        for (const id of ids) selected.add(id)
        scopes.push({ scope: environment, objectids: ids, error: null, fresh: ids })
      } else {
        const kept = await loadRuleSelection(db, rule.seedId, environment)
        for (const id of kept) selected.add(id)
        scopes.push({ scope: environment, objectids: kept, error: r.error, fresh: null })
      }
    }
    if (whole.ok) {
      const added = whole.found.filter((f) => !selected.has(f.objectid))
      for (const f of added) selected.add(f.objectid)
      // Kept as the whole-graph pass's own selection: what only it can find (nodes without an environment, or of an
      // environment whose own pass succeeded without them: a pattern across environments). Nodes of an environment
      // whose own pass failed are selected in this run but not kept here (that environment keeps its own).
      const fresh = added.filter((f) => f.environment === null || okEnvironments.has(f.environment)).map((f) => f.objectid)
      scopes.push({ scope: WHOLE_GRAPH, objectids: added.map((f) => f.objectid), error: null, fresh })
    } else {
      const kept = await loadRuleSelection(db, rule.seedId, WHOLE_GRAPH)
      const added = kept.filter((id) => !selected.has(id))
      for (const id of added) selected.add(id)
      scopes.push({ scope: WHOLE_GRAPH, objectids: added, error: whole.error, fresh: null })
    }
    const failing = scopes.filter((s) => s.error !== null)
    const error =
      failing.length === 0
        ? null
        : `${failing.length} of ${scopes.length} evaluations failed, their last good selections are kept (${failing
            .map((s) => (s.scope === WHOLE_GRAPH ? 'whole graph' : `environment ${s.scope}`))
            .join(', ')}): ${failing[0].error}`.slice(0, MAX_ERROR)
    out.push({ rule, objectids: [...selected], error, scopes })
  }
  return out
}

export function outcomes(results: readonly RuleResult[]): RuleOutcome[] {
  return results.map((r) => [r.rule.selectorId, r.objectids.length, r.error])
}

/**
 * Each scope's evaluation for the run's commit batch (selectors.store.ts ruleScopeStatements): its status row, and
 * the new last good selection of every scope that succeeded.
 */
export function scopeRows(results: readonly RuleResult[]): { status: RuleScopeRow[]; selections: RuleSelectionRow[] } {
  const status: RuleScopeRow[] = []
  const selections: RuleSelectionRow[] = []
  for (const r of results)
    for (const s of r.scopes) {
      status.push([r.rule.seedId, r.rule.selectorId, s.scope, s.objectids.length, s.error])
      if (s.fresh) for (const id of s.fresh) selections.push([r.rule.seedId, s.scope, id])
    }
  return { status, selections }
}

/**
 * What a Cypher seed selects now, for BloodHound's preview (POST /api/v2/asset-group-tags/preview-selectors): one
 * evaluation over the whole graph, as the system, with the Cypher endpoint's budgets (the whole-graph pass of a run,
 * which for a monotone rule holds every environment's own answer too). On the request path, so a refusal for the
 * shared memory pool is retried quickly rather than RULE_RETRY_MS apart. Only callers with access to every
 * environment may preview (src/assetgroups/access.ts), so running as the system discloses nothing more.
 */
export async function previewRule(db: D1Database, cypher: string, now: number): Promise<{ ok: true; objectids: string[] } | { ok: false; error: string }> {
  const r = await evaluateScope(db, { selectorId: 0, seedId: 0, tag: '', cypher }, null, { now, retryMs: 200 })
  return r.ok ? { ok: true, objectids: r.found.map((f) => f.objectid) } : r
}
