/**
 * available-domains' answer, with an isolate cache: exact when validated, otherwise at most
 * AVAILABLE_DOMAINS_FRESH_MS old for requests without a bookmark.
 *
 * The list (every environment node, its collection time, its type name and its impactValue) changes only
 * when an upload commits, a job ends, an analysis run completes or the kind catalogue changes, while
 * connectors poll it all the time. Each request therefore reads one small stamp of those writers
 * (graph.store.ts `environmentsStampStatement`: a few index lookups, no rows of the graph) and answers
 * from the isolate's copy when the stamp is the one the copy was read with; otherwise it reads the list,
 * its catalogue version, the impact values and the stamp again in one batch (one transaction, so the
 * stamp names exactly those rows) and keeps them.
 *
 * - Exact when validated: the stamp is read in the request's own D1 session, so the answer is the one a
 *   fresh read in that session would give (a replica that lags simply has an older stamp and misses).
 * - Fresh without the stamp (`AVAILABLE_DOMAINS_FRESH_MS`, default 1000; 0 = the stamp on every request):
 *   the copy answers without any D1 statement when it was validated less than that long ago, the request
 *   sent no `X-D1-Bookmark` (a client that sends one asked for read-your-writes: it is always validated in
 *   its session) and this isolate has not written since it was validated (`noteLocalWrite`: every mutating
 *   request, the scheduled job sweep and an analysis commit run here call it, at their start and at their
 *   end, so a validation that overlapped a write never counts as fresh). Why that is within the documented
 *   consistency: a read without a bookmark may be served by a lagging D1 replica anyway, so a staleness of
 *   at most `AVAILABLE_DOMAINS_FRESH_MS` for such callers (writes by other isolates, the analyzer object's
 *   commits) is of the same kind; a caller's own writes through this isolate are seen at once.
 * - The copy holds every environment; the caller's environment access is applied to it per request
 *   (`visibleTo`), from the principal of that request, so a change of access never meets a cached
 *   filter, and one caller's view never reaches another.
 * - One copy per database binding (WeakMap on the primary binding), so two databases in one isolate
 *   (the test pool) never share one.
 */
import { canSeeEnvironment, type EnvironmentAccess } from '../auth/permissions'
import { CATALOG_VERSION_SQL, catalogVersionOf, catalogVersionStatement, kindCatalogAt } from '../extensions/catalog'
import { IMPACT_STAMP_SQL, impactValuesOf, impactValuesStatement } from '../findings/impact'
import { environmentsOf, environmentsStampOf, environmentsStampStatement, environmentsStatement } from './graph.store'
import { graphKinds } from './kinds'

export interface AvailableEnvironment {
  id: string
  name: string
  type: string
  collected: boolean
  collected_at: string | null
  impactValue: number
}

interface Copy {
  stamp: string
  items: readonly AvailableEnvironment[]
  /** Date.now() when the stamp was read (the validation began), and `localWrites` then */
  validatedAt: number
  writes: number
}

const copies = new WeakMap<object, Copy>()

/** Writes this isolate has begun or ended (of anything; most write nothing the stamp covers, which costs one stamp). */
let localWrites = 0

/** This isolate writes (or has just written) D1: no copy validated before now answers without its stamp. */
export function noteLocalWrite(): void {
  localWrites++
}

export interface Freshness {
  /** AVAILABLE_DOMAINS_FRESH_MS; 0: validate on every request */
  freshMs: number
  /** the request sent X-D1-Bookmark: read-your-writes asked for, always validate */
  bookmarked: boolean
  now?: number
}

/**
 * Every environment, by name then id (the caller filters by access with `visibleTo`). `db` is the
 * request's binding (its D1 session); `owner` the binding the copy belongs to (the primary one).
 */
export async function availableEnvironments(
  db: D1Database,
  owner: object,
  fresh: Freshness = { freshMs: 0, bookmarked: false },
): Promise<readonly AvailableEnvironment[]> {
  const stampStatement = () => environmentsStampStatement(db, CATALOG_VERSION_SQL, IMPACT_STAMP_SQL)
  const copy = copies.get(owner)
  // Taken before the stamp is read: a write that begins or ends while this validation runs moves
  // `localWrites` past it, so the copy is not fresh afterwards.
  const startedAt = fresh.now ?? Date.now()
  const writes = localWrites
  if (copy) {
    const age = startedAt - copy.validatedAt
    if (fresh.freshMs > 0 && !fresh.bookmarked && copy.writes === localWrites && age >= 0 && age < fresh.freshMs) return copy.items
    const stamp = environmentsStampOf(await stampStatement().all())
    if (stamp === copy.stamp) {
      copies.set(owner, { ...copy, validatedAt: startedAt, writes })
      return copy.items
    }
  }
  const [stampResult, version, envs, impact] = await db.batch([
    stampStatement(),
    catalogVersionStatement(db),
    environmentsStatement(db, null),
    impactValuesStatement(db),
  ])
  const kinds = graphKinds(await kindCatalogAt(db, catalogVersionOf(version)))
  const impactOf = impactValuesOf(impact)
  const items = environmentsOf(envs).map((e) =>
    Object.freeze({
      id: e.objectid,
      name: e.name ?? e.objectid,
      type: kinds.environmentTypes.get(e.environment_kind) ?? e.environment_kind,
      collected: e.collected_at !== null,
      collected_at: e.collected_at,
      impactValue: Math.trunc(impactOf.get(e.objectid) ?? 0),
    }),
  )
  Object.freeze(items)
  copies.set(owner, { stamp: environmentsStampOf(stampResult), items, validatedAt: startedAt, writes })
  return items
}

/** The environments `access` may see, in the same order (what the SQL filter `accessParam` did before). */
export function visibleTo(items: readonly AvailableEnvironment[], access: EnvironmentAccess): readonly AvailableEnvironment[] {
  return access.all ? items : items.filter((e) => canSeeEnvironment(access, e.id))
}
