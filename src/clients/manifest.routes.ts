/**
 * BloodHound's collector manifest and downloads (`GET /api/v2/collectors/{type}`, `…/{release_tag}`,
 * `…/{release_tag}/checksum`; cmd/api/src/api/v2/collectors.go), answered honestly: BloodHound serves the SharpHound
 * and AzureHound packages it ships in its container; EdgeHound ships no collector binaries (they are SpecterOps'
 * releases, not ours to redistribute), so its manifest lists no version and a download names why it is absent.
 * docs/collectors.md, "Collector downloads".
 */
import { z } from 'zod'
import { ApiError } from '../http/errors'
import { defineRoute, type RouteEntry } from '../http/route'

/** BloodHound's collector types. */
const COLLECTOR_TYPES = ['sharphound', 'azurehound'] as const
/**
 * BloodHound's release tag pattern on these routes: a tag that does not match is no route there (its router's 404).
 * Checked in the handler, after authentication, with a 404 envelope saying so (a pattern in the route's path would
 * make the path no route before authentication, and every route-table tool would need to know it).
 */
const RELEASE_TAG = /^(v[0-9]+\.[0-9]+\.[0-9]+|latest)$/

const PUBLISHERS: Record<(typeof COLLECTOR_TYPES)[number], string> = {
  sharphound: 'https://github.com/SpecterOps/SharpHound/releases',
  azurehound: 'https://github.com/SpecterOps/AzureHound/releases',
}

/** BloodHound's message for a collector type it does not know (400). */
const CollectorType = z.string().transform((v, ctx) => {
  if (!(COLLECTOR_TYPES as readonly string[]).includes(v)) {
    // the value is echoed as BloodHound does, cut to 100 characters (an answer never echoes a whole hostile input)
    ctx.addIssue({ code: 'custom', message: `Invalid collector type: ${v.length > 100 ? `${v.slice(0, 100)}…` : v}` })
    return z.NEVER
  }
  return v as (typeof COLLECTOR_TYPES)[number]
})

const Manifest = z.object({
  latest: z.string().describe('the latest version; "" (EdgeHound distributes no collector)'),
  versions: z.array(z.object({ version: z.string(), sha256sum: z.string(), deprecated: z.boolean() })).describe('always empty here'),
})

function notDistributed(type: (typeof COLLECTOR_TYPES)[number], tag: string): ApiError {
  if (!RELEASE_TAG.test(tag)) return new ApiError(404, 'release_tag must be a version (vX.Y.Z) or latest', 'release_tag')
  return new ApiError(
    404,
    `EdgeHound distributes no collector binaries, so ${type} ${tag} is not available here: download it from its publisher (${PUBLISHERS[type]})`,
    'release_tag',
  )
}

const NOT_DISTRIBUTED_DOC =
  'EdgeHound distributes no collector binaries: always 404 with the envelope naming the publisher\u2019s release page. ' +
  '`collector_type` is `sharphound` or `azurehound` (another: 400 `Invalid collector type: …`); `release_tag` is a version ' +
  '`vX.Y.Z` or `latest` (another: 404 `release_tag must be a version (vX.Y.Z) or latest`, as BloodHound\u2019s router answers 404 there).'

export const collectorManifestRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/collectors/:collector_type',
      operationId: 'GetCollectorManifest',
      summary: 'The versions of a collector this server distributes (none: EdgeHound ships no collector binaries)',
      description:
        'BloodHound\u2019s manifest `{"data": {"latest", "versions": [{version, sha256sum, deprecated}]}}`. EdgeHound distributes no ' +
        'collector, so the answer is `{"latest": "", "versions": []}`; collectors are downloaded from their publisher. ' +
        '`collector_type` is `sharphound` or `azurehound` (another: 400 `Invalid collector type: …`).',
      tags: ['Collectors'],
      auth: 'authenticated',
      params: z.object({ collector_type: CollectorType }),
      responses: { 200: { description: 'the (empty) manifest', schema: z.object({ data: Manifest }) } },
    },
    (c) => c.json({ data: { latest: '', versions: [] } }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/collectors/:collector_type/:release_tag',
      operationId: 'DownloadCollectorByVersion',
      summary: 'A collector package by version (not distributed here: 404 naming where to get it)',
      description: NOT_DISTRIBUTED_DOC,
      tags: ['Collectors'],
      auth: 'authenticated',
      params: z.object({ collector_type: CollectorType, release_tag: z.string().max(200) }),
      responses: { 200: { description: 'never: EdgeHound distributes no collector (404)', contentType: 'application/octet-stream' } },
    },
    (_c, { params }) => {
      throw notDistributed(params.collector_type, params.release_tag)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/collectors/:collector_type/:release_tag/checksum',
      operationId: 'DownloadCollectorChecksumByVersion',
      summary: 'A collector package\u2019s SHA-256 checksum by version (not distributed here: 404 naming where to get it)',
      description: NOT_DISTRIBUTED_DOC,
      tags: ['Collectors'],
      auth: 'authenticated',
      params: z.object({ collector_type: CollectorType, release_tag: z.string().max(200) }),
      responses: { 200: { description: 'never: EdgeHound distributes no collector (404)', contentType: 'text/plain' } },
    },
    (_c, { params }) => {
      throw notDistributed(params.collector_type, params.release_tag)
    },
  ),
]
