/**
 * A query result in BloodHound's unified-graph shape: nodes (by id) and edges from every node,
 * relationship and path in the rows, scalar columns as `literals` (one per column per row, in row
 * order). Node and edge shapes are src/graph/present.ts's, with the Tier Zero / owned flags and the
 * kinds as Cypher sees them (labels.ts: one Tier Zero rule with the findings engine). Pure. Every part of
 * the answer is charged to the answer's budget (answer.ts) before it is added. The route measures the answer
 * first (measureAnswer) and then streams it (answerPieces, answerStream), never holding it whole.
 */
import { z } from 'zod'
import { GraphEdgeSchema, GraphNodeSchema, pathNode } from '../graph/present'
import type { GraphCache } from './eval'
import { isOwnedNode, isTierZeroNode, labelsOf, nodeProperties } from './labels'
import { DateTimeVal, isGraphValue, isMap, NodeRef, PathVal, RelRef, type Value } from './values'
import { AnswerBudget, stringBytes, utf8Length } from './answer'

export const CypherNodeSchema = GraphNodeSchema.extend({ properties: z.record(z.string(), z.unknown()).optional() })
export const CypherEdgeSchema = GraphEdgeSchema.extend({ properties: z.record(z.string(), z.unknown()).optional() })

export const CypherResultSchema = z
  .object({
    node_keys: z.array(z.string()).optional().describe('sorted property names of the nodes (include_properties only, omitted when empty)'),
    edge_keys: z.array(z.string()).optional().describe('sorted property names of the edges (include_properties only, omitted when empty)'),
    nodes: z.record(z.string(), CypherNodeSchema).describe('keyed by internal node id'),
    edges: z.array(CypherEdgeSchema).describe('one entry per relationship per returned path or relationship (duplicates possible)'),
    literals: z.array(z.object({ key: z.string(), value: z.unknown() })).describe('scalar columns: one entry per column per row'),
  })
  .meta({ id: 'CypherQueryResult' })

export type CypherResult = z.infer<typeof CypherResultSchema>

/** Does a value hold graph elements anywhere (lists and maps included)? */
function holdsGraph(v: Value): boolean {
  if (isGraphValue(v)) return true
  if (Array.isArray(v)) return v.some(holdsGraph)
  if (isMap(v)) return Object.values(v).some(holdsGraph)
  return false
}

/** A scalar value as JSON. */
export function literalJson(v: Value): unknown {
  if (v instanceof DateTimeVal) return new Date(v.ms).toISOString()
  if (Array.isArray(v)) return v.map(literalJson)
  if (isMap(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, literalJson(x)]))
  return v
}

function lastSeen(props: Record<string, unknown>, fallback: string): string {
  const v = props.lastseen
  return typeof v === 'string' && v !== '' ? v : fallback
}

/** Relationship ids every graph value of the rows refers to (their properties are read before presenting). */
export function referencedRels(rows: Value[][]): number[] {
  const ids = new Set<number>()
  const walk = (v: Value): void => {
    if (v instanceof RelRef) ids.add(v.id)
    else if (v instanceof PathVal) v.rels.forEach((r) => ids.add(r.id))
    else if (Array.isArray(v)) v.forEach(walk)
    else if (isMap(v)) Object.values(v).forEach(walk)
  }
  rows.forEach((r) => r.forEach(walk))
  return [...ids]
}

/** Node ids every graph value of the rows refers to (to load them before presenting). */
export function referencedNodes(rows: Value[][]): number[] {
  const ids = new Set<number>()
  const node = (id: number) => void ids.add(id)
  for (const r of rows) for (const v of r) forEachElement(v, node, () => {})
  return [...ids]
}

/** Bytes of `{"data":{"nodes":{},"edges":[],"literals":[]}}`: the answer with nothing in it. */
const EMPTY_ANSWER_BYTES = JSON.stringify({ data: { nodes: {}, edges: [], literals: [] } }).length
/** The fewest bytes a node entry (`"id":{…}`) or an edge can take: every text empty, the shortest booleans. */
const NODE_MIN_BYTES = JSON.stringify({ '0': { label: '', kind: '', kinds: [], objectId: '', isTierZero: true, isOwnedObject: true, lastSeen: '' } }).length - 2
const EDGE_MIN_BYTES = JSON.stringify({ source: '0', target: '0', label: '', kind: '', lastSeen: '' }).length
/** `{"key":` + `,"value":` + `}` around a literal's key and value */
const LITERAL_FRAME_BYTES = JSON.stringify({ key: '', value: null }).length - 2 - 4

