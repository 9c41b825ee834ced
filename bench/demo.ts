/// <reference types="node" />
/**
 * Demo data for a local server: the benchmark's deterministic AD + Azure graph (bench/lib/generate.ts),
 * ingested through the public API like any collector would (file-upload start → files → end, which also
 * requests an analysis run).
 *
 *   tsx bench/demo.ts [--base http://127.0.0.1:8787] [--edges 10000] [--username admin --password …]
 *
 * `npm run dev -- --demo` (or EDGEHOUND_DEMO=1 npm run dev) starts it next to `wrangler dev`. Idempotent:
 * when the demo domain is already there it only says so. Exit status 1 when the server never answered or
 * rejected the data.
 */
import { parseArgs } from 'node:util'
import { EdgeHoundClient } from '../src/client'
import { availableDomains, endUploadJob, startUploadJob, uploadFile } from '../src/client/graph'
import { generateGraph, openGraphPayloads } from './lib/generate'
import { adminCredentials } from './lib/worker-host'

async function waitForServer(base: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${base}/health`)
      await r.arrayBuffer()
      if (r.status === 200 || r.status === 429) return
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 500))
  }
  throw new Error(`${base} did not answer within ${timeoutMs / 1000} s`)
}

async function main() {
  const { values } = parseArgs({
    options: {
      base: { type: 'string', default: process.env.EDGEHOUND_URL ?? 'http://127.0.0.1:8787' },
      edges: { type: 'string', default: process.env.EDGEHOUND_DEMO_EDGES ?? '10000' },
      username: { type: 'string' },
      password: { type: 'string' },
      wait: { type: 'string', default: '120' },
    },
  })
  const base = values.base!.replace(/\/+$/, '')
  const creds = values.username && values.password ? { username: values.username, password: values.password } : adminCredentials()
  const edges = Number(values.edges)
  if (!Number.isInteger(edges) || edges < 1200) throw new Error('--edges must be an integer ≥ 1200')

  await waitForServer(base, Number(values.wait) * 1000)
  const anon = new EdgeHoundClient({ baseUrl: base })
  const session = await anon.login(creds.username, creds.password)
  const admin = anon.withCredentials({ kind: 'bearer', jwt: session.data.session_token })

  const g = generateGraph({ edges })
  const present = new Set((await availableDomains(admin)).data.map((e) => e.id.toUpperCase()))
  if (g.domains.every((d) => present.has(d.sid.toUpperCase()))) {
    console.log(`demo data: already loaded (${g.domains.map((d) => d.name).join(', ')}, ${g.tenant.name})`)
    return
  }
  const job = await startUploadJob(admin)
  let files = 0
  for (const p of openGraphPayloads(g, 20_000)) {
    await uploadFile(admin, job.data.id, p.text, { fileName: `demo-${++files}.json` })
  }
  const ended = await endUploadJob(admin, job.data.id)
  const j = ended.data
  const sample = g.tierZeroPaths[0]
  console.log(
    [
      `demo data: ingest job ${j.id} ended (${j.nodes_received} nodes, ${j.edges_received} edges, ${j.unmatched_edges} unmatched); analysis requested.`,
      `  environments: ${g.domains.map((d) => `${d.name} (${d.sid})`).join(', ')}, ${g.tenant.name} (${g.tenant.id})`,
      `  try: GET /api/v2/search?q=DOMAIN%20ADMINS`,
      sample
        ? `       GET /api/v2/graphs/shortest-path?start_node=${encodeURIComponent(g.nodes[sample.nodes[0]].objectid)}&end_node=${encodeURIComponent(g.nodes[sample.nodes[sample.nodes.length - 1]].objectid)}  (${sample.name})`
        : '',
      `       GET /api/v2/domains/${g.domains[0].sid}/available-types, then …/details?finding=<type>`,
    ]
      .filter(Boolean)
      .join('\n'),
  )
}

main().catch((e) => {
  console.error(`demo data: ${(e as Error).message}`)
  process.exit(1)
})
