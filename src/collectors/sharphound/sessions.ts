/** SharpHound v5 `sessions` files → computer `HasSession` user, with the logon type (BloodHound's ConvertSessionObject). */
import type { Emitter } from '../payload'
import { get, isObject, rel } from './common'

export function convertSession(item: unknown, path: string, out: Emitter): void {
  if (!isObject(item)) return out.violation(path, 'a session must be an object {ComputerSID, UserSID, LogonType}')
  const computer = get(item, 'ComputerSID')
  const user = get(item, 'UserSID')
  const logon = get(item, 'LogonType')
  if (typeof computer !== 'string' || computer === '') return out.violation(`${path}.ComputerSID`, 'ComputerSID is required and must be a non-empty string')
  if (typeof user !== 'string' || user === '') return out.violation(`${path}.UserSID`, 'UserSID is required and must be a non-empty string')
  if (logon !== undefined && logon !== null && typeof logon !== 'number') return out.violation(`${path}.LogonType`, 'LogonType must be a number')
  out.edge(computer, 'Computer', user, 'User', 'HasSession', rel({ logontype: typeof logon === 'number' ? logon : 0 }))
}
