/**
 * POST /api/v2/clear-database: BloodHound's database wipe (HandleDatabaseWipe), docs/graph.md "Clearing
 * collected data". HTTP only: validation and BloodHound's messages here, the plan in ./wipe.ts, SQL in
 * ./wipe.store.ts, the chunked deletion in the Analyzer object.
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { auditOf } from '../audit/audit'
import { requireSelectorAccess } from '../assetgroups/access'
import { analyzerStub } from '../findings/analyzer.client'
import { recordWipe } from './wipe.store'
import { loadKindCatalog } from '../extensions/catalog'
import { sourceKindList } from '../graph/kinds'
import { planWipe, WipeBody } from './wipe'

export const wipeRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/clear-database',
      operationId: 'DeleteBloodHoundData',
      summary: "Delete collected data (BloodHound's clear-database): the graph, by source kind or relationship kind, file-ingest history, custom selectors, data quality history",
      description:
        'Answers 204 once the request is recorded. Graph data is deleted in the background, in chunks that never leave an edge ' +
        'without its ends (`GET /api/v2/datapipe/status` says `purging` meanwhile), then an analysis run follows; deleting ' +
        "custom selectors also requests a run. `deleteCollectedGraphData`: every node and edge. `deleteSourceKinds`: the nodes of those " +
        'source kinds (ids of `GET /api/v2/graphs/source-kinds`: 1 Base, 2 AZBase, then the extensions\' source kinds; 0: nodes of ' +
        'none of them) with their edges; not together with ' +
        '`deleteCollectedGraphData`. `deleteRelationships`: edges of those kinds. `deleteFileIngestHistory`: the file-upload jobs ' +
        'that have ended (a running job is kept). `deleteAssetGroupSelectors`: the custom (non-default) selectors of those asset ' +
        'groups. `deleteDataQualityHistory`: every row of the data-quality history (`GET /api/v2/ad-domains/{id}/data-quality-stats` and the like). ' +
        'Administrators with access to every environment only.',
      tags: ['Database'],
      auth: 'db/Wipe',
      replay: { once: 'destroys collected data: a copy must not delete what was uploaded again since' },
      audit: { action: 'DeleteBloodhoundData', fields: ({ body }) => ({ options: body }) },
      body: { kind: 'json', schema: WipeBody, maxBytes: 64 * 1024 },
      responses: { 204: { description: 'recorded (no body); graph data is deleted in the background' } },
    },
    async (c, { body }) => {
      requireSelectorAccess(c.var.principal.environmentAccess)
      const plan = planWipe(body, sourceKindList(await loadKindCatalog(c.env.DB)))
      const audit = auditOf(c)
      const done = await recordWipe(
        c.env.DB,
        { ...plan, requestedBy: c.var.principal.userId, now: new Date().toISOString() },
        audit.write({}),
      )
      if (done.analysisRequested) {
        try {
          await analyzerStub(c.env).wake()
        } catch (e) {
          // recorded in D1: the next wake-up (any analysis request, the cron sweep) picks it up
          console.error(JSON.stringify({ level: 'error', event: 'wipe_wake_failed', error: e instanceof Error ? e.message : String(e) }))
        }
      }
      return c.body(null, 204)
    },
  ),
]
