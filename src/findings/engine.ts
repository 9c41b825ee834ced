/**
 * The analysis itself, pure: a compact graph (src/findings/graph.ts) and the kind rules in, findings and
 * per-(environment, type) risk numbers out. No I/O, no clock; unit tests feed it hand-built graphs.
 *
 * Rules (issue 6):
 *  - relationship finding: an edge of a finding kind from a non Tier Zero node to a Tier Zero node; its
 *    environment is the target's (edges into nodes without an environment produce nothing). Extension
 *    findings additionally need the environment's kind to be the finding's `environment_kind`;
 *  - list findings: enabled `User` with `hasspn` (Kerberoasting) / `dontreqpreauth` (ASREPRoasting), in the
 *    user's environment;
 *  - principals of an environment: its nodes having one of the environment kind's principal kinds;
 *  - ImpactCount: principals of the finding's environment that can reach the source (list: the principal),
 *    ExposureCount: those that can reach the target (list: the principal); percentages = count ÷ principals
 *    (0 when the environment has no principals); Severity from ImpactPercentage;
 *  - per (environment, type): FindingCount, ImpactedAssetCount = principals that can reach ANY source,
 *    ExposureCount = principals that can reach ANY target, CompositeRisk = 100 × ImpactedAssetCount ÷ principals.
 */
import type { FindingDef, FindingShape } from './catalogue'
import type { AnalysisGraph } from './graph'
import { LIST_ASREPROAST, LIST_KERBEROAST } from './graph'
import type { KindRules } from './kinds'
import { countReachingSteps, drain, stronglyConnectedComponents, type ReachItem } from './reach'

export type Severity = 'critical' | 'high' | 'moderate' | 'low'

/** Severity from ImpactPercentage (0..1): ≥ 0.95 critical, ≥ 0.80 high, ≥ 0.40 moderate, else low. */
export function severityOf(impactPercentage: number): Severity {
  if (impactPercentage >= 0.95) return 'critical'
  if (impactPercentage >= 0.8) return 'high'
  if (impactPercentage >= 0.4) return 'moderate'
  return 'low'
}

export function ratio(count: number, total: number): number {
  return total > 0 ? count / total : 0
}

export interface FindingMetrics {
  impactCount: number
  exposureCount: number
  principalCount: number
}

/** The identity of a finding across runs (list findings: `to` is the empty string). */
export interface FindingKey {
  finding: string
  environmentId: string
  from: string
  to: string
}

export interface FindingResult extends FindingKey, FindingMetrics {
  shape: FindingShape
  /** relationship findings: the edge kind */
  relKind: string | null
  impactPercentage: number
  exposurePercentage: number
  severity: Severity
}

export interface SparklineResult {
  environmentId: string
  finding: string
  findingCount: number
  impactedAssetCount: number
  impactCount: number
  exposureCount: number
  principalCount: number
  compositeRisk: number
}

export interface AnalysisStats {
  nodes: number
  edges: number
  traversableEdges: number
  components: number
  environments: number
  principals: number
  findings: number
}

export interface AnalysisResult {
  findings: FindingResult[]
  sparklines: SparklineResult[]
  /** environment object id → number of principals */
  principalCounts: Map<string, number>
  /** environment object id → number of its nodes the Tier Zero rules mark (src/assetgroups/tierzero.ts) */
  tierZeroCounts: Map<string, number>
  stats: AnalysisStats
}

export function withMetrics(key: FindingKey & { shape: FindingShape; relKind: string | null }, m: FindingMetrics): FindingResult {
  const impactPercentage = ratio(m.impactCount, m.principalCount)
  return {
    ...key,
    ...m,
    impactPercentage,
    exposurePercentage: ratio(m.exposureCount, m.principalCount),
    severity: severityOf(impactPercentage),
  }
}

export function compositeRisk(impactedAssetCount: number, principalCount: number): number {
  return principalCount > 0 ? (100 * impactedAssetCount) / principalCount : 0
}

interface Raw {
  def: number
  env: number
  from: number
  to: number
  srcItem: number
  tgtItem: number
}

