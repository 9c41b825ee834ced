/**
 * Typed wrapper for the Cypher endpoint (BloodHound's POST /api/v2/graphs/cypher).
 */
import type { EdgeHoundClient } from './index'
import type { CypherResult } from '../cypher/present'

export type CypherResultJson = CypherResult

/** Runs a read-only Cypher query; throws EdgeHoundError on 4xx (404 when nothing was found). */
export function cypherQuery(c: EdgeHoundClient, query: string, includeProperties = false) {
  return c.call<{ data: CypherResultJson }>('POST', '/api/v2/graphs/cypher', { query, include_properties: includeProperties })
}
