/**
 * Who may see and change asset-group selectors and tags, for BOTH asset-group APIs: the older
 * `/api/v2/asset-groups` and the newer `/api/v2/asset-group-tags` (docs/asset-groups.md, docs/permissions.md).
 *
 * The one rule: a caller restricted to some environments (`environment_access`) may read tags and the members
 * of its own environments, but it neither reads nor writes selectors and it does not create, change or delete
 * tags. Only a caller with access to every environment does (BloodHound's `RequireAllEnvironmentAccess`, 403
 * `user does not have access to this resource`). The route's permission (`graph/Read`,
 * `graph/ManageAssetGroups`) is checked before this, by the route table.
 *
 * Reasoning:
 * - A selector is not confined to one environment. A Cypher rule runs over the whole graph, and an object-id
 *   selector names an object of any environment (or one not ingested yet): its id and name are data of the
 *   hidden environments. Filtering selectors by environment would still disclose rules and would need a graph
 *   lookup per selector that the rule's own text cannot answer, so selectors are all-or-nothing.
 * - A tag's membership spans every environment, so creating, renaming or deleting it (or changing what it
 *   selects) changes what users of other environments see: a restricted administrator may not do it.
 * - Members are per object and carry their environment, so both APIs filter them by environment instead
 *   (listMembers / listTagMembers with the caller's access): that is not this module's rule.
 *
 * The older API's group object bundles the group with its selectors; for a restricted caller the group is
 * answered with `selectors: []` (what the newer API answers 403 for is left out, what it answers is kept).
 */
import { ApiError } from '../http/errors'
import type { EnvironmentAccess } from '../auth/permissions'

/** The message of BloodHound's RequireAllEnvironmentAccess refusal. */
export const ALL_ENVIRONMENTS_REQUIRED = 'user does not have access to this resource'

/** True when `access` may read selectors and write tags and selectors: access to every environment. */
export function canUseSelectors(access: EnvironmentAccess): boolean {
  return access.all === true
}

/** Throws the 403 envelope unless `access` covers every environment (see the module's reasoning). */
export function requireSelectorAccess(access: EnvironmentAccess): void {
  if (!canUseSelectors(access)) throw new ApiError(403, ALL_ENVIRONMENTS_REQUIRED, 'environment_access')
}

/** The selectors `access` may read: all of them, or none. */
export function selectorsVisibleTo<T>(access: EnvironmentAccess, selectors: readonly T[]): T[] {
  return canUseSelectors(access) ? [...selectors] : []
}
