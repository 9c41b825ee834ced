/**
 * Query plans of the analysis run's post-processing (src/collectors/postprocess*.ts, wellknown.store.ts,
 * adcs.store.ts, azurehound/post.store.ts) in workerd's SQLite: no statement may walk the whole `nodes` or
 * `edges` table except the few listed below, each a single pass on purpose.
 *
 * Why: post-processing runs at the start of EVERY analysis run, over the whole graph, usually with nothing to
 * do (an OpenGraph graph has no DN= placeholder, no local group, no ADCS object). A statement whose join
 * order puts a full scan inside another loop costs |nodes| × |edges|: the DN-member statement with a plain
 * JOIN scanned every node and, for each, the MemberOf edges through an automatic index — at the benchmark's
 * 1 M edges that one statement held D1 (and the worker's isolate) for over 10 minutes (BENCHMARKS.md).
 * The database has no `sqlite_stat1` (nothing runs ANALYZE), so SQLite plans the same way on this tiny test
 * database as on a graph of a million edges: the plan seen here is the plan production gets.
 *
 * Every statement is captured by running the real code against a recording stand-in for D1 whose answers
 * drive every branch (a Citrix computer, an ADCS object with a principal, replication-right holders, ESC9/10
 * victims, derived pairs), then EXPLAIN QUERY PLAN runs on the real, migrated database with the statement's
 * own parameters. A statement added later is checked without touching this file.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { postProcess } from '../../src/collectors/postprocess'
import { replaceDerivedEdges } from '../../src/collectors/postprocess.store'

interface Captured {
  sql: string
  params: unknown[]
}

/** A D1 stand-in that records each statement and answers just enough to take every branch of post-processing. */
function recordingStandIn(): { db: D1Database; statements: Captured[] } {
  const statements: Captured[] = []
  const answer = (sql: string): Record<string, unknown>[] => {
    const s = sql.replace(/\s+/g, ' ').trim()
    // loadCitrixData: one computer with the Direct Access Users group → its second batch is read
    if (s.startsWith('WITH cx(computer, rdp, dau)')) return [{ computer: 1, rdp: 2, dau: 3 }]
    // loadAdcsFacts: one ADCS node and a principal enrolling on it → the principals statement is read
    if (s.startsWith('SELECT id, objectid, kinds, properties FROM nodes WHERE kind IN')) return [{ id: 1, objectid: 'CA', kinds: '["EnterpriseCA"]', properties: '{}' }]
    if (s.startsWith('SELECT e.start_id AS s, e.end_id AS t, e.kind AS k')) return [{ s: 5, t: 1, k: 'Enroll' }]
    // loadReplicationMembership: a holder of all three rights → DCSync and SyncLAPSPassword statements
    if (s.includes('member(domain, sid, rightk, id, parent)'))
      return ['GetChanges', 'GetChangesAll', 'GetChangesInFilteredSet'].map((right) => ({ domain: 1, domainsid: 'S-1-5-21-1', right, id: 5, parent: null }))
    if (s.includes('count(*) AS n')) return [{ n: 0 }]
    return []
  }
  const statement = (sql: string, params: unknown[] = []): D1PreparedStatement => {
    const run = async () => (statements.push({ sql, params }), { results: answer(sql), success: true, meta: {} })
    return {
      bind: (...p: unknown[]) => statement(sql, p),
      all: run,
      run,
      first: async () => (await run()).results[0] ?? null,
      raw: async () => (await run()).results.map((r) => Object.values(r)),
      __capture: { sql, params },
    } as unknown as D1PreparedStatement
  }
  const db = {
    prepare: (sql: string) => statement(sql),
    batch: async (stmts: D1PreparedStatement[]) =>
      Promise.all(stmts.map((x) => (x as unknown as { all: () => Promise<unknown> }).all())),
  } as unknown as D1Database
  return { db, statements }
}

