/**
 * Queries with many conditions or many property reads through the API and D1: the store shortcuts turn each
 * into SQL (scan conditions, relationship conditions, the far node of a counted relationship, the node
 * properties read alone), and D1 refuses a statement with more than 100 bound parameters or an expression
 * tree deeper than 100, and SQLite a function call of more than 127 arguments. Such a query must still get
 * its exact answer (the store applies what fits, or the engine does the work), never a 500.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import type { CypherResult } from '../../src/cypher/present'

let admin: EdgeHoundClient
const keys = (n: number, value: unknown) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]))
const many = (n: number, f: (i: number) => string, sep = ' AND ') => Array.from({ length: n }, (_, i) => f(i)).join(sep)

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: [
        { id: 'WQ-1', kinds: ['User'], properties: { name: 'WQA', k3: 3 } },
        { id: 'WQ-2', kinds: ['User'], properties: { name: 'WQB', ...keys(60, 'x') } },
        { id: 'WQ-S-1-5-21-9-512', kinds: ['Group'], properties: { name: 'WQ DOMAIN ADMINS' } },
      ],
      edges: [{ start: { value: 'WQ-1' }, end: { value: 'WQ-2' }, kind: 'GenericAll', properties: keys(60, 1) }],
    },
  })
})

async function literals(query: string): Promise<unknown[]> {
  const res = await admin.raw('POST', '/api/v2/graphs/cypher', { query })
  expect(res.status, `${query.slice(0, 80)}…: ${res.status >= 500 ? await res.text() : ''}`).toBe(200)
  return ((await res.json()) as { data: CypherResult }).data.literals.map((l) => l.value)
}

describe('wide queries: exact answers, never a 5xx', () => {
  it('70 node properties read (more than json_object takes)', async () => {
    const cols = many(70, (i) => `u.k${i} AS c${i}`, ', ')
    const values = await literals(`MATCH (u:User) WHERE u.objectid = 'WQ-1' RETURN u.name AS n, ${cols}`)
    expect(values).toEqual(['WQA', ...Array.from({ length: 70 }, (_, i) => (i === 3 ? 3 : null))])
  })

  it('60 relationship property conditions', async () => {
    expect(await literals(`MATCH (a)-[r]->(b) WHERE ${many(60, (i) => `r.k${i} = 1`)} RETURN a.name AS a`)).toEqual(['WQA'])
  })

  it('a counted far node with 60 properties (walked), and with 15 (counted in the store, at its cap)', async () => {
    for (const n of [60, 15]) {
      const props = many(n, (i) => `k${i}: 'x'`, ', ')
      const query = `MATCH (a:User) WHERE a.name STARTS WITH 'WQ' OPTIONAL MATCH (a)-[r]-(b:Base {${props}}) RETURN a.name AS a, count(r) AS c`
      // no ORDER BY: rows come in node-id order, and ids are random (src/graph/ids.ts), so compare the rows as a set
      const flat = await literals(query)
      const rows = Array.from({ length: flat.length / 2 }, (_, i) => `${flat[2 * i]}=${flat[2 * i + 1]}`).sort()
      expect(rows).toEqual(['WQA=1', 'WQB=0'])
      const plan = (await admin.raw('POST', '/api/v2/graphs/cypher', { query })).headers.get('x-cypher-plan') ?? ''
      expect(plan.includes('in the store'), plan).toBe(n === 15)
    }
  })

  it('8 relationship conditions and 8 scan conditions (the caps) and 48 properties read alone', async () => {
    expect(await literals(`MATCH (a)-[r]->(b) WHERE ${many(8, (i) => `r.k${i} = 1`)} RETURN a.name AS a`)).toEqual(['WQA'])
    expect(await literals(`MATCH (a:Base) WHERE ${many(8, (i) => `a.objectid ENDS WITH '${i === 0 ? '9' : ''}-512'`)} RETURN a.name AS a`)).toEqual(['WQ DOMAIN ADMINS'])
    const cols = many(48, (i) => `u.k${i} AS c${i}`, ', ')
    expect(await literals(`MATCH (u:User) WHERE u.objectid = 'WQ-2' RETURN ${cols}`)).toEqual(Array.from({ length: 48 }, () => 'x'))
  })

  it('60 STARTS WITH, 120 CONTAINS, 60 ENDS WITH a Tier Zero RID on one node', async () => {
    expect(await literals(`MATCH (a:User) WHERE ${many(60, () => `a.name STARTS WITH 'WQ'`)} RETURN a.name AS a ORDER BY a`)).toEqual(['WQA', 'WQB'])
    expect(await literals(`MATCH (a:User) WHERE ${many(120, () => `a.name CONTAINS 'QA'`)} RETURN a.name AS a`)).toEqual(['WQA'])
    expect(await literals(`MATCH (a) WHERE ${many(60, () => `a.objectid ENDS WITH '9-512'`)} RETURN a.name AS a`)).toEqual(['WQ DOMAIN ADMINS'])
  })
})
