/**
 * The analysis graph in compact typed arrays (no object per edge): 100 k nodes and 1 M edges must fit in
 * the 128 MB isolate next to everything else.
 *
 *  - nodes are dense indexes 0..n-1 in load order; per node we keep its object id (needed for finding keys),
 *    its primary kind and all kinds (interned to small integers), its environment (interned), a Tier Zero
 *    bit and the two list-finding bits. Properties are never held: the loader extracts the few facts the
 *    rules need in SQL (`json_extract`) and drops the rest.
 *  - traversable edges go into a growable pair of Int32Arrays and are turned into CSR (offsets + targets)
 *    by `build()`: 4 bytes per edge end, 8 bytes per edge in total.
 *  - edges that can produce a relationship finding (a finding kind, non Tier Zero source, Tier Zero target)
 *    are kept separately as candidates; they are few.
 *
 * Memory at 100 k nodes / 1 M traversable edges: ~8 MB while loading, ~4.4 MB for the CSR, plus the object
 * id strings (~5–10 MB).
 */
import { isOwned, isTierZero, isTrue, type NodeFacts } from '../assetgroups/tierzero'

export class Interner {
  readonly names: string[] = []
  private readonly index = new Map<string, number>()
  id(name: string): number {
    let i = this.index.get(name)
    if (i === undefined) {
      i = this.names.length
      this.names.push(name)
      this.index.set(name, i)
    }
    return i
  }
  get(name: string): number | undefined {
    return this.index.get(name)
  }
}

export class IntVec {
  data: Int32Array
  length = 0
  constructor(capacity = 1024) {
    this.data = new Int32Array(Math.max(16, capacity))
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2)
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = v
  }
  toArray(): Int32Array {
    return this.data.slice(0, this.length)
  }
}

/** Growable vector of node ids: Float64, as node ids are random 52-bit integers (src/graph/ids.ts). */
export class IdVec {
  data: Float64Array
  length = 0
  constructor(capacity = 1024) {
    this.data = new Float64Array(Math.max(16, capacity))
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2)
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = v
  }
}

/** One node as the loader (or a test) supplies it. */
export interface NodeInput extends NodeFacts {
  /** nodes.id */
  id: number
  environmentId: string | null
  /** nodes.environment_kind: set by ingest when the node IS an environment (Domain, AZTenant, extension kind) */
  environmentKind?: string | null
}

export interface FindingCandidate {
  /** node indexes */
  from: number
  to: number
  /** interned edge kind */
  kind: number
}

export interface AnalysisGraph {
  nodeCount: number
  objectids: string[]
  /** primary kind per node (interned) */
  primaryKind: Int32Array
  /** all kinds per node, CSR */
  kindOffsets: Int32Array
  kindList: Int32Array
  /** environment per node (interned), -1 = none */
  env: Int32Array
  tierZero: Uint8Array
  /** 1 = the node is Owned (src/assetgroups/tierzero.ts `isOwned`) */
  owned: Uint8Array
  /** node index → tags of the asset groups whose selectors name the node (few: selectors are few) */
  selected: Map<number, readonly string[]>
  /** bit 1: enabled User with hasspn; bit 2: enabled User with dontreqpreauth */
  listFlags: Uint8Array
  kinds: Interner
  envs: Interner
  /** environment index → node index of the environment's own node, -1 when the graph lacks it */
  envNode: Int32Array
  /** environment index → the environment node's `environment_kind` as ingest recorded it, if any */
  envKindHint: (string | undefined)[]
  /** forward adjacency of traversable edges, CSR */
  offsets: Int32Array
  targets: Int32Array
  candidates: FindingCandidate[]
  edgeCount: number
}

export const LIST_KERBEROAST = 1
export const LIST_ASREPROAST = 2

export interface BuilderRules {
  isTraversable(kind: string): boolean
  /** edge kinds that produce relationship findings */
  findingKinds: ReadonlySet<string>
}

export class GraphBuilder {
  private readonly ids = new IdVec(1024)
  private readonly objectids: string[] = []
  private readonly primary = new IntVec(1024)
  private readonly kindOffsets = new IntVec(1024)
  private readonly kindList = new IntVec(2048)
  private readonly env = new IntVec(1024)
  /** bit 4: Tier Zero; bit 8: Owned; bits 1, 2: list findings */
  private readonly flags = new IntVec(1024)
  private readonly kinds = new Interner()
  private readonly envs = new Interner()
  /** environment object id → node index, for nodes that may be environments */
  private readonly envCandidates = new Map<string, number>()
  private readonly envKindOf = new Map<string, string>()
  private readonly src = new IntVec(4096)
  private readonly dst = new IntVec(4096)
  private readonly candidates: FindingCandidate[] = []
  private readonly selected = new Map<number, readonly string[]>()
  private lastId = -Infinity
  private sorted = true
  private idIndex: Map<number, number> | null = null
  private edges = 0
  private readonly traversableKind = new Map<number, boolean>()

  constructor(private readonly rules: BuilderRules) {
    this.kindOffsets.push(0)
  }

  get nodeCount(): number {
    return this.objectids.length
  }

