/**
 * A small hand-built graph and an in-memory GraphSource over it, for the engine's result tests. The
 * expected answers in the tests are worked out by hand from the picture below, not by the engine.
 *
 *   CORP (S-1-5-21-1):  ALICE -MemberOf-> HELPDESK -MemberOf-> DOMAIN ADMINS (-512) -GenericAll-> CORP.LOCAL
 *                       ALICE -MemberOf-> IT -MemberOf-> DOMAIN ADMINS
 *                       BOB -MemberOf-> DOMAIN ADMINS;  HELPDESK -AdminTo-> WS1;  ALICE -AdminTo-> WS1
 *                       WS1 -HasSession-> BOB;  DAVE (owned) -ForceChangePassword-> ALICE
 *   LAB (S-1-5-21-2):   CAROL -MemberOf-> DOMAIN ADMINS (CORP);  LAB.LOCAL
 *   Azure (TENANT):     ALICE@CONTOSO.COM
 */
import { withoutProperties, type EdgeRecord, type FarNodeTest, type GraphSource, type NodeRecord, type NodeScan } from '../../src/cypher/source'
import { PRESENTED_KEYS } from '../../src/graph/present'

export const CORP = 'S-1-5-21-1'
export const LAB = 'S-1-5-21-2'
export const TENANT = 'TENANT-1'

type N = [id: number, objectid: string, kinds: string[], name: string, env: string, props?: Record<string, unknown>]
const N: N[] = [
  [1, CORP, ['Domain'], 'CORP.LOCAL', CORP],
  [2, `${CORP}-512`, ['Group'], 'DOMAIN ADMINS@CORP.LOCAL', CORP],
  [3, 'U-ALICE', ['User'], 'ALICE@CORP.LOCAL', CORP, { enabled: true, pwdlastset: 1_000, title: 'admin' }],
  [4, 'U-BOB', ['User'], 'BOB@CORP.LOCAL', CORP, { enabled: false, pwdlastset: 2_000_000_000 }],
  [5, 'G-HELP', ['Group'], 'HELPDESK@CORP.LOCAL', CORP],
  [6, 'C-WS1', ['Computer'], 'WS1.CORP.LOCAL', CORP, { operatingsystem: 'Windows 10' }],
  [7, 'U-CAROL', ['User', 'Base'], 'CAROL@LAB.LOCAL', LAB, { enabled: true }],
  [8, 'AZ-ALICE', ['AZUser'], 'ALICE@CONTOSO.COM', TENANT],
  [9, LAB, ['Domain'], 'LAB.LOCAL', LAB],
  [10, 'U-DAVE', ['User'], 'DAVE@CORP.LOCAL', CORP, { system_tags: 'owned' }],
  [11, 'G-IT', ['Group'], 'IT@CORP.LOCAL', CORP],
]

type E = [id: number, start: number, kind: string, end: number, props?: Record<string, unknown>]
const E: E[] = [
  [1, 3, 'MemberOf', 5],
  [2, 5, 'MemberOf', 2],
  [3, 4, 'MemberOf', 2, { isprimarygroup: true }],
  [4, 5, 'AdminTo', 6],
  [5, 6, 'HasSession', 4],
  [6, 7, 'MemberOf', 2],
  [7, 2, 'GenericAll', 1],
  [8, 10, 'ForceChangePassword', 3],
  [9, 3, 'AdminTo', 6],
  [10, 3, 'MemberOf', 11],
  [11, 11, 'MemberOf', 2],
]

export const NODES: NodeRecord[] = N.map(([id, objectid, kinds, name, env, props]) => ({
  id,
  objectid,
  kind: kinds[0],
  kinds,
  name,
  environment_id: env,
  properties: { name, ...(props ?? {}) },
  updated_at: '2026-01-01T00:00:00.000Z',
}))

export const EDGES: EdgeRecord[] = E.map(([id, start, kind, end, props]) => ({ id, start, end, kind, properties: props ?? {}, updated_at: '2026-01-02T00:00:00.000Z' }))

export const nameOf = (id: number): string => NODES.find((n) => n.id === id)!.name!

/**
 * `access` null: everything; else the environment ids the caller may see. `nodeKeys`: nodes are read with
 * only these properties (as the D1 store with needs.ts nodePropertyKeys), null: whole; `presented` (needs.ts
 * nodeReads): with their other fields whole. Counts the calls made.
 */
