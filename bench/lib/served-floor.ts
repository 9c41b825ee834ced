/// <reference types="node" />
/**
 * The served floor of the Cypher benchmark (issue 28): the library-shaped questions of bench/cypher.ts
 * (`compareCases`) answered in memory from the generated graph AND presented as the service presents them for
 * `include_properties: false` (BloodHound's graph shape, src/cypher/present.ts: `{"data":{"nodes":{id:{label,
 * kind,kinds,objectId,isTierZero,isOwnedObject,lastSeen}},"edges":[{source,target,label,kind,lastSeen}],
 * "literals":[{key,value}]}}`), serialised with JSON.stringify and served over HTTP from this process, so the
 * bench times it as it times the service: same client, same signed request and body, send to last byte. The
 * compute floor (cypher.ts) only counts the answer; this one gives the same answer the same way, so service ÷
 * served floor is what the engine and its storage cost over an in-memory engine behind a local HTTP hop.
 *
 * Same answer, not just the same size: a LIMIT without ORDER BY may return any rows, and the service returns
 * the first ones in the order of its internal node ids (random, src/graph/ids.ts; onehop.ts and match.ts walk
 * the start nodes by id and each node's relationships by (kind, other end's id); distinct.ts keeps a value's
 * first node by id; topk.ts breaks ties by id). The floor is given those ids (`ids`, read from the service
 * before anything is timed) and walks in the same order, so its rows are the service's rows; it also keys its
 * nodes by them, so both answers have the same bytes but for `lastSeen` (the service's is the ingest time,
 * `lastSeen` here is one the service gave) and `label` where a stored name differs. `answerDifference` checks
 * that before anything is timed.
 *
 * Built before the clock starts (as a store has its indexes): the start nodes in id order and per-kind
 * adjacency with each node's relationships in the far end's id order. Per request: the walk, every node and
 * edge presented (src/graph/present.ts pathNode, src/cypher/labels.ts labelsOf and the one Tier Zero rule),
 * JSON.stringify, the HTTP answer. Pure but for `startServedFloor` (a node:http server on 127.0.0.1).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { GenGraph, GenNode } from './generate'
import { pathNode, type NodeRecord } from '../../src/graph/present'
import { isOwnedNode, isTierZeroNode, labelsOf } from '../../src/cypher/labels'

export interface FloorNode {
  label: string
  kind: string
  kinds: string[]
  objectId: string
  isTierZero: boolean
  isOwnedObject: boolean
  lastSeen: string
}
export interface FloorEdge {
  source: string
  target: string
  label: string
  kind: string
  lastSeen: string
}
/** The service's Cypher answer for `include_properties: false` (src/cypher/present.ts CypherResult). */
export interface FloorAnswer {
  data: { nodes: Record<string, FloorNode>; edges: FloorEdge[]; literals: { key: string; value: unknown }[] }
}

/** The questions (bench/cypher.ts compareCases names) the served floor answers. */
export const SERVED_QUESTIONS = [
  'one-hop sessions',
  'count of enabled users',
  'ORDER BY … LIMIT (oldest passwords)',
  'DISTINCT operating systems',
  '2-hop: user → group → computer',
  'kerberoastable users, every one',
] as const
export type ServedQuestion = (typeof SERVED_QUESTIONS)[number]

/** ORDER BY's type rank (src/cypher/values.ts orderCompare): a string, a boolean, a number, then null or missing. */
function rank(v: unknown): number {
  return typeof v === 'string' ? 0 : typeof v === 'boolean' ? 1 : typeof v === 'number' ? 2 : 3
}
function ascending(a: unknown, b: unknown): number {
  const d = rank(a) - rank(b)
  if (d) return d
  if (typeof a === 'string') return a < (b as string) ? -1 : a > (b as string) ? 1 : 0
  if (typeof a === 'number' || typeof a === 'boolean') return Number(a) - Number(b)
  return 0
}

/**
 * The answer builders of every served question over `g`. `ids`: the service's internal id of each node (by
 * object id; a node the service does not have is left out of every answer); `lastSeen`: the `lastSeen` of
 * every node and edge (the generated graph has no `lastseen` property: the service shows its ingest time).
 */
