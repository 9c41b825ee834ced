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
 *
 * Prints one line per query (status, time, what it found or the error) and the tally of statuses; with
 * --only, also the names of the nodes found. Exit 1 when any answer is a 5xx or a 400 that is not a budget
 * refusal (`the query was stopped: …`). --state keeps the loaded database in DIR for the next run.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { strToU8, zipSync } from 'fflate'
import { BenchApi, type Timed } from './lib/api'
import { createTokens, login, benchIp, type TokenCred } from './lib/credentials'
import { generateSharpHound, sharpHoundFiles } from './lib/sharphound-gen'
import { richFiles, azureFile, S, Z } from './lib/richlab'
import { adminCredentials, buildBundle, startMiniflare } from './lib/worker-host'
import { SID, v6Files } from '../test/fixtures/sharphound/testlab'
import { pkiFiles } from '../test/fixtures/sharphound/pkilab'
import { azureHoundFile } from '../test/fixtures/azurehound/tenant'
import { file as rolesFile } from '../test/fixtures/azurehound/roles'

type Answer = { data?: { nodes: Record<string, { label: string }>; edges: unknown[]; literals: unknown[] }; errors?: { message: string }[] }

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { users: { type: 'string', default: '300' }, state: { type: 'string' }, only: { type: 'string' }, out: { type: 'string' } },
})
if (positionals.length !== 1) {
  console.error('usage: npm run bench:cypher-library -- path/to/Queries.json [--users N] [--state DIR] [--only i,j] [--out FILE]')
  process.exit(2)
}
const library = JSON.parse(readFileSync(positionals[0], 'utf8')) as { name: string; query: string }[]
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
  const w = await startMiniflare({ bundle: await buildBundle(path.join(tmp, 'bundle')), persistDir: stateDir, migrate: !reuse })
  let failed = false
  try {
    let tokens: TokenCred[]
    if (reuse) {
      tokens = JSON.parse(readFileSync(marker, 'utf8')) as TokenCred[]
      log(`reusing the loaded database in ${stateDir}`)
    } else {
      const { username, password } = adminCredentials()
      tokens = await createTokens(w.url, await login(w.url, username, password, benchIp(3, 172)), 2, 'library')
      await load(new BenchApi(w.url, tokens))
      mkdirSync(stateDir, { recursive: true })
      writeFileSync(marker, JSON.stringify(tokens))
    }
    const api = new BenchApi(w.url, tokens)
    const send = (query: string, include: boolean) =>
      api.timed<Answer>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query, include_properties: include }), 'application/json')
    const size = await send('MATCH (n) RETURN count(n) AS nodes', false)
    log(`graph: ${JSON.stringify(size.body?.data?.literals)}`)
    const only = values.only ? new Set(values.only.split(',').map(Number)) : null
    const tally: Record<string, number> = {}
    const rows: Record<string, unknown>[] = []
    const describe = (r: Timed<Answer>) =>
      r.status === 200 && r.body?.data
        ? `${Object.keys(r.body.data.nodes).length} nodes, ${r.body.data.edges.length} edges, ${r.body.data.literals.length} literals`
        : (r.body?.errors?.[0]?.message ?? r.text).slice(0, 200)
    for (const [i, q] of library.entries()) {
      if (only && !only.has(i)) continue
      for (const include of [false, true]) {
        const r = await send(q.query, include)
        const key = `${r.status}${include ? ' include_properties' : ''}`
        tally[key] = (tally[key] ?? 0) + 1
        const bad = r.status >= 500 || (r.status === 400 && !/^the query was stopped/.test(r.body?.errors?.[0]?.message ?? ''))
        failed ||= bad
        if (!include) {
          rows.push({ index: i, name: q.name, status: r.status, ms: Math.round(r.ms), answer: describe(r), plan: r.headers.get('x-cypher-plan') })
          console.log(`${String(i).padStart(3)} ${r.status} ${String(Math.round(r.ms)).padStart(6)} ms  ${q.name.slice(0, 72).padEnd(72)} ${describe(r)}${bad ? '  <-- defect' : ''}`)
          if (only && r.status === 200) console.log(`      ${Object.values(r.body!.data!.nodes).map((n) => n.label).sort().join(' | ')}`)
        } else if (r.status !== rows[rows.length - 1].status) console.log(`      with include_properties: ${r.status} ${describe(r)}${bad ? '  <-- defect' : ''}`)
      }
    }
    console.log(JSON.stringify(tally))
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
