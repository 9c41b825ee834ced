// The signed-in user, for pages that offer a change only to users allowed to make it (the API decides either
// way; this only hides controls that would be refused).
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { UserJson } from '../../../src/client/index'
import { permissionsOf, type Permission, type Role } from '../../../src/auth/permissions'

export const Me = createContext<UserJson | null>(null)

export function useMe(): UserJson | null {
  return useContext(Me)
}

/** Whether `me`'s roles grant `permission` (the server's own role table, src/auth/permissions.ts). */
export function can(me: UserJson | null, permission: Permission): boolean {
  return !!me && permissionsOf(me.roles as Role[]).has(permission)
}