/**
 * One returned row charged to the answer's budget as it arrives (run.ts), before the graph elements are
 * read: literals exactly, each new node and each edge at the fewest bytes it can take, one comma per entry.
 * A lower bound of what presentResult charges for the same rows, so a row refused here would make the
 * answer too large, and the rows of a refused answer are never all held.
 */
export function chargeRow(answer: AnswerBudget, columns: string[], row: Value[], seenNodes: Set<number>): void {
  const node = (id: number) => {
    if (seenNodes.has(id)) return
    seenNodes.add(id)
    answer.chargeEntries(1)
    answer.chargeBytes(NODE_MIN_BYTES + 1)
  }
  const rel = () => {
    answer.chargeEntries(1)
    answer.chargeBytes(EDGE_MIN_BYTES + 1)
  }
  row.forEach((v, i) => (holdsGraph(v) ? forEachElement(v, node, rel) : chargeLiteral(answer, columns[i], v, 1)))
}

/**
 * Every graph element a returned value holds, in the order the answer lists them: a relationship's two nodes before
 * it, a path's nodes before its relationships, lists and maps entry by entry. chargeRow, presentResult and
 * referencedNodes walk values with it, so the lower bound, the exact charge and a rule's selection see the same
 * elements (the two charges in the same order).
 */
function forEachElement(v: Value, node: (id: number) => void, rel: (r: RelRef) => void): void {
  const relationship = (r: RelRef) => {
    node(r.start)
    node(r.end)
    rel(r)
  }
  if (v instanceof NodeRef) node(v.id)
  else if (v instanceof RelRef) relationship(v)
  else if (v instanceof PathVal) {
    for (const id of v.nodes) node(id)
    for (const r of v.rels) relationship(r)
  } else if (Array.isArray(v)) for (const x of v) forEachElement(x, node, rel)
  else if (isMap(v)) for (const x of Object.values(v)) forEachElement(x, node, rel)
}

/** A literal entry `{"key":…,"value":…}` of column `key`, after `separator` comma bytes, charged before it is copied. */
function chargeLiteral(answer: AnswerBudget, key: string, v: Value, separator: 0 | 1): void {
  answer.chargeEntries(1)
  answer.chargeBytes(LITERAL_FRAME_BYTES + separator)
  answer.chargeString(key)
  answer.chargeJson(v)
}

/**
 * `"node_keys":[…],` and `"edge_keys":[…],` ahead of the nodes, each only when not empty. Shared by both passes
 * (presentResult, measureAnswer), whose charges must be equal.
 */
function chargeKeyLists(answer: AnswerBudget, nodeKeys: string[], edgeKeys: string[]): void {
  for (const [name, keys] of [['node_keys', nodeKeys], ['edge_keys', edgeKeys]] as const) {
    if (!keys.length) continue
    answer.chargeBytes(stringBytes(name) + 2)
    answer.chargeJson(keys)
  }
}

/**
 * The answer, charged to `answer` exactly as it is built (answer.ts): every node, edge, literal and key
 * list by the bytes JSON.stringify gives it, so `JSON.stringify({ data })` is at most the answer's byte
 * limit, and no value is converted before it is charged (a value repeated beyond the limit is refused
 * while it is counted, never copied). Throws CypherError at the first limit crossed.
 */
export function presentResult(columns: string[], rows: Value[][], graph: GraphCache, includeProperties: boolean, answer = new AnswerBudget()): CypherResult {
  const nodes: CypherResult['nodes'] = {}
  const edges: CypherResult['edges'] = []
  const literals: CypherResult['literals'] = []
  answer.chargeBytes(EMPTY_ANSWER_BYTES)
  let nodeCount = 0
  const addNode = (id: number) => {
    const key = String(id)
    if (nodes[key]) return
    const node = presentNode(graph, id, includeProperties)
    answer.chargeEntries(1)
    answer.chargeBytes(nodeCount++ ? 2 : 1) // `,` before all but the first, `:` after the key
    answer.chargeString(key)
    answer.chargeJson(node)
    nodes[key] = node
  }
  const addRel = (r: RelRef) => {
    const edge = presentEdge(graph, r, includeProperties)
    answer.chargeEntries(1)
    answer.chargeBytes(edges.length ? 1 : 0)
    answer.chargeJson(edge)
    edges.push(edge)
  }
  for (const row of rows)
    row.forEach((v, i) => {
      if (holdsGraph(v)) return forEachElement(v, addNode, addRel)
      chargeLiteral(answer, columns[i], v, literals.length ? 1 : 0)
      literals.push({ key: columns[i], value: literalJson(v) })
    })
  const out: CypherResult = { nodes, edges, literals }
  if (includeProperties) {
    const nodeKeys = [...new Set(Object.values(nodes).flatMap((n) => Object.keys(n.properties ?? {})))].sort()
    const edgeKeys = [...new Set(edges.flatMap((e) => Object.keys(e.properties ?? {})))].sort()
    chargeKeyLists(answer, nodeKeys, edgeKeys)
    return { ...(nodeKeys.length ? { node_keys: nodeKeys } : {}), ...(edgeKeys.length ? { edge_keys: edgeKeys } : {}), ...out }
  }
  return out
}

