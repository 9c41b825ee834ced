import type { EnvironmentAccess, Permission, Role } from './permissions'

/** Who is calling: set on the context by the authenticate middleware, read by handlers. */
export interface Principal {
  userId: string
  principalName: string
  roles: Role[]
  permissions: Permission[]
  environmentAccess: EnvironmentAccess
  /** how the caller authenticated */
  via: 'token' | 'session'
  tokenId?: string
  sessionId?: string
}

export function hasPermission(p: Principal, perm: Permission): boolean {
  return p.permissions.includes(perm)
}
