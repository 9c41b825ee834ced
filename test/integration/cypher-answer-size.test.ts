/**
 * The answer of POST /api/v2/graphs/cypher is bounded by itself (src/cypher/answer.ts): a query whose answer
 * repeats what it built (one string of a million characters returned on every row) or multiplies columns
 * (2,000 property columns per node) is stopped with a 400 envelope naming the limit, never a 500 and never
 * a 100 MB answer; a large legitimate answer below the limit is answered whole.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { ANSWER_LIMITS } from '../../src/cypher/answer'

let reader: EdgeHoundClient

const post = (query: string, include_properties = false) => reader.raw('POST', '/api/v2/graphs/cypher', { query, include_properties })
/** A string of a million characters, built by five nested replace() calls (a 300-byte query). */
const MILLION = `replace(replace(replace(replace(replace('xxxxxxxxxx', 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx')`
const repeated = (rows: number) => `WITH ${MILLION} AS s UNWIND range(1, ${rows}) AS i RETURN s`
const WIDE = Array.from({ length: 2000 }, (_, i) => `n.p${i}`).join(', ')
const WIDE_NODES = 150

beforeAll(async () => {
  const admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: Array.from({ length: WIDE_NODES }, (_, i) => ({ id: `WIDE-${i}`, kinds: ['WideNode'], properties: { name: `WIDE ${i}`, p0: i, p1: 'x'.repeat(20) } })),
      edges: [],
    },
  })
  reader = (await userWithRole('Read-Only')).client
})

describe('answer size limit (400 naming the limit, never a 500)', () => {
  it('one string of a million characters returned on 100 and on 600 rows: 400 answer size limit, with the envelope', async () => {
    expect(repeated(100).length).toBeLessThan(300)
    for (const rows of [100, 600]) {
      const res = await post(repeated(rows))
      expect(Number(res.headers.get('content-length') ?? 0)).toBeLessThan(4096)
      await expectEnvelope(res, 400, `its answer would be larger than 8 MiB (answer size limit)`)
    }
    // the same string collected into one list 600 times: one literal, refused while it is counted
    await expectEnvelope(await post(`WITH ${MILLION} AS s UNWIND range(1, 600) AS i RETURN collect(s) AS l`), 400, /answer size limit/)
  })

  it('2,000 property columns per node: 400 answer entry limit; the same columns on fewer rows are answered', async () => {
    await expectEnvelope(await post(`MATCH (n:WideNode) RETURN ${WIDE}`), 400, `more than ${ANSWER_LIMITS.maxEntries} nodes, edges and literals (answer entry limit)`)
    const res = await post(`MATCH (n:WideNode) RETURN ${WIDE} LIMIT 50`)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { data: { literals: { key: string; value: unknown }[] } }
    expect(body.data.literals).toHaveLength(50 * 2000)
    expect(body.data.literals[0].key).toBe('n.p0')
  })

  it('a legitimate large answer below the limit is answered whole, and never over the limit', async () => {
    const res = await post(repeated(7))
    expect(res.status).toBe(200)
    const text = await res.text()
    const bytes = new TextEncoder().encode(text).length
    expect(bytes).toBeGreaterThan(7_000_000)
    expect(bytes).toBeLessThanOrEqual(ANSWER_LIMITS.maxBytes)
    const body = JSON.parse(text) as { data: { literals: { key: string; value: string }[] } }
    expect(body.data.literals.map((l) => [l.key, l.value.length])).toEqual(Array.from({ length: 7 }, () => ['s', 1_000_000]))
    // every node of the graph with its properties
    const nodes = await post('MATCH (n:WideNode) RETURN n', true)
    expect(nodes.status).toBe(200)
    expect(Object.keys(((await nodes.json()) as { data: { nodes: object } }).data.nodes)).toHaveLength(WIDE_NODES)
  })

  it('values nested deeper than 64 lists: 400 answer depth limit; 64 levels are answered', async () => {
    const nest = (levels: number) => `WITH 1 AS a ${'WITH [a] AS a '.repeat(levels)}RETURN a`
    await expectEnvelope(await post(nest(65)), 400, 'more than 64 levels deep (answer depth limit)')
    const ok = await post(nest(64))
    expect(ok.status).toBe(200)
  })
})
