/**
 * Typed client wrappers for the graph extension endpoints (issue 4). Each takes an EdgeHoundClient, so
 * the same signing, error handling and fetch injection apply; errors throw EdgeHoundError with the envelope.
 */
import type { EdgeHoundClient } from './index'
import type { ExtensionDocument, ExtensionDocumentInput } from '../extensions/schema'

export type { ExtensionDocument, ExtensionDocumentInput }

export interface ExtensionSummaryJson {
  id: number
  name: string
  display_name: string
  namespace: string
  version: string
  is_builtin: boolean
}

export interface UpsertExtensionJson extends ExtensionSummaryJson {
  created: boolean
  node_kinds: number
  relationship_kinds: number
  environments: number
  relationship_findings: number
}

/** PUT /api/v2/extensions. `doc` is sent as JSON; pass a string or bytes to send something else verbatim. */
export function upsertExtension(c: EdgeHoundClient, doc: ExtensionDocumentInput | Record<string, unknown> | string | Uint8Array) {
  return c.call<{ data: UpsertExtensionJson }>('PUT', '/api/v2/extensions', doc, typeof doc === 'string' || doc instanceof Uint8Array ? { contentType: 'application/json' } : undefined)
}

export function listExtensions(c: EdgeHoundClient) {
  return c.call<{ data: { extensions: ExtensionSummaryJson[] } }>('GET', '/api/v2/extensions')
}

/** GET /api/v2/extensions/{id}: the document as it was last PUT. */
export function getExtension(c: EdgeHoundClient, id: number | string) {
  return c.call<{ data: ExtensionDocument }>('GET', `/api/v2/extensions/${encodeURIComponent(String(id))}`)
}

export function deleteExtension(c: EdgeHoundClient, id: number | string) {
  return c.call<{ data: { id: number; name: string; deleted: true } }>('DELETE', `/api/v2/extensions/${encodeURIComponent(String(id))}`)
}

/** Finds an installed extension's id by its schema name (the upsert key). */
export async function extensionIdByName(c: EdgeHoundClient, name: string): Promise<number | undefined> {
  const r = await listExtensions(c)
  return r.data.extensions.find((e) => e.name === name)?.id
}
