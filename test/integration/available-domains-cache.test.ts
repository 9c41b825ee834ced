/**
 * available-domains answers from an isolate copy while nothing it is made of has changed
 * (src/graph/environments.ts). These tests keep that copy warm (every read goes to the same worker) and
 * check that each writer makes the very next answer current: an upload committed into a running job, the
 * job's end, an analysis run's commit, an extension write or deletion, a clear-database wipe; and that the caller's environment access is
 * applied to the shared copy per request. (test/integration/read-paths.test.ts counts the statements;
 * test/unit/available-domains-writers.test.ts requires every writer of these tables to be listed with its case here.)
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { deleteExtension, extensionIdByName, upsertExtension } from '../../src/client/extensions'
import { endUploadJob, startUploadJob, uploadFile, type OpenGraphPayload } from '../../src/client/graph'
import { listRuns } from '../../src/findings/analysis.store'
import { D, EDGES, EXPECTED_IMPACT_VALUES, G, GH_EXTENSION, NODES, T, environmentProperty } from '../fixtures/findings/known-graph'
import { waitForRun } from '../fixtures/findings/helpers'
import { linkWellKnownNodes } from '../../src/collectors/wellknown.store'
import { NEW_ID_SQL } from '../../src/graph/ids'

interface Domain {
  id: string
  name: string
  type: string
  collected: boolean
  collected_at: string | null
  impactValue: number
}

const payload: OpenGraphPayload = {
  graph: {
    nodes: NODES.map((n) => ({ id: n.objectid, kinds: n.kinds, properties: { ...n.properties, ...environmentProperty(n.environment_id) } })),
    edges: EDGES.map((e) => ({ start: { value: e.start }, end: { value: e.end }, kind: e.kind, properties: e.properties ?? {} })),
  },
}

const domains = async (c: EdgeHoundClient) => (await c.call<{ data: Domain[] }>('GET', '/api/v2/available-domains')).data
const ours = (list: Domain[]) => list.filter((d) => [D, T, G].includes(d.id)).sort((a, b) => a.id.localeCompare(b.id))

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken({ paced: true })
  await upsertExtension(admin, GH_EXTENSION)
})

describe('available-domains from the isolate copy is never stale', () => {
  it('after an upload commits, after its job ends, after the analysis run commits', async () => {
    const empty = await domains(admin)
    expect(ours(empty)).toEqual([])
    expect(await domains(admin)).toEqual(empty) // warm copy, nothing changed

    // An upload committed into a running job: its environments are listed at once, not yet collected.
    const job = (await startUploadJob(admin)).data
    expect((await uploadFile(admin, job.id, payload)).data).toBeTruthy()
    const uploaded = ours(await domains(admin))
    expect(uploaded.map((d) => d.id)).toEqual([D, T, G].sort())
    expect(uploaded.every((d) => !d.collected && d.collected_at === null && d.impactValue === 0)).toBe(true)
    expect(ours(await domains(admin))).toEqual(uploaded)

    // The job ends: every environment it carried is collected (the analysis run it requests is not done yet
    // or is: impact is checked below, once the run is known to be complete).
    await endUploadJob(admin, job.id)
    const ended = ours(await domains(admin))
    expect(ended.every((d) => d.collected && typeof d.collected_at === 'string')).toBe(true)

    // The run commits: impactValue of the new run.
    const { runs } = await listRuns(env.DB, 0, 1)
    expect((await waitForRun(env.DB, runs[0].id)).status).toBe('complete')
    const analysed = ours(await domains(admin))
    expect(Object.fromEntries(analysed.map((d) => [d.id, d.impactValue]))).toEqual(EXPECTED_IMPACT_VALUES)
    expect(ours(await domains(admin))).toEqual(analysed)

    // A later job renames an environment: no new environment node, no job ended, no run; only the commit.
    const d = NODES.find((n) => n.objectid === D)!
    const rename = (await startUploadJob(admin)).data
    await uploadFile(admin, rename.id, {
      graph: { nodes: [{ id: D, kinds: d.kinds, properties: { ...d.properties, ...environmentProperty(D), name: 'RENAMED.LOCAL' } }], edges: [] },
    })
    expect(ours(await domains(admin)).find((e) => e.id === D)!.name).toBe('RENAMED.LOCAL')
  })

  it("a collector client's job ends: its environment is listed, collected, at once", async () => {
    const sid = `S-1-5-21-7001-7002-${Math.floor(Math.random() * 1e6)}`
    const made = await admin.raw('POST', '/api/v2/clients', { name: `adc-${crypto.randomUUID()}`, type: 'OpenHound', environment_id: sid })
    expect(made.status).toBe(201)
    const created = ((await made.json()) as { data: { id: string; token: { id: string; key: string } } }).data
    const job = ((await (await admin.raw('POST', `/api/v2/clients/${created.id}/jobs`, {})).json()) as { data: { id: number } }).data.id
    const collector = client({ kind: 'token', tokenId: created.token.id, tokenKey: created.token.key })
    expect((await collector.raw('POST', '/api/v2/jobs/start', { id: job })).status).toBe(200)
    const posted = await collector.raw('POST', '/api/v2/ingest', {
      graph: { nodes: [{ id: sid, kinds: ['Domain'], properties: { name: 'CLIENT.LOCAL', domainsid: sid } }], edges: [] },
      metadata: { source_kind: 'Base' },
    })
    expect(posted.status).toBe(202)
    // staged until the job ends: not listed yet
    expect((await domains(admin)).find((d) => d.id === sid)).toBeUndefined()
    expect((await collector.raw('POST', '/api/v2/jobs/end', { status: 'complete', message: 'done' })).status).toBe(200)
    expect((await domains(admin)).find((d) => d.id === sid)).toMatchObject({ name: 'CLIENT.LOCAL', collected: true })
  })

  it('an extension write renames the environment type at once', async () => {
    const before = ours(await domains(admin)).find((d) => d.id === G)!
    expect(before.type).toBe(GH_EXTENSION.schema.display_name)
    await upsertExtension(admin, { ...GH_EXTENSION, schema: { ...GH_EXTENSION.schema, version: 'v9.9.9', display_name: 'Renamed GitHub' } })
    expect(ours(await domains(admin)).find((d) => d.id === G)!.type).toBe('Renamed GitHub')
  })

  it('collector post-processing naming an unnamed environment node (inside an analysis run) shows at once', async () => {
    const NOW = new Date().toISOString()
    const insert = env.DB.prepare(
      `INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at, id)
       VALUES (?1, ?2, ?3, ?4, ?1, ?2, ?5, ?6, ?6, ${NEW_ID_SQL})`,
    )
    // storage contract (migrations/0004): a named domain, and an environment node without a name whose id
    // extends the domain's SID, which RunDomainAssociations names "(DOMAIN) <id>"
    await env.DB.batch([
      insert.bind('S-1-5-21-9090', 'Domain', '["Domain","Base"]', 'PP.LOCAL', '{"name":"PP.LOCAL"}', NOW),
      insert.bind('S-1-5-21-9090-77', 'Domain', '["Domain","Base"]', null, '{}', NOW),
    ])
    expect((await domains(admin)).find((d) => d.id === 'S-1-5-21-9090-77')!.name).toBe('S-1-5-21-9090-77')
    await linkWellKnownNodes(env.DB, NOW)
    expect((await domains(admin)).find((d) => d.id === 'S-1-5-21-9090-77')!.name).toBe('(PP.LOCAL) S-1-5-21-9090-77')
  })

  it('an extension deletion shows the raw environment kind as the type at once', async () => {
    const named = ours(await domains(admin)).find((d) => d.id === G)!.type // copy warm, the type named by the extension
    expect(named).not.toBe('GH_Organization')
    await deleteExtension(admin, (await extensionIdByName(admin, GH_EXTENSION.schema.name))!)
    try {
      expect(ours(await domains(admin)).find((d) => d.id === G)!.type).toBe('GH_Organization')
    } finally {
      await upsertExtension(admin, GH_EXTENSION)
    }
    expect(ours(await domains(admin)).find((d) => d.id === G)!.type).toBe(GH_EXTENSION.schema.display_name)
  })

  it("applies each caller's environment access to the shared copy, per request", async () => {
    expect(ours(await domains(admin)).map((d) => d.id)).toEqual([D, T, G].sort()) // copy warm with every environment
    const onlyD = (await userWithRole('Read-Only', { all_environments: false, environment_access: [D] })).client
    const onlyTG = (await userWithRole('Read-Only', { all_environments: false, environment_access: [T, G] })).client
    expect((await domains(onlyD)).map((d) => d.id)).toEqual([D])
    expect((await domains(onlyTG)).map((d) => d.id).sort()).toEqual([T, G].sort())
    expect(ours(await domains(admin)).map((d) => d.id)).toEqual([D, T, G].sort())
  })

  it('clear-database deleting the environments (in the Analyzer object, in chunks) shows at once once the wipe is done', async () => {
    expect(ours(await domains(admin)).map((d) => d.id)).toEqual([D, T, G].sort()) // copy warm
    expect((await admin.raw('POST', '/api/v2/clear-database', { deleteCollectedGraphData: true })).status).toBe(204)
    for (const until = Date.now() + 30_000; ; ) {
      const open = await env.DB.prepare(`SELECT count(*) AS n FROM database_wipes WHERE status IN ('pending', 'running')`).first<{ n: number }>()
      if (open!.n === 0) break
      if (Date.now() > until) throw new Error('wipe did not finish')
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(ours(await domains(admin))).toEqual([])
  })
})
