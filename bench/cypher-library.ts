/// <reference types="node" />
/**
 * The public BloodHound Query Library against EdgeHound (issue 14): every query of a `Queries.json` (SpecterOps'
 * BloodHoundQueryLibrary, read at run time from the path given; nothing of it is part of this repository)
 * through POST /api/v2/graphs/cypher, with and without include_properties, on a local worker loaded through
 * the file-upload API with the test fixtures (SharpHound TESTLAB and PKILAB, AzureHound tenant and roles),
 * bench/lib/richlab.ts, and a generated SharpHound domain with ADCS and NTLM facts, after an analysis run
 * (Tier Zero by selector: RICHLAB's carol and DC1, two Entra users; Owned: TESTLAB's alice).
 *
 *   npm run bench:cypher-library -- path/to/Queries.json [--users 300] [--state DIR] [--only 3,17] [--out FILE]
 *   npm run bench:cypher-library -- DIR_OR_FILE… --load collector-output.json …
 *
 * Each path is a JSON file (an array of queries as Queries.json, or one query object as an OpenGraph
 * collector's saved search / privilege-zone rule: `query` or `cypher`, `name`) or a folder of such files.
 * `--load FILE` (repeatable) uploads more collector output (OpenGraph, SharpHound, AzureHound JSON) in the
 * same job, e.g. the sample of the collector whose queries are run. `--query TEXT` (repeatable) runs that
 * query instead of the files' and prints its answer (literals, node names and kinds, edges) and plan.
 *
 * Prints one line per query (status, time, what it found or the error) and the tally of statuses; with
 * --only, also the names of the nodes found. Exit 1 when any answer is a 5xx or a 400 that is not a budget
 * refusal (`the query was stopped: …`), or when include_properties changes what is found. --state keeps the
 * loaded database in DIR for the next run.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { strToU8, zipSync } from 'fflate'
import { BenchApi, type Timed } from './lib/api'
import { createTokens, login, benchIp, type TokenCred } from './lib/credentials'
import { generateSharpHound, sharpHoundFiles } from './lib/sharphound-gen'
import { richFiles, azureFile, S, Z } from './lib/richlab'
import { adminCredentials, buildBundle, pendingMigrations, startMiniflare } from './lib/worker-host'
import { SID, v6Files } from '../test/fixtures/sharphound/testlab'
import { pkiFiles } from '../test/fixtures/sharphound/pkilab'
import { azureHoundFile } from '../test/fixtures/azurehound/tenant'
import { file as rolesFile } from '../test/fixtures/azurehound/roles'

type Answer = { data?: { nodes: Record<string, { label: string }>; edges: unknown[]; literals: unknown[] }; errors?: { message: string }[] }

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    users: { type: 'string', default: '300' },
    state: { type: 'string' },
    only: { type: 'string' },
    out: { type: 'string' },
    load: { type: 'string', multiple: true },
    query: { type: 'string', multiple: true },
  },
})
if (positionals.length === 0 && !values.query) {
  console.error('usage: npm run bench:cypher-library -- Queries.json|DIR… [--load FILE]… [--users N] [--state DIR] [--only i,j] [--out FILE]')
  process.exit(2)
}

/** The queries of a file (an array, or one object with `query` / `cypher`) or of every .json file under a folder. */
function queriesOf(p: string): { name: string; query: string }[] {
  if (statSync(p).isDirectory())
    return readdirSync(p)
      .sort()
      .flatMap((f) => (f.endsWith('.json') || statSync(path.join(p, f)).isDirectory() ? queriesOf(path.join(p, f)) : []))
  const json = JSON.parse(readFileSync(p, 'utf8')) as unknown
  return (Array.isArray(json) ? json : [json]).flatMap((x: { name?: string; query?: unknown; cypher?: unknown }) => {
    const query = typeof x.query === 'string' ? x.query : typeof x.cypher === 'string' ? x.cypher : null
    return query === null ? [] : [{ name: x.name ?? path.basename(p), query }]
  })
}
const library = positionals.flatMap(queriesOf)
const log = (m: string) => console.error(`[library] ${m}`)
const zip = (files: Record<string, unknown>) => zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(JSON.stringify(v))])))