/** Every statement post-processing can send, each once (by text), with the parameters it was sent with. */
async function capturedStatements(): Promise<Captured[]> {
  const { db, statements } = recordingStandIn()
  await postProcess(db, '2026-01-01T00:00:00.000Z')
  // the write batch with every input present (the ESC9/10 attacker statements, both victim filters, pairs)
  await replaceDerivedEdges(db, {
    now: '2026-01-01T00:00:00.000Z',
    dcsync: [[5, 1]],
    lapsSyncers: [{ domainsid: 'S-1-5-21-1', holders: [5] }],
    citrixRdp: [[5, 1]],
    citrix: true,
    ntlm: true,
    adcs: {
      pairs: new Map([['GoldenCert', [[5, 1]]]]),
      attackerRules: [
        { kind: 'ADCSESC9a', computersOnly: false, victims: [[5, 1]] },
        { kind: 'ADCSESC9b', computersOnly: true, victims: [[5, 1]] },
      ],
      relayVictims: [[5, 1]],
    },
  })
  const byText = new Map<string, Captured>()
  for (const s of statements) if (!byText.has(s.sql)) byText.set(s.sql, s)
  return [...byText.values()]
}

/**
 * The names a statement gives to the `nodes` and `edges` tables (an alias, or the table's own name), and the
 * names it gives to anything else (CTEs, subqueries, table-valued functions). A plan line names only the
 * alias; where a statement uses one name for both, the line counts as the graph table's (never let through).
 */
function tableNames(sql: string): { graph: Set<string>; other: Set<string> } {
  const graph = new Set<string>()
  const other = new Set<string>()
  const KEYWORDS = /^(ON|WHERE|JOIN|CROSS|LEFT|INNER|GROUP|ORDER|LIMIT|SET|USING|UNION|AS|WHEN|AND|OR|SELECT|VALUES|NATURAL)$/i
  // FROM x [AS] a | JOIN x [AS] a | , x [AS] a | UPDATE x | INTO x
  const re = /\b(?:FROM|JOIN|UPDATE|INTO)\s+(\w+)(?:\s*\([^)]*\))?(?:\s+(?:AS\s+)?(\w+))?|,\s*(\w+)(?:\s*\([^)]*\))?\s+(?:AS\s+)?(\w+)(?=\s*(?:,|WHERE|JOIN|ON|\)|$))/gi
  for (const m of sql.matchAll(re)) {
    const table = (m[1] ?? m[3]).toLowerCase()
    const alias = m[2] ?? m[4]
    const name = alias && !KEYWORDS.test(alias) ? alias : table
    if (table === 'nodes' || table === 'edges') graph.add(name)
    else other.add(name)
  }
  // CTE names: `name(cols) AS (` or `name AS (`
  for (const m of sql.matchAll(/(?:WITH(?:\s+RECURSIVE)?|,)\s*(\w+)\s*(?:\([^)]*\))?\s+AS\s+(?:MATERIALIZED\s+)?\(/gi)) other.add(m[1])
  return { graph, other }
}

/** The partial indexes (`CREATE INDEX … WHERE …`): scanning one reads only its rows, never the whole table. */
async function partialIndexes(): Promise<Set<string>> {
  const { results } = await env.DB.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'`).all<{ name: string }>()
  return new Set(results.map((r) => r.name))
}

/**
 * Full passes over a graph table that are deliberate: each runs once per analysis as the outermost loop,
 * with nothing joined inside it, so its cost is linear in the graph (measured at 1 M edges in BENCHMARKS.md).
 */
const ALLOWED_SCANS: { statement: RegExp; line: RegExp; why: string }[] = [
  {
    statement: /^WITH dnm\(pid, dn\) AS[\s\S]*\sFROM nodes n\s+CROSS JOIN dnm ON[\s\S]*\sWHERE EXISTS \(SELECT 1 FROM dnm\)\s+\) AS derived_candidate WHERE true ORDER BY id ON CONFLICT \(start_id, kind, end_id\) DO NOTHING$/,
    line: /^SCAN n$/,
    why: 'DN members: only when a DN= placeholder exists (a constant EXISTS checked before the loop); one pass, each node looked up in the placeholders',
  },
  {
    statement: /^UPDATE nodes SET\s+kind = CASE WHEN kind = 'Base' THEN 'Group'/,
    line: /^SCAN nodes$/,
    why: "FixWellKnownNodeTypes: a node is picked by its object id's RID suffix, which no index orders (one pass, ~0.1 s per 100 k nodes)",
  },
]