const isIndexKey = (id: number): boolean => Number.isInteger(id) && id >= 0 && id < 2 ** 32 - 1

/** What the measuring pass learnt of an answer: enough to write it, and its exact size. */
export interface MeasuredAnswer {
  /** the answer's node ids in the order JSON.stringify gives them as an object's keys (presentResult) */
  nodeIds: number[]
  /** sorted property names of the nodes and of the edges (include_properties only) */
  nodeKeys: string[]
  edgeKeys: string[]
  /** nodes + edges + literals */
  entries: number
  /** bytes of the serialised answer, `{"data":…}` included (UTF-8): exactly what answerPieces writes */
  bytes: number
  /** nodes presented without properties, as the measuring pass serialised them (KEPT_NODE_CHARS in all at most) */
  nodeText: Map<number, string>
}

/**
 * Characters of presented nodes' text the measuring pass keeps for the writing pass (answers without properties):
 * presenting a node (labels, the Tier Zero and Owned rules) and serialising it is most of an answer's CPU, done
 * once instead of twice for the first ~2 MiB of nodes; beyond, they are presented again, so the whole answer is
 * still never held.
 */
const KEPT_NODE_CHARS = 2 * 1024 * 1024

function presentNode(graph: GraphCache, id: number, includeProperties: boolean): CypherResult['nodes'][string] {
  const n = graph.node(id)
  const node: CypherResult['nodes'][string] = { ...pathNode(n), kinds: labelsOf(n), isTierZero: isTierZeroNode(n), isOwnedObject: isOwnedNode(n) }
  if (includeProperties) node.properties = nodeProperties(n)
  return node
}

function presentEdge(graph: GraphCache, r: RelRef, includeProperties: boolean): CypherResult['edges'][number] {
  const e = graph.rel(r.id)
  const edge: CypherResult['edges'][number] = { source: String(r.start), target: String(r.end), label: r.kind, kind: r.kind, lastSeen: lastSeen(e.properties, e.updated_at) }
  if (includeProperties && Object.keys(e.properties).length > 0) edge.properties = e.properties
  return edge
}

/**
 * The first of the two passes of a streamed answer (the route, cypher.routes.ts): charges the answer to
 * `answer` exactly as presentResult does (same elements, same order, same bytes) but keeps nothing of
 * what it presents, only the node ids and the property names. Throws CypherError at the first limit
 * crossed, so a refused answer is refused before its first byte is sent (a streamed answer's status cannot
 * change once it started).
 */
