/**
 * One analysis run, start to finish: load the graph in keyset pages into typed arrays, analyse, reconcile
 * with the open findings, stage the plan, commit atomically. Called by the Analyzer Durable Object's alarm
 * (src/findings/analyzer.do.ts); also callable directly by tests.
 *
 * Idempotent per attempt: staging is cleared first and nothing visible changes before `commitRun`, so an
 * interrupted attempt is resumed simply by running the same run again.
 */
import { loadKindCatalog, type KindCatalog } from '../extensions/catalog'
import { postureRows } from './posture'
import { dataQualityInsertStatements } from './dataquality.store'
import { collectDataQuality } from './dataquality'
import {
  chunkJson,
  clearStaging,
  commitRun,
  lastCompletedAt,
  loadEdgesPage,
  loadHistoricPairs,
  loadNodesPage,
  loadOpenFindingsPage,
  stagePlan,
} from './analysis.store'
import { allFindingDefs } from './catalogue'
import { postProcess, type PostProcessSummary } from '../collectors/postprocess'
import { analyseSteps, type AnalysisStats } from './engine'
import { GraphBuilder, type AnalysisGraph, type NodeInput } from './graph'
import { BUILTIN_TRAVERSABLE, kindRules, type KindRules } from './kinds'
import { decodeEdgePage, NodePageDecoder } from './packed'
import { reconcile, sparklineRows, type OpenFinding } from './reconcile'
import { addTag, loadSelection } from '../assetgroups/assetgroups.store'
import { memberRows } from '../assetgroups/members'
import { evaluateRules, outcomes, scopeRows, type RuleResult } from '../assetgroups/rules'
import { evaluationStatements, replaceSelectorNodesStatements, ruleScopeStatements, type SelectorNodeRow } from '../assetgroups/selectors.store'
import type { CypherLimits } from '../cypher/budget'
import { noteLocalWrite } from '../graph/environments'

export interface RunOptions {
  nodePageSize?: number
  edgePageSize?: number
  /** runs after the plan is staged and before the commit (tests use it to read during a run) */
  beforeCommit?: () => Promise<void>
  /** budgets of each Cypher rule (default: the Cypher endpoint's, src/cypher/budget.ts); tests lower them */
  ruleLimits?: CypherLimits
  /** nodes per data quality page (default DATA_QUALITY_PAGE, src/findings/dataquality.ts); tests lower it */
  dataQualityPageSize?: number
}

export interface RunSummary {
  runId: number
  completedAt: string
  stats: AnalysisStats
  plan: { inserts: number; updates: number; closes: number; unchanged: number }
  durationMs: number
  /** post-processing of collector data at the start of the run */
  postProcessing: PostProcessSummary
  /** each enabled Cypher rule: the nodes it selected, and (null when none) which evaluations failed and why */
  rules: { selectorId: number; members: number; error: string | null }[]
}

/**
 * Page sizes of the graph loader. A page arrives packed (see analysis.store.ts): an edge costs about
 * 2 × (digits of a node id + 1) + 3 characters, so 10 000 edges with 7-digit ids are ~190 KB of text;
 * a node costs its object id, kinds and environment id plus ~30 characters, so 2 000 nodes are a few
 * hundred KB. Larger pages save round trips but hold more text in the isolate at once.
 */
export const NODE_PAGE = 2_000
export const EDGE_PAGE = 10_000
const FINDINGS_PAGE = 5_000

/** Commit time: now, but strictly after the previous run's, so string order of timestamps is run order. */
export function commitTime(nowMs: number, previous: string | null): string {
  const prev = previous ? Date.parse(previous) : NaN
  return new Date(Number.isFinite(prev) && prev >= nowMs ? prev + 1 : nowMs).toISOString()
}

/**
 * The graph in compact typed arrays, loaded in keyset pages. A function of its own so that the builder (and
 * its growth buffers) can be collected as soon as the graph is built. Exported for tests.
 */
export async function loadGraph(
  db: D1Database,
  catalog: KindCatalog,
  rules: KindRules,
  findingKinds: ReadonlySet<string>,
  nodePage: number,
  edgePage: number,
  /** object id → tags of the asset groups whose selectors name it (read at the start of the run) */
  selectorTags: ReadonlyMap<string, readonly string[]> = new Map(),
): Promise<AnalysisGraph> {
  const builder = new GraphBuilder({ isTraversable: (k) => rules.isTraversable(k), findingKinds })
  const nodes = new NodePageDecoder()
  const addNode = (n: NodeInput) => {
    const tags = selectorTags.get(n.objectid)
    builder.addNode(tags ? { ...n, selectedTags: tags } : n)
  }
  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const page = await loadNodesPage(db, after, nodePage)
    nodes.decode(page, addNode)
    if (page.count < nodePage) break
    after = page.lastId
  }

  // Only edges that can matter are transferred: traversable kinds and finding kinds.
  const relevant = new Set<string>(findingKinds)
  for (const k of [...BUILTIN_TRAVERSABLE, ...catalog.relationshipKinds.keys()]) if (rules.isTraversable(k)) relevant.add(k)
  const kinds = [...relevant]
  const kindsJson = JSON.stringify(kinds)
  const scratch = new Float64Array(3 * edgePage)
  const addEdge = (s: number, t: number, k: string) => builder.addEdge(s, t, k)
  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const page = await loadEdgesPage(db, after, edgePage, kindsJson)
    decodeEdgePage(page, kinds, scratch, addEdge)
    if (page.count < edgePage) break
    after = page.lastId
  }
  return builder.build()
}

