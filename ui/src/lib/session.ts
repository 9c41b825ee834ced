// The signed-in user, for pages that offer a change only to users allowed to make it (the API decides either
// way; this only hides controls that would be refused). The rules themselves are in lib/permissions.ts.
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { UserJson } from '../../../src/client/index'

export { can, canEditSelectors } from './permissions'

export const Me = createContext<UserJson | null>(null)

export function useMe(): UserJson | null {
  return useContext(Me)
}