export function servedFloorAnswers(g: GenGraph, ids: ReadonlyMap<string, number>, lastSeen: string): Record<ServedQuestion, () => FloorAnswer> {
  const n = g.nodes.length
  const id = Float64Array.from(g.nodes, (x) => ids.get(x.objectid) ?? NaN)
  const known = (i: number) => !Number.isNaN(id[i])
  const byId = (a: number, b: number) => id[a] - id[b]
  // the nodes as a store holds them (NodeRecord: src/graph/present.ts), each presented per request
  const records: NodeRecord[] = g.nodes.map((x: GenNode, i) => ({
    id: id[i],
    objectid: x.objectid,
    kind: x.kinds[0],
    kinds: x.kinds,
    name: typeof x.properties.name === 'string' && x.properties.name !== '' ? x.properties.name : null,
    environment_id: null,
    properties: x.properties,
    updated_at: lastSeen,
  }))
  const has = (kind: string) => Uint8Array.from(g.nodes, (x, i) => (known(i) && x.kinds.includes(kind) ? 1 : 0))
  const isUser = has('User')
  const isComputer = has('Computer')
  const isGroup = has('Group')
  const users = [...Array(n).keys()].filter((i) => isUser[i]).sort(byId)
  const computers = [...Array(n).keys()].filter((i) => isComputer[i]).sort(byId)
  /** outbound adjacency of one relationship kind, each node's far ends in id order */
  const adjacency = (kind: string): { offsets: Int32Array; targets: Int32Array } => {
    const k = g.edgeKinds.indexOf(kind)
    const offsets = new Int32Array(n + 1)
    for (let e = 0; e < g.edgeCount; e++) if (g.edgeKind[e] === k) offsets[g.edgeStart[e] + 1]++
    for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i]
    const fill = offsets.slice(0, n)
    const targets = new Int32Array(offsets[n])
    for (let e = 0; e < g.edgeCount; e++) if (g.edgeKind[e] === k) targets[fill[g.edgeStart[e]]++] = g.edgeEnd[e]
    for (let i = 0; i < n; i++) targets.subarray(offsets[i], offsets[i + 1]).sort((a, b) => id[a] - id[b])
    return { offsets, targets }
  }
  const sessions = adjacency('HasSession')
  const memberOf = adjacency('MemberOf')
  const adminTo = adjacency('AdminTo')
  const prop = (i: number, k: string): unknown => g.nodes[i].properties[k] ?? null

  /** One answer being built, as presentResult builds it: nodes in first-seen order, edges in row order. */
  const answer = () => {
    const nodes: Record<string, FloorNode> = {}
    const edges: FloorEdge[] = []
    const literals: { key: string; value: unknown }[] = []
    const node = (i: number) => {
      const key = String(id[i])
      if (nodes[key]) return
      const r = records[i]
      nodes[key] = { ...pathNode(r), kinds: labelsOf(r), isTierZero: isTierZeroNode(r), isOwnedObject: isOwnedNode(r) }
    }
    /** a path's nodes, then its relationships (each after its two ends, already there) */
    const path = (steps: number[], kinds: string[]) => {
      steps.forEach(node)
      kinds.forEach((kind, j) => edges.push({ source: String(id[steps[j]]), target: String(id[steps[j + 1]]), label: kind, kind, lastSeen }))
    }
    return { path, node, literal: (key: string, value: unknown) => literals.push({ key, value }), done: (): FloorAnswer => ({ data: { nodes, edges, literals } }) }
  }

  return {
    // MATCH p = (c:Computer)-[:HasSession]->(u:User) RETURN p LIMIT 1000
    'one-hop sessions': () => {
      const a = answer()
      let rows = 0
      for (const c of computers)
        for (let j = sessions.offsets[c]; j < sessions.offsets[c + 1] && rows < 1000; j++) {
          const u = sessions.targets[j]
          if (!isUser[u]) continue
          a.path([c, u], ['HasSession'])
          if (++rows === 1000) return a.done()
        }
      return a.done()
    },
    // MATCH (u:User) WHERE u.enabled = true RETURN count(u)
    'count of enabled users': () => {
      const a = answer()
      let count = 0
      for (const u of users) if (prop(u, 'enabled') === true) count++
      a.literal('count(u)', count)
      return a.done()
    },
    // MATCH (u:User) WHERE u.enabled = true RETURN u.name, u.pwdlastset ORDER BY u.pwdlastset LIMIT 10
    'ORDER BY … LIMIT (oldest passwords)': () => {
      const a = answer()
      // the 10 first by (pwdlastset, id), kept sorted by insertion
      const top: number[] = []
      const before = (x: number, y: number) => {
        const d = ascending(prop(x, 'pwdlastset'), prop(y, 'pwdlastset'))
        return d < 0 || (d === 0 && id[x] < id[y])
      }
      for (const u of users) {
        if (prop(u, 'enabled') !== true) continue
        if (top.length === 10 && !before(u, top[9])) continue
        let k = top.length
        while (k > 0 && before(u, top[k - 1])) k--
        top.splice(k, 0, u)
        if (top.length > 10) top.pop()
      }
      for (const u of top) {
        a.literal('u.name', prop(u, 'name'))
        a.literal('u.pwdlastset', prop(u, 'pwdlastset'))
      }
      return a.done()
    },
    // MATCH (c:Computer) RETURN DISTINCT c.operatingsystem — each value where its first node by id is
    'DISTINCT operating systems': () => {
      const a = answer()
      const seen = new Set<unknown>()
      for (const c of computers) {
        const v = prop(c, 'operatingsystem')
        if (seen.has(v)) continue
        seen.add(v)
        a.literal('c.operatingsystem', v)
      }
      return a.done()
    },
    // MATCH p = (u:User)-[:MemberOf]->(g:Group)-[:AdminTo]->(c:Computer) RETURN p LIMIT 100
    '2-hop: user → group → computer': () => {
      const a = answer()
      let rows = 0
      for (const u of users)
        for (let j = memberOf.offsets[u]; j < memberOf.offsets[u + 1]; j++) {
          const gr = memberOf.targets[j]
          if (!isGroup[gr]) continue
          for (let k = adminTo.offsets[gr]; k < adminTo.offsets[gr + 1]; k++) {
            const c = adminTo.targets[k]
            if (!isComputer[c]) continue
            a.path([u, gr, c], ['MemberOf', 'AdminTo'])
            if (++rows === 100) return a.done()
          }
        }
      return a.done()
    },
    // MATCH (u:User) WHERE u.hasspn = true AND u.enabled = true RETURN u
    'kerberoastable users, every one': () => {
      const a = answer()
      for (const u of users) if (prop(u, 'hasspn') === true && prop(u, 'enabled') === true) a.node(u)
      return a.done()
    },
  }
}