/** The plan lines that read a whole graph table: a plain or non-partial index scan, or an automatic index built over it. */
function fullPasses(sql: string, plan: string[], partial: Set<string>): string[] {
  const { graph } = tableNames(sql)
  const out: string[] = []
  for (const line of plan) {
    const scan = /^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/.exec(line)
    if (scan && graph.has(scan[1]) && !(scan[2] && partial.has(scan[2]))) out.push(line)
    const auto = /^(?:SEARCH|SCAN) (\w+) USING AUTOMATIC/.exec(line)
    if (auto && graph.has(auto[1])) out.push(line)
  }
  return out.filter((line) => !ALLOWED_SCANS.some((a) => a.statement.test(sql.trim()) && a.line.test(line)))
}

async function explain(s: Captured): Promise<string[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
    .bind(...s.params)
    .all<{ detail: string }>()
  return results.map((r) => r.detail)
}

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 160)

describe('post-processing query plans (every analysis run, whole graph)', () => {
  it('captures every statement of post-processing, the ones only some graphs reach included', async () => {
    const texts = (await capturedStatements()).map((s) => s.sql.replace(/\s+/g, ' ').trim())
    // a statement of each source file, and each data-dependent one
    for (const start of [
      'UPDATE nodes SET kind = CASE', // wellknown.store.ts
      'WITH RECURSIVE dom(id, sid)', // replication membership
      'WITH RECURSIVE g(id)', // ADCS membership
      'SELECT n.id, n.objectid, n.kinds', // ADCS principals (only with ADCS objects)
      'WITH RECURSIVE cx(computer, rdp, dau)', // Citrix subgraph (only with a Citrix computer)
      'WITH dnm(pid, dn)', // DN members
      'FROM ( SELECT DISTINCT e.start_id, v.domain', // ESC9/10 (the candidates of a derived insert, src/graph/ids.ts DERIVED_INSERT_HEAD)
      'WITH su(az, ad)', // hybrid (Azure)
      'WITH RECURSIVE au(sid, id) AS', // NTLM relay (ntlm.store.ts: SMB, LDAP, and ADCS with victims)
    ])
      expect(texts.some((t) => t.startsWith(start) || (start.startsWith('FROM (') && t.includes(start))), start).toBe(true)
  })

  it('no statement reads the whole nodes or edges table (no full scan, no automatic index over them) beyond the listed single passes', async () => {
    const partial = await partialIndexes()
    const offenders: string[] = []
    for (const s of await capturedStatements()) {
      const bad = fullPasses(s.sql, await explain(s), partial)
      if (bad.length > 0) offenders.push(`${oneLine(s.sql)}\n    ${bad.join('\n    ')}`)
      if (process.env.PLANS) console.log(oneLine(s.sql), '\n   ', (await explain(s)).join('\n    '))
    }
    expect(offenders.join('\n')).toBe('')
  })

  it('the check sees the DN-member statement with its former plain JOINs (a scan of every node with an automatic index over the edges)', async () => {
    const former = `
WITH dnm(pid, dn) AS (
  SELECT id, upper(substr(objectid, 4)) FROM nodes WHERE objectid >= 'DN=' AND objectid < 'DN>')
INSERT OR IGNORE INTO edges (start_id, end_id, kind, properties, created_at, updated_at, derived)
SELECT n.id, e.end_id, 'MemberOf', '{}', ?1, ?1, 1
FROM dnm
JOIN edges e ON e.start_id = dnm.pid AND e.kind = 'MemberOf'
JOIN nodes n ON upper(json_extract(n.properties, '$.distinguishedname')) = dnm.dn AND n.id <> dnm.pid`
    const s = { sql: former, params: ['2026-01-01T00:00:00.000Z'] }
    expect(fullPasses(s.sql, await explain(s), await partialIndexes()).length).toBeGreaterThan(0)
  })
})
