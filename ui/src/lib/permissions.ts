// What the signed-in user's roles let the console offer. One helper for every page (Administration's
// sections, Profile, Attack paths, Privilege zones, Explore's context menu), read from the server's own role
// table (src/auth/permissions.ts), so the console and the API cannot disagree about a role.
//
// Hiding a control is a courtesy, not the protection: every route checks its own permission and refuses
// anyway. Pure (no Preact), so that test/unit/ can import it.
import { permissionsOf, type Permission, type Role } from '../../../src/auth/permissions'

/** The part of a user (UserJson, self) these rules read. */
export interface RolesOf {
  roles: readonly string[]
  all_environments?: boolean
}

/** Whether `me`'s roles grant `permission`; false before the user is known. */
export function can(me: RolesOf | null | undefined, permission: Permission): boolean {
  return !!me && permissionsOf(me.roles as Role[]).has(permission)
}

/**
 * Whether `me` may create, change and delete asset-group selectors (Privilege zones, Explore's Add to / Remove
 * from Tier Zero): graph/ManageAssetGroups AND access to every environment, the API's rule
 * (src/assetgroups/access.ts: a selector is not confined to one environment, so a restricted caller gets 403).
 */
export function canEditSelectors(me: RolesOf | null | undefined): boolean {
  return can(me, 'graph/ManageAssetGroups') && me?.all_environments === true
}