async function load(api: BenchApi): Promise<void> {
  const job = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
  const up = async (name: string, body: string | Uint8Array, type: string) => {
    const r = await api.timed('POST', `/api/v2/file-upload/${job}`, body, type)
    if (r.status !== 202 && r.status !== 200) throw new Error(`upload ${name}: ${r.status} ${r.text.slice(0, 300)}`)
  }
  await up('testlab.zip', zip(v6Files()), 'application/zip')
  await up('pkilab.zip', zip(pkiFiles()), 'application/zip')
  await up('richlab.zip', zip(richFiles()), 'application/zip')
  for (const [name, text] of sharpHoundFiles(generateSharpHound(Number(values.users), 13, { adcs: true, ntlm: true }), 5000)) await up(name, text, 'application/json')
  await up('tenant.json', JSON.stringify(azureHoundFile), 'application/json')
  await up('roles.json', JSON.stringify(rolesFile), 'application/json')
  await up('fabrikam.json', JSON.stringify(azureFile()), 'application/json')
  for (const f of values.load ?? []) await up(f, readFileSync(f), 'application/json')
  const select = (group: number, ids: string[]) =>
    api.ok('PUT', `/api/v2/asset-groups/${group}/selectors`, JSON.stringify(ids.map((sid) => ({ sid, action: 'add' }))), 'application/json')
  await select(1, [S.carol, S.dc1, Z.ext.toUpperCase(), Z.off.toUpperCase()])
  await select(2, [SID.alice])
  await api.ok('POST', `/api/v2/file-upload/${job}/end`)
  const id = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/analysis')).body!.data.id
  for (let i = 0; ; i++) {
    const run = (await api.ok<{ data: { status: string; error?: string | null } }>('GET', `/api/v2/analysis/${id}`)).body!.data
    if (run.status === 'complete' || run.status === 'failed') {
      log(`analysis run ${id} ${run.status}${run.error ? `: ${run.error}` : ''}`)
      return
    }
    if (i > 1800) throw new Error(`analysis run ${id} still ${run.status} after 30 minutes`)
    await new Promise((r) => setTimeout(r, 1000))
  }
}