export function measureAnswer(columns: string[], rows: Value[][], graph: GraphCache, includeProperties: boolean, answer = new AnswerBudget()): MeasuredAnswer {
  const seen = new Set<number>()
  const nodeKeys = new Set<string>()
  const edgeKeys = new Set<string>()
  let edges = 0
  let literals = 0
  const nodeText = new Map<number, string>()
  let kept = 0
  answer.chargeBytes(EMPTY_ANSWER_BYTES)
  const addNode = (id: number) => {
    if (seen.has(id)) return
    const node = presentNode(graph, id, includeProperties)
    answer.chargeEntries(1)
    answer.chargeBytes(seen.size ? 2 : 1)
    answer.chargeString(String(id))
    if (includeProperties) answer.chargeJson(node)
    else {
      // seven fields, two levels deep, read from one node record already in memory: serialised, then charged
      // its UTF-8 length (what chargeJson counts, walking it)
      const text = JSON.stringify(node)
      answer.chargeBytes(utf8Length(text))
      if (kept + text.length <= KEPT_NODE_CHARS) {
        nodeText.set(id, text)
        kept += text.length
      }
    }
    seen.add(id)
    if (node.properties) for (const k of Object.keys(node.properties)) nodeKeys.add(k)
  }
  const addRel = (r: RelRef) => {
    const edge = presentEdge(graph, r, includeProperties)
    answer.chargeEntries(1)
    answer.chargeBytes(edges ? 1 : 0)
    answer.chargeJson(edge)
    edges++
    if (edge.properties) for (const k of Object.keys(edge.properties)) edgeKeys.add(k)
  }
  for (const row of rows)
    row.forEach((v, i) => {
      if (holdsGraph(v)) return forEachElement(v, addNode, addRel)
      chargeLiteral(answer, columns[i], v, literals++ ? 1 : 0)
    })
  const sortedNodeKeys = [...nodeKeys].sort()
  const sortedEdgeKeys = [...edgeKeys].sort()
  chargeKeyLists(answer, sortedNodeKeys, sortedEdgeKeys)
  // JSON.stringify writes an object's array-index keys (below 2^32 - 1) first, ascending, then the others in
  // the order they were added: node ids are random from 2^40 (src/graph/ids.ts), so in first-seen order
  let nodeIds = [...seen]
  if (nodeIds.some(isIndexKey)) nodeIds = [...nodeIds.filter(isIndexKey).sort((a, b) => a - b), ...nodeIds.filter((id) => !isIndexKey(id))]
  return { nodeIds, nodeKeys: sortedNodeKeys, edgeKeys: sortedEdgeKeys, entries: seen.size + edges + literals, bytes: answer.used.bytes, nodeText }
}

/**
 * The second pass: the measured answer as JSON text, one piece per node, edge and literal, in the order
 * and with the bytes of `JSON.stringify({ data: presentResult(…) })` (test/unit/cypher-answer.test.ts).
 * Each element is presented again and serialised on its own, so what is held at any time is the rows, the
 * graph data they refer to and one element, never the whole answer as objects or as one string. Every
 * value was charged by measureAnswer (depth, size), so serialising a piece cannot fail.
 */
export function* answerPieces(columns: string[], rows: Value[][], graph: GraphCache, includeProperties: boolean, measured: MeasuredAnswer): Generator<string> {
  yield '{"data":{'
  if (measured.nodeKeys.length) yield `"node_keys":${JSON.stringify(measured.nodeKeys)},`
  if (measured.edgeKeys.length) yield `"edge_keys":${JSON.stringify(measured.edgeKeys)},`
  yield '"nodes":{'
  let first = true
  for (const id of measured.nodeIds) {
    yield `${first ? '' : ','}"${id}":${measured.nodeText.get(id) ?? JSON.stringify(presentNode(graph, id, includeProperties))}`
    first = false
  }
  yield '},"edges":['
  first = true
  const edge = (r: RelRef) => {
    const piece = `${first ? '' : ','}${JSON.stringify(presentEdge(graph, r, includeProperties))}`
    first = false
    return piece
  }
  for (const row of rows)
    for (const v of row) {
      if (!holdsGraph(v)) continue
      const pieces: string[] = []
      forEachElement(v, () => {}, (r) => void pieces.push(edge(r)))
      yield* pieces
    }
  yield '],"literals":['
  first = true
  for (const row of rows)
    for (let i = 0; i < row.length; i++) {
      if (holdsGraph(row[i])) continue
      yield `${first ? '' : ','}${JSON.stringify({ key: columns[i], value: literalJson(row[i]) })}`
      first = false
    }
  yield ']}}'
}

/** Bytes of text gathered into one chunk of the response body (a few nodes' worth is too small a write). */
const CHUNK_CHARS = 64 * 1024

/**
 * The answer's pieces as a response body, pulled as the client reads: about CHUNK_CHARS characters at a
 * time encoded to UTF-8, so neither the whole answer's objects nor its whole text are ever held. `done`
 * runs once, when the last piece is written, the client goes away or writing fails (it gives the query's
 * bytes back to the isolate's pool). A failure after the first byte can only cut the body short (the 200 is
 * sent); measureAnswer has checked everything that could fail, so none is expected.
 */
export function answerStream(pieces: Iterator<string>, done: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    done()
  }
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      try {
        let text = ''
        while (text.length < CHUNK_CHARS) {
          const next = pieces.next()
          if (next.done) {
            if (text) controller.enqueue(encoder.encode(text))
            controller.close()
            end()
            return
          }
          text += next.value
        }
        controller.enqueue(encoder.encode(text))
      } catch (e) {
        end()
        controller.error(e)
      }
    },
    cancel() {
      end()
      pieces.return?.(undefined)
    },
  })
}
