/**
 * What a caller restricted to some environments sees of a finding whose other end lies in an environment it
 * may not see (a cross-environment edge: the most common kind of real finding). Pure; the rule is documented
 * in docs/permissions.md ("Findings across environments").
 *
 * The rule: the finding row is KEPT, and its hidden end is made OPAQUE — an empty object id, kind, name and
 * environment, properties `{objectid: "", name: ""}` — and, since the edge's properties may have been written
 * by the hidden environment's own collection, the edge shows nothing either (`RelProps` `{}`, `IsInherited`
 * false, `ComboGraphRelationID` not valid). `PrincipalHash` is computed from the finding's id instead of the
 * hidden object id (an unkeyed hash of a guessable id would be an existence oracle).
 *
 * Why keep the row rather than leave it out:
 *  - the finding is about the caller's environment: its target is a Tier Zero object there and its metrics
 *    count that environment's principals. A reader responsible for CORP must learn that CORP's Tier Zero is
 *    controlled from outside, even if not from where;
 *  - every count stays the same for every caller: the details `count`, available-types, the sparkline's
 *    `FindingCount` (one stored number per run, not per caller) and available-domains' `impactValue` all
 *    describe the rows that are served. Leaving rows out would make the stored counts disagree with the rows
 *    served, and the disagreement itself would tell the caller that hidden sources exist;
 *  - every field keeps its type (strings, objects with `objectid` and `name`), so no connector crashes.
 *
 * Which end is hidden. An end is judged by the environment of its node in the live graph (the same join
 * that shows its name and properties):
 *  - an end whose node is in an environment the caller may see is visible;
 *  - an end whose node is in another environment, or in none, is hidden;
 *  - an end whose node is no longer in the graph: the ANCHOR end (a relationship finding's target, a list
 *    finding's principal — the end whose environment made the finding's environment, which the caller may
 *    see) is visible; the other end (a relationship finding's source) is hidden, since nothing tells where
 *    it was.
 * A caller with access to every environment sees every end.
 *
 * The SQL side (src/findings/findings.store.ts, `servedEndSql`) applies the same rule to the principal
 * filters and sort orders, so that `FromPrincipal=eq:<hidden id>` matches nothing — the same answer as for
 * an id that does not exist — and sorting by principal orders by what is served, not by the hidden id.
 */
import { canSeeEnvironment, type EnvironmentAccess } from '../auth/permissions'

export interface EndFacts {
  /** the end's node is in the graph */
  exists: boolean
  /** the node's environment (null: none) */
  environmentId: string | null
}

export function endVisible(access: EnvironmentAccess, end: EndFacts, anchor: boolean): boolean {
  if (access.all) return true
  if (!end.exists) return anchor
  return canSeeEnvironment(access, end.environmentId)
}

/** The opaque stand-in for a hidden end's object id, kind, name and environment. */
export const HIDDEN_END = ''