  addNode(n: NodeInput): void {
    const idx = this.objectids.length
    if (n.id <= this.lastId) this.sorted = false
    this.lastId = n.id
    this.ids.push(n.id)
    this.idIndex?.set(n.id, idx)
    this.objectids.push(n.objectid)
    this.primary.push(this.kinds.id(n.kind))
    const kinds = n.kinds.length > 0 ? n.kinds : [n.kind]
    for (const k of kinds) this.kindList.push(this.kinds.id(k))
    this.kindOffsets.push(this.kindList.length)
    this.env.push(n.environmentId ? this.envs.id(n.environmentId) : -1)
    let f = 0
    if (isTierZero(n)) f |= 4
    if (isOwned(n)) f |= 8
    if (n.selectedTags && n.selectedTags.length > 0) this.selected.set(idx, n.selectedTags)
    if (kinds.includes('User') && isTrue(n.enabled)) {
      if (isTrue(n.hasspn)) f |= LIST_KERBEROAST
      if (isTrue(n.dontreqpreauth)) f |= LIST_ASREPROAST
    }
    this.flags.push(f)
    // A node is (possibly) an environment when it is its own environment (the graph contract: an
    // environment node's environment_id is its own object id) or has no environment at all.
    if (n.environmentKind || n.environmentId === n.objectid || n.environmentId === null) {
      if (!this.envCandidates.has(n.objectid)) this.envCandidates.set(n.objectid, idx)
      if (n.environmentKind) this.envKindOf.set(n.objectid, n.environmentKind)
    }
  }

  /** nodes.id → node index, or -1 */
  indexOf(id: number): number {
    if (this.sorted) {
      const a = this.ids.data
      let lo = 0
      let hi = this.ids.length - 1
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1
        const v = a[mid]
        if (v === id) return mid
        if (v < id) lo = mid + 1
        else hi = mid - 1
      }
      return -1
    }
    if (!this.idIndex) {
      this.idIndex = new Map()
      for (let i = 0; i < this.ids.length; i++) this.idIndex.set(this.ids.data[i], i)
    }
    return this.idIndex.get(id) ?? -1
  }

  /** An edge by nodes.id; edges whose ends were not loaded are skipped (a concurrent ingest added them). */
  addEdge(startId: number, endId: number, kind: string): void {
    const s = this.indexOf(startId)
    const t = this.indexOf(endId)
    if (s < 0 || t < 0) return
    this.edges++
    const k = this.kinds.id(kind)
    let trav = this.traversableKind.get(k)
    if (trav === undefined) {
      trav = this.rules.isTraversable(kind)
      this.traversableKind.set(k, trav)
    }
    if (trav && s !== t) {
      this.src.push(s)
      this.dst.push(t)
    }
    if (this.rules.findingKinds.has(kind) && (this.flags.data[s] & 4) === 0 && (this.flags.data[t] & 4) !== 0) {
      this.candidates.push({ from: s, to: t, kind: k })
    }
  }

  build(): AnalysisGraph {
    const n = this.objectids.length
    const m = this.src.length
    const offsets = new Int32Array(n + 1)
    const src = this.src.data
    const dst = this.dst.data
    for (let i = 0; i < m; i++) offsets[src[i] + 1]++
    for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i]
    const fill = offsets.slice(0, n)
    const targets = new Int32Array(m)
    for (let i = 0; i < m; i++) targets[fill[src[i]]++] = dst[i]
    const tierZero = new Uint8Array(n)
    const owned = new Uint8Array(n)
    const listFlags = new Uint8Array(n)
    const flags = this.flags.data
    for (let i = 0; i < n; i++) {
      tierZero[i] = flags[i] & 4 ? 1 : 0
      owned[i] = flags[i] & 8 ? 1 : 0
      listFlags[i] = flags[i] & 3
    }
    const envNode = new Int32Array(this.envs.names.length).fill(-1)
    const envKindHint: (string | undefined)[] = []
    for (let e = 0; e < envNode.length; e++) {
      envNode[e] = this.envCandidates.get(this.envs.names[e]) ?? -1
      envKindHint.push(this.envKindOf.get(this.envs.names[e]))
    }
    return {
      nodeCount: n,
      objectids: this.objectids,
      primaryKind: this.primary.toArray(),
      kindOffsets: this.kindOffsets.toArray(),
      kindList: this.kindList.toArray(),
      env: this.env.toArray(),
      tierZero,
      owned,
      selected: this.selected,
      listFlags,
      kinds: this.kinds,
      envs: this.envs,
      envNode,
      envKindHint,
      offsets,
      targets,
      candidates: this.candidates,
      edgeCount: this.edges,
    }
  }
}

/**
 * A NodeInput from a node record with its full property object (tests and tools; the D1 loader extracts
 * the same facts in SQL). `isTierZero` falls back to the lower-case spelling like the loader does.
 */
export function nodeInputFromRecord(r: {
  id: number
  objectid: string
  kinds: string[]
  environment_id: string | null
  properties: Record<string, unknown>
}): NodeInput {
  const p = r.properties
  return {
    id: r.id,
    objectid: r.objectid,
    kind: r.kinds[0],
    kinds: r.kinds,
    environmentId: r.environment_id,
    systemTags: p.system_tags,
    isTierZero: isTrue(p.isTierZero) ? p.isTierZero : p.istierzero,
    enabled: p.enabled,
    hasspn: p.hasspn,
    dontreqpreauth: p.dontreqpreauth,
    templateid: p.templateid,
  }
}