export async function executeRun(db: D1Database, runId: number, opts: RunOptions = {}): Promise<RunSummary> {
  const started = Date.now()
  const nodePage = opts.nodePageSize ?? NODE_PAGE
  const edgePage = opts.edgePageSize ?? EDGE_PAGE
  await clearStaging(db)
  // Relationships BloodHound derives after ingest (DCSync, AdminTo from local groups, ...): written first,
  // so that this run analyses them (src/collectors/postprocess.ts).
  const post = await postProcess(db, new Date().toISOString())

  const catalog = await loadKindCatalog(db)
  const rules = kindRules(catalog)
  const defs = allFindingDefs(catalog)
  const findingKinds = new Set(defs.filter((d) => d.shape === 'relationship' && d.edgeKind).map((d) => d.edgeKind!))
  // Asset group selectors as they are now: administrators' additions count from this run on. Cypher rules are
  // evaluated first (src/assetgroups/rules.ts: per environment and over the whole graph, a failing evaluation
  // keeping its last good selection), over the graph as the previous run left it; the nodes they select join the
  // object-id selections, so the one Tier Zero rule (tierzero.ts) applies to both alike.
  const selection = await loadSelection(db)
  const ruleResults: RuleResult[] = await evaluateRules(db, selection.rules, { limits: opts.ruleLimits })
  for (const r of ruleResults) for (const id of r.objectids) addTag(selection.selectorTags, id, r.rule.tag)
  const graph = await loadGraph(db, catalog, rules, findingKinds, nodePage, edgePage, selection.selectorTags)

  // The computation yields between phases and batches; each pause gives the event loop a turn, so the
  // Analyzer object answers requests (e.g. requestAnalysis at the end of an ingest job) during a long run.
  const steps = analyseSteps(graph, rules, defs)
  let step = steps.next()
  while (!step.done) {
    await new Promise((r) => setTimeout(r, 0))
    step = steps.next()
  }
  const result = step.value

  const open: OpenFinding[] = []
  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const page = await loadOpenFindingsPage(db, after, FINDINGS_PAGE)
    open.push(...page)
    if (page.length < FINDINGS_PAGE) break
    after = page[page.length - 1].id
  }
  const plan = reconcile(open, result.findings)
  const sparklines = sparklineRows(result.sparklines, await loadHistoricPairs(db), result.principalCounts)
  await stagePlan(db, runId, plan, sparklines)

  if (opts.beforeCommit) await opts.beforeCommit()

  // Data quality per AD domain and Azure tenant (counts, completeness), read in pages now, written in the commit batch.
  const quality = await collectDataQuality(db, opts.dataQualityPageSize)

  const completedAt = commitTime(Date.now(), await lastCompletedAt(db))
  const counts = { inserts: plan.inserts.length, updates: plan.updates.length, closes: plan.closes.length, unchanged: plan.unchanged }
  const durationMs = Date.now() - started
  // The groups' members as this run computed them, replaced in the commit batch.
  const members = chunkJson(memberRows(graph, selection.groups))
  // Which nodes each selector picked (object ids it names, nodes its Cypher rule selected), replaced in the same
  // commit batch as the members, so the per-selector member lists describe this run (migration 0028).
  const selectorNodes: SelectorNodeRow[] = selection.objectSeeds.map((s) => [s.selectorId, s.value] as SelectorNodeRow)
  for (const r of ruleResults) for (const id of r.objectids) selectorNodes.push([r.rule.selectorId, id])
  // each rule's evaluation per scope (environment / whole graph) and the last good selections, in the same batch
  const scopes = scopeRows(ruleResults)
  const evaluation = [
    ...evaluationStatements(db, completedAt, outcomes(ruleResults)),
    ...replaceSelectorNodesStatements(db, chunkJson(selectorNodes)),
    ...ruleScopeStatements(db, completedAt, chunkJson(scopes.status), chunkJson(scopes.selections)),
    // data quality: one row per AD domain and per Azure tenant (src/findings/dataquality.ts)
    ...dataQualityInsertStatements(db, runId, completedAt, chunkJson(quality.ad), chunkJson(quality.azure)),
  ]
  // impact values change: an available-domains copy in this isolate is revalidated (graph/environments.ts)
  noteLocalWrite()
  try {
    await commitRun(db, runId, completedAt, { stats: result.stats, plan: counts, durationMs, posture: postureRows(result) }, members, evaluation)
  } finally {
    noteLocalWrite()
  }
  const ruleSummary = ruleResults.map((r) => ({ selectorId: r.rule.selectorId, members: r.objectids.length, error: r.error }))
  return { runId, completedAt, stats: result.stats, plan: counts, durationMs, postProcessing: post, rules: ruleSummary }
}
