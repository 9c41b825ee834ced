/**
 * BloodHound's collector manifest and download routes (issue 27), answered honestly: EdgeHound distributes no
 * collector binaries, so the manifest lists no version and a download is a 404 envelope naming the publisher.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'

let admin: EdgeHoundClient
beforeAll(async () => {
  admin = await adminToken({ paced: true })
})

describe('collector manifest and downloads', () => {
  it('the manifest of either collector is BloodHound\u2019s shape with no version, for any signed-in role', async () => {
    for (const type of ['sharphound', 'azurehound']) {
      const res = await admin.raw('GET', `/api/v2/collectors/${type}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ data: { latest: '', versions: [] } })
    }
    const uploader = (await userWithRole('Upload-Only')).client
    expect((await uploader.raw('GET', '/api/v2/collectors/sharphound')).status).toBe(200)
  })

  it('a download or checksum by version or latest is a 404 envelope naming why and where', async () => {
    for (const path of ['/api/v2/collectors/sharphound/v2.5.7', '/api/v2/collectors/azurehound/latest', '/api/v2/collectors/sharphound/latest/checksum', '/api/v2/collectors/azurehound/v2.1.0/checksum']) {
      const res = await admin.raw('GET', path)
      await expectEnvelope(res, 404, /^EdgeHound distributes no collector binaries, so (sharphound|azurehound) (v\d+\.\d+\.\d+|latest) is not available here: download it from its publisher \(https:\/\/github\.com\/SpecterOps\/(SharpHound|AzureHound)\/releases\)$/)
    }
  })

  it('refusals: an unknown collector type is BloodHound\u2019s 400; a malformed tag 404; no credentials is 401', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/collectors/bloodhound'), 400, 'Invalid collector type: bloodhound')
    await expectEnvelope(await admin.raw('GET', '/api/v2/collectors/nope/v1.0.0'), 400, 'Invalid collector type: nope')
    await expectEnvelope(await admin.raw('GET', '/api/v2/collectors/nope/latest/checksum'), 400, 'Invalid collector type: nope')
    await expectEnvelope(await admin.raw('GET', '/api/v2/collectors/sharphound/1.0'), 404, 'release_tag must be a version (vX.Y.Z) or latest')
    await expectEnvelope(await admin.raw('GET', '/api/v2/collectors/sharphound/v1.0.0.zip/checksum'), 404, 'release_tag must be a version (vX.Y.Z) or latest')
    await expectEnvelope(await client().raw('GET', '/api/v2/collectors/sharphound'), 401)
  })
})