async function main() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'edgehound-library-'))
  const stateDir = values.state ? path.resolve(values.state) : path.join(tmp, 'state')
  const marker = path.join(stateDir, 'edgehound-cypher-library.json')
  const reuse = existsSync(marker)
  // A reused database gets the migrations added since it was loaded (e.g. an index), as bench/cypher.ts does: a
  // file beside the marker lists those it has (without it: a database loaded before the list was kept, 2026-11-30,
  // when migrations 0001-0049 existed).
  const migrationsMarker = path.join(stateDir, 'edgehound-cypher-library-migrations.json')
  const recorded = existsSync(migrationsMarker) ? (JSON.parse(readFileSync(migrationsMarker, 'utf8')) as string[]) : null
  const { all: allMigrations, applied, missing } = pendingMigrations(reuse, recorded, 49)
  if (reuse && missing.length) log(`applying to the reused database the migrations it lacks: ${missing.join(', ')}`)
  const w = await startMiniflare({ bundle: await buildBundle(path.join(tmp, 'bundle')), persistDir: stateDir, migrate: !reuse || missing.length > 0, applied })
  mkdirSync(stateDir, { recursive: true })
  writeFileSync(migrationsMarker, JSON.stringify(allMigrations))
  let failed = false
  try {
    let tokens: TokenCred[]
    if (reuse) {
      tokens = JSON.parse(readFileSync(marker, 'utf8')) as TokenCred[]
      log(`reusing the loaded database in ${stateDir}`)
    } else {
      const { username, password } = adminCredentials()
      tokens = await createTokens(w.url, await login(w.url, username, password, benchIp(3, 172)), 2, 'library')
      try {
        await load(new BenchApi(w.url, tokens))
      } catch (e) {
        throw new Error(`loading the graph failed: ${(e as Error).message}${(e as Error).cause ? ` (${String((e as Error).cause)})` : ""}; runtime stderr: ${w.stderrTail().slice(-2000)}`)
      }
      mkdirSync(stateDir, { recursive: true })
      writeFileSync(marker, JSON.stringify(tokens))
    }
    const api = new BenchApi(w.url, tokens)
    const send = (query: string, include: boolean) =>
      api.timed<Answer>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query, include_properties: include }), 'application/json')
    const size = await send('MATCH (n) RETURN count(n) AS nodes', false)
    log(`graph: ${JSON.stringify(size.body?.data?.literals)}`)
    for (const q of values.query ?? []) {
      const r = await send(q, true)
      console.log(`== ${q}\n${r.status} ${r.headers.get('x-cypher-plan') ?? ''}`)
      if (r.status !== 200 || !r.body?.data) console.log(r.text.slice(0, 1000))
      else {
        for (const l of r.body.data.literals.slice(0, 200)) console.log('  literal', JSON.stringify(l))
        for (const [id, n] of Object.entries(r.body.data.nodes).slice(0, 50)) console.log('  node', id, n.label, JSON.stringify(n).slice(0, 300))
        for (const e of r.body.data.edges.slice(0, 50)) console.log('  edge', JSON.stringify(e).slice(0, 200))
      }
    }
    if (values.query) return
    const only = values.only ? new Set(values.only.split(',').map(Number)) : null
    const tally: Record<string, number> = {}
    const rows: Record<string, unknown>[] = []
    /** bytes of the answer's body as sent (UTF-8) */
    const bytesOf = (r: Timed<Answer>) => new TextEncoder().encode(r.text).length
    let largest = 0
    let largestPlain = 0
    const describe = (r: Timed<Answer>) =>
      r.status === 200 && r.body?.data
        ? `${Object.keys(r.body.data.nodes).length} nodes, ${r.body.data.edges.length} edges, ${r.body.data.literals.length} literals`
        : (r.body?.errors?.[0]?.message ?? r.text).slice(0, 200)
    for (const [i, q] of library.entries()) {
      if (only && !only.has(i)) continue
      for (const include of [false, true]) {
        let r: Timed<Answer>
        try {
          r = await send(q.query, include)
        } catch (e) {
          throw new Error(`query ${i}${include ? ' with include_properties' : ''}: the worker stopped answering (${(e as Error).message}${(e as Error).cause ? `: ${String((e as Error).cause)}` : ""}); runtime stderr: ${w.stderrTail().slice(-3000)}`)
        }
        const key = `${r.status}${include ? ' include_properties' : ''}`
        tally[key] = (tally[key] ?? 0) + 1
        const bad = r.status >= 500 || (r.status === 400 && !/^the query was stopped/.test(r.body?.errors?.[0]?.message ?? ''))
        failed ||= bad
        if (!include) {
          rows.push({ index: i, name: q.name, status: r.status, ms: Math.round(r.ms), bytes: bytesOf(r), answer: describe(r), plan: r.headers.get('x-cypher-plan') })
          console.log(`${String(i).padStart(3)} ${r.status} ${String(Math.round(r.ms)).padStart(6)} ms ${String(bytesOf(r)).padStart(9)} B  ${q.name.slice(0, 72).padEnd(72)} ${describe(r)}${bad ? '  <-- defect' : ''}`)
          if (only && r.status === 200) console.log(`      ${Object.values(r.body!.data!.nodes).map((n) => n.label).sort().join(' | ')}`)
        } else if (r.status !== rows[rows.length - 1].status || describe(r) !== rows[rows.length - 1].answer) {
          // the same nodes, edges and literals are expected with and without properties (or the same refusal)
          const differs = r.status < 400 || (rows[rows.length - 1].status as number) < 400
          failed ||= differs
          console.log(`      with include_properties: ${r.status} ${describe(r)}${bad || differs ? '  <-- defect' : ''}`)
        }
        if (include) largest = Math.max(largest, bytesOf(r))
        else largestPlain = Math.max(largestPlain, bytesOf(r))
      }
    }
    console.log(JSON.stringify(tally))
    // the answer size limit (src/cypher/answer.ts) must leave room for the largest legitimate answer
    console.log(`largest answer: ${largestPlain} B without include_properties, ${largest} B with`)
    if (values.out) writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), queries: library.length, tally, rows }, null, 2))
  } finally {
    await w.dispose()
    if (!values.state) rmSync(tmp, { recursive: true, force: true })
  }
  if (failed) process.exit(1)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
