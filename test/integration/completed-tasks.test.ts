/**
 * GET /api/v2/file-upload/{id}/completed-tasks (BloodHound's completed tasks of an ingest job): one task per
 * uploaded file, accepted or refused, written with the file's record in its job; who may read them; bad input.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope, userWithRole } from '../helpers'
import { endUploadJob, startUploadJob, uploadFile } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'

const db = () => (env as unknown as { DB: D1Database }).DB
let admin: EdgeHoundClient

const graph = (nodes: unknown[], edges: unknown[] = []) => JSON.stringify({ graph: { nodes, edges } })

interface Task {
  id: number
  ingest_job_id: number
  file_name: string
  parent_file_name: string
  errors: string[]
  warnings: string[]
  created_at: string
  updated_at: string
}

beforeAll(async () => {
  admin = await adminToken()
})

describe('GET /api/v2/file-upload/{id}/completed-tasks', () => {
  it('lists every file of the job in upload order: an accepted one (with its unmatched edge), a refused one (with its reasons)', async () => {
    const job = (await startUploadJob(admin)).data.id
    const empty = await admin.raw('GET', `/api/v2/file-upload/${job}/completed-tasks`)
    expect(empty.status).toBe(200)
    expect(await empty.json()).toEqual({ count: 0, skip: 0, limit: 1000, data: [] })

    await uploadFile(admin, job, graph([{ id: 'CT-A', kinds: ['CTNode'] }], [{ start: { value: 'CT-A' }, end: { value: 'CT-NOWHERE' }, kind: 'CTEdge' }]), {
      contentType: 'application/json',
      fileName: 'good.json',
    })
    const refused = await admin.raw('POST', `/api/v2/file-upload/${job}`, '{"graph": {"nodes": [{"kinds": ["CTNode"]}]}}', {
      contentType: 'application/json',
      headers: { 'X-File-Upload-Name': 'bad.json' },
    })
    expect(refused.status).toBe(400)
    await endUploadJob(admin, job)

    const res = await admin.raw('GET', `/api/v2/file-upload/${job}/completed-tasks`)
    expect(res.status).toBe(200)
    const { data, count } = (await res.json()) as { data: Task[]; count: number }
    expect(count).toBe(2)
    const second = (await (await admin.raw('GET', `/api/v2/file-upload/${job}/completed-tasks?skip=1&limit=1`)).json()) as { data: Task[]; count: number }
    expect([second.count, second.data.map((t) => t.file_name)]).toEqual([2, ['bad.json']])
    expect(data.map((t) => [t.ingest_job_id, t.file_name, t.parent_file_name])).toEqual([
      [job, 'good.json', ''],
      [job, 'bad.json', ''],
    ])
    expect(data[0].errors).toHaveLength(1)
    expect(data[0].errors[0]).toMatch(/CT-NOWHERE/)
    expect(data[0].warnings).toEqual([])
    expect(data[1].errors.length).toBeGreaterThan(0)
    expect(data[1].errors.join(' ')).toMatch(/id/)
    for (const t of data) {
      expect(Number.isInteger(t.id)).toBe(true)
      expect(t.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    }
    // the job's own ledger agrees: two files, one failed
    const j = await db().prepare('SELECT total_files, failed_files FROM ingest_jobs WHERE id = ?').bind(job).first<{ total_files: number; failed_files: number }>()
    expect(j).toEqual({ total_files: 2, failed_files: 1 })
  })

  it("another user's job is absent (404), an unknown one too; a malformed id is a 400; graph/Ingest is needed", async () => {
    const job = (await startUploadJob(admin)).data.id
    const { client: other } = await userWithRole('User')
    await expectEnvelope(await other.raw('GET', `/api/v2/file-upload/${job}/completed-tasks`), 404)
    await expectEnvelope(await admin.raw('GET', '/api/v2/file-upload/999999/completed-tasks'), 404)
    await expectEnvelope(await admin.raw('GET', '/api/v2/file-upload/abc/completed-tasks'), 400, 'id is malformed')
    const { client: ro } = await userWithRole('Read-Only')
    await expectEnvelope(await ro.raw('GET', `/api/v2/file-upload/${job}/completed-tasks`), 403)
    const own = (await startUploadJob(other)).data.id
    expect((await other.raw('GET', `/api/v2/file-upload/${own}/completed-tasks`)).status).toBe(200)
  })

  it("clearing the file-ingest history deletes an ended job's tasks with it", async () => {
    const job = (await startUploadJob(admin)).data.id
    await uploadFile(admin, job, graph([{ id: 'CT-B', kinds: ['CTNode'] }]), { contentType: 'application/json', fileName: 'b.json' })
    await endUploadJob(admin, job)
    const count = async () => (await db().prepare('SELECT count(*) AS n FROM ingest_job_tasks WHERE job_id = ?').bind(job).first<{ n: number }>())!.n
    expect(await count()).toBe(1)
    expect((await admin.raw('POST', '/api/v2/clear-database', { deleteFileIngestHistory: true })).status).toBe(204)
    expect(await count()).toBe(0)
  })
})
