/**
 * GET /api/v2/datapipe/status, BloodHound's GetDatapipeStatus (`datapipe.datapipe.status.yaml`): what the
 * pipeline from ingest to analysis is doing. Read by BloodHound's JS client and the go-sdk (the older Go
 * Sentinel connector asks it for the last complete analysis). docs/findings.md "Datapipe status".
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ZERO_TIME } from './details'
import { datapipeState } from './datapipe.store'

export const DATAPIPE_STATUSES = ['idle', 'ingesting', 'analyzing', 'purging'] as const

export const datapipeRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/datapipe/status',
      operationId: 'GetDatapipeStatus',
      summary: 'What the pipeline is doing: idle, ingesting (a file-upload job is open), analyzing (a run is pending or running) or purging (clear-database is deleting graph data)',
      description:
        '`purging` while a clear-database request is deleting graph data, else `analyzing` while an analysis run is pending or running, else `ingesting` while a file-upload job is open, else `idle`. ' +
        '`last_complete_analysis_at`: commit time of the newest complete run; `last_analysis_run_at`: start of the newest run; ' +
        '`updated_at`: the newest change of a run or job. Times never seen are `0001-01-01T00:00:00.000Z`, as BloodHound writes a zero time.',
      tags: ['Datapipe'],
      auth: 'authenticated',
      responses: {
        200: {
          description: 'the status',
          schema: z.object({
            data: z.object({
              status: z.enum(DATAPIPE_STATUSES),
              updated_at: z.string(),
              last_complete_analysis_at: z.string(),
              last_analysis_run_at: z.string(),
            }),
          }),
        },
      },
    },
    async (c) => {
      const s = await datapipeState(c.env.DB)
      const status = s.wipes_active > 0 ? 'purging' : s.runs_active > 0 ? 'analyzing' : s.jobs_active > 0 ? 'ingesting' : 'idle'
      return c.json({
        data: {
          status,
          updated_at: s.last_change ?? ZERO_TIME,
          last_complete_analysis_at: s.last_complete ?? ZERO_TIME,
          last_analysis_run_at: s.last_run ?? ZERO_TIME,
        },
      })
    },
  ),
]
