/**
 * A node presented without its properties (a Cypher answer without include_properties) reads only PRESENTED_KEYS
 * of them (src/graph/present.ts; the store's presented read, needs.ts nodeReads): whatever else a node stores,
 * the answer is the same when the node is read with only those keys, a missing one reading as null (json_object
 * with `->` in the store). Nodes are generated around every input of the Tier Zero and Owned rules and of
 * lastSeen, so dropping a key the presentation reads fails here.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { PRESENTED_KEYS, type NodeRecord } from '../../src/graph/present'
import { presentResult } from '../../src/cypher/present'
import { GLOBAL_ADMINISTRATOR_TEMPLATE_ID, PRIVILEGED_ROLE_ADMINISTRATOR_TEMPLATE_ID } from '../../src/assetgroups/tierzero'
import { NodeRef, PathVal, RelRef } from '../../src/cypher/values'
import type { GraphCache } from '../../src/cypher/eval'

/**
 * The node as the store's presented read gives it: columns whole, of the properties only `keys`, a missing one as null
 * (json_object, the query's keys) or left out (json_patch, keys only presented) — both are checked.
 */
let missingAsNull = true
/** json_patch onto `{}` (RFC 7396): null members of objects left out, at every depth; arrays kept as they are */
const patched = (v: unknown): unknown =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (x === null ? [] : [[k, patched(x)]]))) : v
const cut = (n: NodeRecord, keys: readonly string[]): NodeRecord => ({
  ...n,
  properties: Object.fromEntries(
    keys.flatMap((k) => (n.properties[k] !== undefined && n.properties[k] !== null ? [[k, missingAsNull ? n.properties[k] : patched(n.properties[k])]] : missingAsNull ? [[k, null]] : [])),
  ),
})

const json = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('a', 'admin_tier_0', 'x'), fc.oneof(fc.constant(null), fc.boolean(), fc.string({ maxLength: 4 })), { maxKeys: 2 }),
)
const tags = fc.oneof(
  fc.constantFrom('admin_tier_0', 'owned', 'admin_tier_0 owned', '["admin_tier_0"]', '["owned"]', '', ' admin_tier_0 ', 'other'),
  fc.constantFrom(['admin_tier_0'], ['owned'], []),
  json,
)
const truthy = fc.oneof(fc.constantFrom(true, 1, false, 0, 'true', 'yes'), json)
const template = fc.oneof(
  fc.constantFrom(GLOBAL_ADMINISTRATOR_TEMPLATE_ID, PRIVILEGED_ROLE_ADMINISTRATOR_TEMPLATE_ID, GLOBAL_ADMINISTRATOR_TEMPLATE_ID.toUpperCase(), 'f2ef992c-3afb-46b9-b7cf-a126ee74c451', ''),
  json,
)
const lastseen = fc.oneof(fc.constantFrom('2026-01-05T00:00:00Z', ''), json)
/** every input the presentation may read, each present or absent, plus unrelated properties */
const properties = fc
  .record(
    { lastseen, system_tags: tags, isTierZero: truthy, istierzero: truthy, templateid: template, enabled: truthy, description: json, name: json },
    { requiredKeys: [] },
  )
  .chain((p) => fc.dictionary(fc.constantFrom('title', 'hasspn', 'admincount', 'lastlogon', 'domain'), json, { maxKeys: 3 }).map((extra) => ({ ...extra, ...p })))
const kinds = fc.constantFrom(['User'], ['User', 'Base'], ['Group', 'Base'], ['Domain'], ['AZRole', 'AZBase'], ['AZRole'], ['AZTenant'], ['ADLocalGroup', 'Base'], ['User', 'Tag_Owned'], ['Computer', 'Tag_Tier_Zero'], ['GH_Repository'])
const objectid = fc.constantFrom(
  'S-1-5-21-1-512',
  'S-1-5-21-1-1105',
  'S-1-5-32-544',
  `${GLOBAL_ADMINISTRATOR_TEMPLATE_ID}@TENANT`,
  `${PRIVILEGED_ROLE_ADMINISTRATOR_TEMPLATE_ID.toUpperCase()}`,
  'f2ef992c-3afb-46b9-b7cf-a126ee74c451@TENANT',
  'X-1',
)
const node = (id: number): fc.Arbitrary<NodeRecord> =>
  fc.record({
    id: fc.constant(id),
    objectid,
    kinds,
    name: fc.option(fc.string({ maxLength: 10 }), { nil: null }),
    properties,
    selected: fc.option(fc.constantFrom(['admin_tier_0'], ['owned'], ['other']), { nil: undefined }),
  }).map(({ kinds, selected, ...n }) => ({
    ...n,
    kind: kinds[0],
    kinds: [...kinds],
    environment_id: 'E',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...(selected ? { selected_tags: [...selected] } : {}),
  }))

const answer = (nodes: NodeRecord[]) => {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const rel = new RelRef(99, nodes[0].id, nodes[1].id, 'MemberOf')
  const graph: GraphCache = { node: (id) => byId.get(id)!, rel: () => ({ id: 99, start: rel.start, end: rel.end, kind: rel.kind, properties: {}, updated_at: '2026-01-02T00:00:00.000Z' }) }
  const rows = [[new NodeRef(nodes[0].id), new PathVal([nodes[0].id, nodes[1].id], [rel]), rel]]
  return JSON.stringify(presentResult(['n', 'p', 'r'], rows, graph, false))
}

describe('PRESENTED_KEYS: a node read with only those properties presents as the whole node', () => {
  it('for any node (Tier Zero, Owned and lastSeen inputs present or absent)', () => {
    for (const asNull of [true, false]) {
      missingAsNull = asNull
      fc.assert(
        fc.property(node(1), node(2), (a, b) => {
          expect(answer([cut(a, PRESENTED_KEYS), cut(b, PRESENTED_KEYS)])).toBe(answer([a, b]))
        }),
        { numRuns: 2000 },
      )
    }
    missingAsNull = true
  })

  it('each key is needed: without it some node presents differently', () => {
    for (const key of PRESENTED_KEYS) {
      const fewer = PRESENTED_KEYS.filter((k) => k !== key)
      const differs = fc.check(fc.property(node(1), node(2), (a, b) => answer([cut(a, fewer), cut(b, fewer)]) === answer([a, b])), { numRuns: 2000 })
      expect(differs.failed, key).toBe(true)
    }
  })
})
