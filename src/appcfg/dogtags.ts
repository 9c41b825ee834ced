/**
 * BloodHound's "dog tags": the capabilities of the running edition, as a flat map of namespaced keys
 * (`GET /api/v2/dog-tags`). BloodHound reads them from its licence provider; clients (its UI, scripts) read
 * them to know what an edition allows. EdgeHound answers its own capabilities, fixed by its code, under
 * BloodHound's keys and value types (booleans and integers):
 *
 * - `auth.environment_targeted_access_control`: true. Every user has environment access (all environments or
 *   a list, docs/permissions.md "Environment access") and graph reads and writes honour it.
 * - `privilege_zones.tier_limit`: 1. Tier Zero is EdgeHound's one privilege zone (asset group tag type 1;
 *   creating another zone is refused, docs/asset-groups.md).
 * - `privilege_zones.multi_tier_analysis`: false. Analysis computes findings against Tier Zero only.
 * - `privilege_zones.label_limit`: EdgeHound puts no limit on labels (tag type 2); BloodHound's clients compare
 *   a count against this number, so "no limit" is answered as the largest 32-bit integer (what a tag id can
 *   hold), never as a smaller number a client would enforce.
 */
export const NO_LABEL_LIMIT = 2_147_483_647

export const DOG_TAGS = Object.freeze({
  'auth.environment_targeted_access_control': true,
  'privilege_zones.label_limit': NO_LABEL_LIMIT,
  'privilege_zones.multi_tier_analysis': false,
  'privilege_zones.tier_limit': 1,
})
