/// <reference types="node" />
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { run } from '../../src/cli/main'
import { FakeServer, testIO, startFakeServer } from './fake-server'

const TOKEN_ID = '6b1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const TOKEN_KEY = 'bookmark-test-key'

let srv: FakeServer
beforeEach(async () => {
  srv = await startFakeServer(TOKEN_ID, TOKEN_KEY)
})
afterEach(() => srv.close())

describe('the CLI passes X-D1-Bookmark on within a run', () => {
  it('ingest: the upload carries the start\'s bookmark, the end carries the (newer) upload\'s', async () => {
    srv.on('POST', '/api/v2/file-upload/start', () => ({ status: 201, headers: { 'X-D1-Bookmark': '0000000a-00000001' }, json: { data: { id: 7, status: 1 } } }))
    srv.on('POST', '/api/v2/file-upload/:id', (_r, p) => ({
      status: 202,
      headers: { 'X-D1-Bookmark': '0000000a-00000005' },
      json: { data: { job_id: Number(p.id), file_name: 'a.json', files: 1, nodes: 1, edges: 0, nodes_changed: 1, edges_changed: 0, unmatched_edges: 0, errors: [] } },
    }))
    srv.on('POST', '/api/v2/file-upload/:id/end', () => ({ status: 200, headers: { 'X-D1-Bookmark': '0000000a-00000006' } }))
    const io = await testIO({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })
    await writeFile(path.join(io.cwd, 'a.json'), JSON.stringify({ graph: { nodes: [{ id: 'n', kinds: ['User'] }], edges: [] } }))
    expect(await run(['ingest', 'a.json'], io)).toBe(0)
    const [start] = srv.to('POST', '/api/v2/file-upload/start')
    const upload = srv.requests.find((r) => r.path === '/api/v2/file-upload/7')!
    const [end] = srv.to('POST', '/api/v2/file-upload/7/end')
    expect(start.headers['x-d1-bookmark']).toBeUndefined()
    expect(upload.principal).toBe(TOKEN_ID) // the header does not disturb the signature
    expect(upload.headers['x-d1-bookmark']).toBe('0000000a-00000001')
    expect(end.headers['x-d1-bookmark']).toBe('0000000a-00000005')
  })
})
