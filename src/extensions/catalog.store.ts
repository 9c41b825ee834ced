import type { KindCatalog } from './catalog'

/** Placeholder until the extensions store lands: returns an empty catalogue. */
export async function loadKindCatalog(_db: D1Database): Promise<KindCatalog> {
  return { nodeKinds: new Set(), relationshipKinds: new Map(), environments: [], relationshipFindings: [], version: '0' }
}