export function analyse(g: AnalysisGraph, rules: KindRules, defs: readonly FindingDef[]): AnalysisResult {
  return drain(analyseSteps(g, rules, defs))
}

/**
 * `analyse` as steps: yields between the expensive phases (after the components, after every batch of
 * reach counting), so a Durable Object can let requests in while a large run computes. Same result.
 */
export function* analyseSteps(g: AnalysisGraph, rules: KindRules, defs: readonly FindingDef[]): Generator<void, AnalysisResult> {
  const nEnv = g.envs.names.length
  const kindName = g.kinds.names

  // Environment kind: what ingest recorded on the environment node (nodes.environment_kind); else the first
  // of the node's kinds that is an environment kind, else its primary kind; undefined when the graph has no
  // node for the environment.
  const envKind: (string | undefined)[] = new Array(nEnv)
  for (let e = 0; e < nEnv; e++) {
    const v = g.envNode[e]
    if (g.envKindHint[e]) {
      envKind[e] = g.envKindHint[e]
      continue
    }
    if (v < 0) continue
    let k = kindName[g.primaryKind[v]]
    for (let i = g.kindOffsets[v]; i < g.kindOffsets[v + 1]; i++) {
      const name = kindName[g.kindList[i]]
      if (rules.environmentKinds.has(name)) {
        k = name
        break
      }
    }
    envKind[e] = k
  }

  // Principals per environment.
  const principalKindIds: Set<number>[] = new Array(nEnv)
  for (let e = 0; e < nEnv; e++) {
    const ids = new Set<number>()
    for (const k of rules.principalKinds(envKind[e])) {
      const id = g.kinds.get(k)
      if (id !== undefined) ids.add(id)
    }
    principalKindIds[e] = ids
  }
  const byEnv: number[][] = Array.from({ length: nEnv }, () => [])
  let principals = 0
  for (let v = 0; v < g.nodeCount; v++) {
    const e = g.env[v]
    if (e < 0) continue
    const ids = principalKindIds[e]
    if (ids.size === 0) continue
    for (let i = g.kindOffsets[v]; i < g.kindOffsets[v + 1]; i++) {
      if (ids.has(g.kindList[i])) {
        byEnv[e].push(v)
        principals++
        break
      }
    }
  }
  const principalsByEnv = byEnv.map((a) => Int32Array.from(a))

  // Finding definitions by edge kind.
  const relDefs = new Map<string, number[]>()
  let kerberoast = -1
  let asreproast = -1
  defs.forEach((d, i) => {
    if (d.shape === 'relationship' && d.edgeKind) {
      const list = relDefs.get(d.edgeKind) ?? []
      list.push(i)
      relDefs.set(d.edgeKind, list)
    } else if (d.type === 'Kerberoasting') kerberoast = i
    else if (d.type === 'ASREPRoasting') asreproast = i
  })

  // Reach items: one per distinct (node, environment), shared by every finding that needs it.
  const items: ReachItem[] = []
  const itemIndex = new Map<number, number>()
  const nodeItem = (node: number, env: number): number => {
    const key = node * (nEnv + 1) + env
    let i = itemIndex.get(key)
    if (i === undefined) {
      i = items.length
      items.push({ seeds: [node], env })
      itemIndex.set(key, i)
    }
    return i
  }

  const raws: Raw[] = []
  for (const c of g.candidates) {
    const list = relDefs.get(kindName[c.kind])
    if (!list) continue
    const env = g.env[c.to]
    if (env < 0) continue
    for (const d of list) {
      const def = defs[d]
      if (def.source === 'extension' && envKind[env] !== def.environmentKind) continue
      raws.push({ def: d, env, from: c.from, to: c.to, srcItem: nodeItem(c.from, env), tgtItem: nodeItem(c.to, env) })
    }
  }
  for (let v = 0; v < g.nodeCount; v++) {
    const f = g.listFlags[v]
    if (f === 0) continue
    const env = g.env[v]
    if (env < 0) continue
    for (const [flag, d] of [
      [LIST_KERBEROAST, kerberoast],
      [LIST_ASREPROAST, asreproast],
    ] as const) {
      if (d >= 0 && f & flag) {
        const it = nodeItem(v, env)
        raws.push({ def: d, env, from: v, to: -1, srcItem: it, tgtItem: it })
      }
    }
  }

  // Group items: every source (and every target) of one type in one environment.
  interface Group {
    def: number
    env: number
    count: number
    sources: Set<number>
    targets: Set<number>
    srcItem: number
    tgtItem: number
  }
  const groups = new Map<string, Group>()
  for (const r of raws) {
    const key = `${r.def}\u0000${r.env}`
    let gr = groups.get(key)
    if (!gr) groups.set(key, (gr = { def: r.def, env: r.env, count: 0, sources: new Set(), targets: new Set(), srcItem: -1, tgtItem: -1 }))
    gr.count++
    gr.sources.add(r.from)
    gr.targets.add(r.to >= 0 ? r.to : r.from)
  }
  for (const gr of groups.values()) {
    gr.srcItem = items.length
    items.push({ seeds: [...gr.sources], env: gr.env })
    gr.tgtItem = items.length
    items.push({ seeds: [...gr.targets], env: gr.env })
  }

  yield
  const comps = stronglyConnectedComponents({ nodeCount: g.nodeCount, offsets: g.offsets, targets: g.targets })
  yield
  const counts = yield* countReachingSteps(comps, principalsByEnv, items)

  const envName = g.envs.names
  const findings: FindingResult[] = raws.map((r) => {
    const def = defs[r.def]
    return withMetrics(
      {
        finding: def.type,
        shape: def.shape,
        environmentId: envName[r.env],
        from: g.objectids[r.from],
        to: r.to >= 0 ? g.objectids[r.to] : '',
        relKind: def.shape === 'relationship' ? (def.edgeKind ?? null) : null,
      },
      { impactCount: counts[r.srcItem], exposureCount: counts[r.tgtItem], principalCount: principalsByEnv[r.env].length },
    )
  })
  findings.sort(compareKeys)

  const sparklines: SparklineResult[] = [...groups.values()].map((gr) => {
    const principalCount = principalsByEnv[gr.env].length
    const impacted = counts[gr.srcItem]
    return {
      environmentId: envName[gr.env],
      finding: defs[gr.def].type,
      findingCount: gr.count,
      impactedAssetCount: impacted,
      impactCount: impacted,
      exposureCount: counts[gr.tgtItem],
      principalCount,
      compositeRisk: compositeRisk(impacted, principalCount),
    }
  })
  sparklines.sort((a, b) => cmp(a.environmentId, b.environmentId) || cmp(a.finding, b.finding))

  const principalCounts = new Map<string, number>()
  for (let e = 0; e < nEnv; e++) principalCounts.set(envName[e], principalsByEnv[e].length)
  const tierZeroByEnv = new Array<number>(nEnv).fill(0)
  for (let v = 0; v < g.nodeCount; v++) if (g.tierZero[v] && g.env[v] >= 0) tierZeroByEnv[g.env[v]]++
  const tierZeroCounts = new Map<string, number>()
  for (let e = 0; e < nEnv; e++) tierZeroCounts.set(envName[e], tierZeroByEnv[e])

  return {
    findings,
    sparklines,
    principalCounts,
    tierZeroCounts,
    stats: {
      nodes: g.nodeCount,
      edges: g.edgeCount,
      traversableEdges: g.targets.length,
      components: comps.count,
      environments: nEnv,
      principals,
      findings: findings.length,
    },
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

export function compareKeys(a: FindingKey, b: FindingKey): number {
  return cmp(a.finding, b.finding) || cmp(a.environmentId, b.environmentId) || cmp(a.from, b.from) || cmp(a.to, b.to)
}

export function keyString(k: FindingKey): string {
  return `${k.finding}\u0000${k.environmentId}\u0000${k.from}\u0000${k.to}`
}
