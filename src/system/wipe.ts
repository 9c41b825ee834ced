/**
 * clear-database's request body and its plan (pure; test/integration/clear-database.test.ts covers both
 * through the route). Field names, the refusals and their messages are BloodHound's (HandleDatabaseWipe,
 * BuildDeleteRequest); EdgeHound adds bounds and refuses unknown fields (a misspelt option must not pass for
 * "nothing selected" or, worse, be ignored beside a selected one).
 */
import { z } from 'zod'
import { ApiError } from '../http/errors'
import type { WipeRequest } from './wipe.store'

const KIND = /^[A-Za-z0-9_]{1,128}$/
/** BloodHound decodes absent and null slices alike */
const list = <T extends z.ZodType>(item: T, max: number, what: string) =>
  z
    .array(item)
    .max(max, `at most ${max} ${what}`)
    .nullish()
    .transform((v) => v ?? [])

export const WipeBody = z
  .object({
    deleteCollectedGraphData: z.boolean().optional().default(false),
    deleteSourceKinds: list(z.number().int('a source kind id is an integer').min(0, 'a source kind id is 0 or more'), 100, 'source kinds'),
    deleteRelationships: list(z.string().regex(KIND, 'a relationship kind may contain only letters, digits and underscores (1 to 128)'), 100, 'relationship kinds'),
    deleteFileIngestHistory: z.boolean().optional().default(false),
    deleteDataQualityHistory: z.boolean().optional().default(false),
    deleteAssetGroupSelectors: list(z.number().int('an asset group id is an integer').min(1, 'an asset group id is 1 or more'), 100, 'asset groups'),
  })
  .strict()

export type WipeBodyT = z.infer<typeof WipeBody>

/** The request's plan, or BloodHound's 400 for an empty, mixed or unknown-source-kind request. */
/** `sourceKinds`: GET /api/v2/graphs/source-kinds' list without Sourceless (src/graph/kinds.ts sourceKindList). */
export function planWipe(b: WipeBodyT, sourceKinds: readonly { id: number; name: string }[]): Omit<WipeRequest, 'requestedBy' | 'now'> {
  const empty =
    !b.deleteCollectedGraphData &&
    !b.deleteDataQualityHistory &&
    !b.deleteFileIngestHistory &&
    b.deleteRelationships.length === 0 &&
    b.deleteAssetGroupSelectors.length === 0 &&
    b.deleteSourceKinds.length === 0
  if (empty) throw new ApiError(400, 'please select something to delete', 'body')
  if (b.deleteCollectedGraphData && b.deleteSourceKinds.length > 0)
    throw new ApiError(400, 'request may only specify either deleteCollectedGraphData or deleteSourceKinds, not both', 'deleteSourceKinds')
  const names: string[] = []
  for (const id of new Set(b.deleteSourceKinds)) {
    if (id === 0) continue
    const k = sourceKinds.find((s) => s.id === id)
    if (!k) throw new ApiError(400, `failure building delete request: requested source kind id ${id} not found`, 'deleteSourceKinds')
    names.push(k.name)
  }
  return {
    deleteAll: b.deleteCollectedGraphData,
    deleteSourceless: b.deleteSourceKinds.includes(0),
    sourceKinds: names,
    knownSourceKinds: sourceKinds.map((k) => k.name),
    relationships: [...new Set(b.deleteRelationships)],
    selectorGroups: [...new Set(b.deleteAssetGroupSelectors)],
    fileIngestHistory: b.deleteFileIngestHistory,
    dataQualityHistory: b.deleteDataQualityHistory,
  }
}