type AnswerLike = { data?: { nodes: Record<string, { objectId: string }>; edges: { source: string; target: string; kind: string }[]; literals: { key: string; value: unknown }[] } }

/**
 * How two answers differ, or null when they are the same answer: the same node object ids (as a set), the same
 * relationships (source and target object ids and kind, as a multiset) and the same literals (in order). Node
 * ids, labels and lastSeen are not compared (each side's own). At most a few examples per part.
 */
export function answerDifference(service: AnswerLike | null, floor: AnswerLike | null): string | null {
  if (!service?.data || !floor?.data) return `${!service?.data ? 'the service' : 'the floor'} gave no graph answer`
  const out: string[] = []
  const diff = (what: string, a: string[], b: string[], ordered = false) => {
    if (ordered) {
      if (a.length === b.length && a.every((x, i) => x === b[i])) return
      const i = a.findIndex((x, k) => x !== b[k])
      out.push(`${what}: ${a.length} vs ${b.length}, first difference at #${i < 0 ? a.length : i}: ${a[i < 0 ? a.length : i] ?? '(none)'} vs ${b[i < 0 ? a.length : i] ?? '(none)'}`)
      return
    }
    const count = new Map<string, number>()
    for (const x of a) count.set(x, (count.get(x) ?? 0) + 1)
    for (const x of b) count.set(x, (count.get(x) ?? 0) - 1)
    const onlyService = [...count].filter(([, c]) => c > 0).map(([x]) => x)
    const onlyFloor = [...count].filter(([, c]) => c < 0).map(([x]) => x)
    if (onlyService.length || onlyFloor.length)
      out.push(`${what}: ${a.length} vs ${b.length}; only the service's: ${onlyService.length} (${onlyService.slice(0, 2).join(', ')}); only the floor's: ${onlyFloor.length} (${onlyFloor.slice(0, 2).join(', ')})`)
  }
  const nodeOids = (x: AnswerLike) => [...new Set(Object.values(x.data!.nodes).map((v) => v.objectId))]
  const edges = (x: AnswerLike) => x.data!.edges.map((e) => `${x.data!.nodes[e.source]?.objectId ?? `?${e.source}`} -${e.kind}-> ${x.data!.nodes[e.target]?.objectId ?? `?${e.target}`}`)
  const literals = (x: AnswerLike) => x.data!.literals.map((l) => JSON.stringify([l.key, l.value]))
  diff('nodes', nodeOids(service), nodeOids(floor))
  diff('edges', edges(service), edges(floor))
  diff('literals', literals(service), literals(floor), true)
  return out.length ? out.join('; ') : null
}

/**
 * A node:http server on 127.0.0.1 (a free port) answering POST /api/v2/graphs/cypher: the body's `query` looked
 * up in `byQuery`, its answer built and JSON.stringify'd per request; 400 with the service's error envelope for
 * any other query. The request's signature is not checked (the floor has no users), nor its query string (the
 * client adds a nonce to a signed POST). Not compressed: the service's answer is gzip-encoded by the runtime.
 */
export async function startServedFloor(byQuery: ReadonlyMap<string, () => FloorAnswer>): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let status = 200
      let text: string
      try {
        const { query } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { query?: string }
        const build = req.method === 'POST' && new URL(req.url ?? '/', 'http://floor').pathname === '/api/v2/graphs/cypher' && typeof query === 'string' ? byQuery.get(query) : undefined
        if (!build) throw new Error('the served floor does not answer this request')
        text = JSON.stringify(build())
      } catch (e) {
        status = 400
        text = JSON.stringify({ http_status: 400, timestamp: new Date().toISOString(), request_id: '', errors: [{ context: 'served floor', message: (e as Error).message }] })
      }
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      res.end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