export function memorySource(access: string[] | null = null, nodes = NODES, edges = EDGES, nodeKeys: string[] | null = null, presented = false): GraphSource & { calls: number } {
  const visible = (n: NodeRecord | undefined) => n !== undefined && (access === null || (n.environment_id !== null && access.includes(n.environment_id)))
  const read = (n: NodeRecord): NodeRecord =>
    nodeKeys === null
      ? n
      : presented
        ? // as the D1 store: the listed properties (missing: null) and the presented ones it has
          { ...n, properties: { ...Object.fromEntries(PRESENTED_KEYS.flatMap((k) => (n.properties[k] === undefined ? [] : [[k, n.properties[k]]]))), ...Object.fromEntries(nodeKeys.map((k) => [k, n.properties[k] ?? null])) } }
        : // as the D1 store: only the id, kinds, object id when listed and the listed properties; the rest blank
          { id: n.id, objectid: nodeKeys.includes('objectid') ? n.objectid : '', kind: '', kinds: n.kinds, name: null, environment_id: null, properties: Object.fromEntries(nodeKeys.map((k) => [k, n.properties[k] ?? null])), updated_at: '' }
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const src = {
    calls: 0,
    async scanNodes(scan: NodeScan, afterId: number, limit: number) {
      src.calls++
      return nodes
        .filter(
          (n) =>
            n.id > afterId &&
            visible(n) &&
            (scan.kinds === null || n.kinds.some((k) => scan.kinds!.includes(k))) &&
            (scan.objectid === null || n.objectid === scan.objectid) &&
            (scan.name === null || n.name === scan.name),
        )
        .sort((a, b) => a.id - b.id)
        .slice(0, limit)
        .map(read)
    },
    async nodesByIds(ids: number[]) {
      src.calls++
      return ids
        .map((id) => byId.get(id))
        .filter((n): n is NodeRecord => visible(n))
        .map(read)
    },
    async edgesByIds(ids: number[], withProperties: boolean) {
      src.calls++
      const want = new Set(ids)
      return edges
        .filter((e) => want.has(e.id) && visible(byId.get(e.start)) && visible(byId.get(e.end)))
        .map((e) => (withProperties ? e : withoutProperties({ id: e.id, start: e.start, end: e.end, kind: e.kind, updated_at: e.updated_at })))
    },
    async countRelationships(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, far: FarNodeTest | null, distinct: boolean) {
      src.calls++
      const set = new Set(ids)
      // written from the interface's words, not from the engine: every kind group met by a stored kind,
      // objectid the column, other keys the stored property (same JSON type and value)
      const passes = (n: NodeRecord) =>
        !far ||
        (far.kinds.every((any) => n.kinds.some((k) => any.includes(k))) &&
          far.properties.every(({ key, value }) => (key === 'objectid' ? n.objectid === value : n.properties[key] === value)))
      const others = new Map<number, number[]>()
      for (const e of edges) {
        if (kinds && !kinds.includes(e.kind)) continue
        const ends: [number, number][] = []
        if (direction !== 'in') ends.push([e.start, e.end])
        if (direction !== 'out' && !(direction === 'both' && e.start === e.end)) ends.push([e.end, e.start])
        for (const [near, other] of ends) {
          const o = byId.get(other)
          if (set.has(near) && visible(o) && passes(o!)) others.set(near, [...(others.get(near) ?? []), other])
        }
      }
      return new Map([...others].map(([id, os]) => [id, distinct ? new Set(os).size : os.length]))
    },
    async edgeProperties(ids: number[]) {
      src.calls++
      const want = new Set(ids)
      return new Map(edges.filter((e) => want.has(e.id) && visible(byId.get(e.start)) && visible(byId.get(e.end))).map((e) => [e.id, e.properties]))
    },
    async connected(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null) {
      src.calls++
      const set = new Set(ids)
      const out = new Set<number>()
      for (const e of edges) {
        if (kinds && !kinds.includes(e.kind)) continue
        if ((direction === 'out' || direction === 'both') && set.has(e.start) && visible(byId.get(e.end))) out.add(e.start)
        if ((direction === 'in' || direction === 'both') && set.has(e.end) && visible(byId.get(e.start))) out.add(e.end)
      }
      return out
    },
    async reach(seeds: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, limit: number, targets: number[]) {
      src.calls++
      // breadth-first over the visible nodes, stopping at `limit` nodes as the store's LIMIT does
      const seen = new Set<number>()
      let frontier = seeds.filter((id) => visible(byId.get(id)))
      for (const id of frontier) if (seen.size < limit) seen.add(id)
      while (frontier.length && seen.size < limit) {
        const next: number[] = []
        for (const e of edges) {
          if (kinds && !kinds.includes(e.kind)) continue
          const tos: number[] = []
          if ((direction === 'out' || direction === 'both') && frontier.includes(e.start)) tos.push(e.end)
          if ((direction === 'in' || direction === 'both') && frontier.includes(e.end)) tos.push(e.start)
          for (const to of tos)
            if (!seen.has(to) && visible(byId.get(to)) && seen.size < limit) {
              seen.add(to)
              next.push(to)
            }
        }
        frontier = next
      }
      return { nodes: seen.size, complete: seen.size < limit, found: targets.filter((t) => seen.has(t)) }
    },
    async expand(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null, withProperties: boolean) {
      src.calls++
      const set = new Set(ids)
      // as the D1 store: without properties unless asked (the engine must never read them then)
      const shape = (e: EdgeRecord): EdgeRecord => (withProperties ? e : withoutProperties({ id: e.id, start: e.start, end: e.end, kind: e.kind, updated_at: e.updated_at }))
      return edges.filter((e) => {
        if (kinds && !kinds.includes(e.kind)) return false
        const out = (direction === 'out' || direction === 'both') && set.has(e.start) && visible(byId.get(e.end))
        const inn = (direction === 'in' || direction === 'both') && set.has(e.end) && visible(byId.get(e.start))
        return out || inn
      }).map(shape)
    },
  }
  return src
}
