/** SharpHound converters, pure: one element in, rows out (the rules the integration suite does not reach). */
import { describe, expect, it } from 'vitest'
import type { Emitter, NodeRow, PropertyValue } from '../../src/collectors/payload'
import { convertComputer } from '../../src/collectors/sharphound/computers'
import { convertDomain } from '../../src/collectors/sharphound/domains'
import { convertGroup } from '../../src/collectors/sharphound/groups'
import { convertUser } from '../../src/collectors/sharphound/users'
import { openGraphPayload } from '../../src/collectors/detect'

interface Out {
  nodes: NodeRow[]
  edges: { s: string; sk: string; t: string; tk: string; k: string; p: Record<string, PropertyValue> }[]
  violations: { context: string; message: string }[]
}

function run(convert: (item: unknown, path: string, out: Emitter) => void, item: unknown): Out {
  const out: Out = { nodes: [], edges: [], violations: [] }
  convert(item, 'data[0]', {
    node: (r) => out.nodes.push(r),
    edge: (s, sk, t, tk, k, p) => out.edges.push({ s, sk, t, tk, k, p }),
    violation: (context, message) => out.violations.push({ context, message }),
  })
  return out
}

const ace = (sid: string, right: string, inherited = false, type = 'Group') => ({ PrincipalSID: sid, PrincipalType: type, RightName: right, IsInherited: inherited })
const kinds = (o: Out) => o.edges.map((e) => `${e.s} ${e.k} ${e.t}`)

describe('ACEs and the owner (ParseACEData)', () => {
  it('OWNER RIGHTS granted abusable inherited rights: OwnsLimitedRights and WriteOwnerLimitedRights with the privileges', () => {
    const o = run(convertUser, {
      ObjectIdentifier: 'U',
      Properties: {},
      Aces: [ace('OWNER', 'Owns'), ace('WO', 'WriteOwner', true), ace('S-1-3-4', 'GenericWrite', true), ace('S-1-3-4', 'WriteDacl', false)],
    })
    expect(o.edges.find((e) => e.k === 'OwnsLimitedRights')).toMatchObject({ s: 'OWNER', t: 'U', p: { isacl: true, isinherited: false, privileges: ['GenericWrite', 'WriteDacl'] } })
    expect(o.edges.find((e) => e.k === 'WriteOwnerLimitedRights')).toMatchObject({ s: 'WO', p: { isinherited: true, privileges: ['GenericWrite'] } })
    expect(kinds(o)).not.toContain('OWNER OwnsRaw U')
    expect(o.nodes[0].p.ownersid).toBe('OWNER')
  })

  it('OWNER RIGHTS granted only non-inherited rights: WriteOwnerRaw, no limited edge for WriteOwner', () => {
    const o = run(convertUser, { ObjectIdentifier: 'U', Properties: {}, Aces: [ace('OWNER', 'Owns'), ace('WO', 'WriteOwner'), ace('S-1-3-4', 'GenericAll')] })
    expect(kinds(o)).toEqual(expect.arrayContaining(['OWNER OwnsLimitedRights U', 'WO WriteOwnerRaw U']))
    expect(kinds(o)).not.toContain('WO WriteOwnerLimitedRights U')
  })

  it('non-abusable OWNER RIGHTS inherited (doesanyinheritedacegrantownerrights): no raw owner edges', () => {
    const o = run(convertUser, {
      ObjectIdentifier: 'U',
      Properties: { doesanyacegrantownerrights: true, doesanyinheritedacegrantownerrights: true },
      Aces: [ace('OWNER', 'Owns'), ace('WO', 'WriteOwner')],
    })
    expect(kinds(o).filter((k) => /Owns|WriteOwner/.test(k))).toEqual([])
  })

  it('member names match case-insensitively, as Go decodes them', () => {
    const o = run(convertUser, { objectidentifier: 'U', properties: { Name: 'X' }, aces: [{ principalsid: 'G', principaltype: 'Group', rightname: 'GenericAll', isinherited: false }] })
    expect(o.violations).toEqual([])
    expect(o.nodes[0]).toMatchObject({ o: 'U', p: { name: 'X' } })
    expect(kinds(o)).toContain('G GenericAll U')
  })

  it('an unknown PrincipalType gives a Base placeholder kind; a RightName that is not an ACL kind is skipped', () => {
    const o = run(convertUser, { ObjectIdentifier: 'U', Aces: [ace('P', 'GenericAll', false, 'Printer'), ace('P', 'MemberOf')] })
    expect(o.edges).toEqual([{ s: 'P', sk: 'Base', t: 'U', tk: 'User', k: 'GenericAll', p: { isacl: true, isinherited: false, inheritancehash: '' } }])
  })
})

describe('groups and local groups', () => {
  it('members keep their ObjectType as the placeholder kind; DN= members are kept as written', () => {
    const o = run(convertGroup, { ObjectIdentifier: 'G', Members: [{ ObjectIdentifier: 'C1', ObjectType: 'Computer' }, { ObjectIdentifier: 'DN=CN=X,DC=Y', ObjectType: 'Base' }] })
    expect(o.edges.map((e) => [e.s, e.sk, e.k])).toEqual([['C1', 'Computer', 'MemberOf'], ['DN=CN=X,DC=Y', 'Base', 'MemberOf']])
  })

  it('local groups: empty ones skipped (except DIRECT ACCESS USERS), IGNOREME writes no node, not collected skipped', () => {
    const lg = (id: string, name: string, results: unknown[], collected = true) => ({ Collected: collected, Results: results, ObjectIdentifier: id, Name: name, LocalNames: [] })
    const o = run(convertComputer, {
      ObjectIdentifier: 'C',
      LocalGroups: [
        lg('C-1', 'EMPTY@C', []),
        lg('C-2', 'DIRECT ACCESS USERS@C', []),
        lg('C-3', 'IGNOREME', [{ ObjectIdentifier: 'U', ObjectType: 'User' }]),
        lg('C-544', 'ADMINISTRATORS@C', [{ ObjectIdentifier: 'U', ObjectType: 'User' }], false),
      ],
    })
    expect(o.nodes.map((n) => n.o)).toEqual(['C', 'C-2'])
    expect(kinds(o)).toEqual(['C-2 LocalToComputer C', 'C-3 LocalToComputer C', 'U MemberOfLocalGroup C-3'])
  })
})

describe('user rights (ParseUserRightData)', () => {
  const right = (privilege: string, ids: string[], collected = true) => ({ Privilege: privilege, Collected: collected, Results: ids.map((id) => ({ ObjectIdentifier: id, ObjectType: 'Group' })) })

  it('SeRemoteInteractiveLogonRight / SeBackupPrivilege / SeRestorePrivilege: holder -> computer, non-ACL, and hasura', () => {
    const o = run(convertComputer, {
      ObjectIdentifier: 'C',
      UserRights: [right('SeRemoteInteractiveLogonRight', ['RDP']), right('SeBackupPrivilege', ['BO', 'G2']), right('SeRestorePrivilege', ['BO'])],
    })
    expect(kinds(o)).toEqual(['RDP RemoteInteractiveLogonRight C', 'BO BackupPrivilege C', 'G2 BackupPrivilege C', 'BO RestorePrivilege C'])
    expect(o.edges.every((e) => e.p.isacl === false && e.sk === 'Group' && e.tk === 'Computer')).toBe(true)
    expect(o.nodes[0].p.hasura).toBe(true)
  })

  it('other privileges, uncollected or empty results: no relationship, no hasura', () => {
    const o = run(convertComputer, {
      ObjectIdentifier: 'C',
      UserRights: [right('SeDebugPrivilege', ['X']), right('constructor', ['X']), right('SeBackupPrivilege', ['X'], false), right('SeRestorePrivilege', [])],
    })
    expect(o.edges).toEqual([])
    expect(o.nodes[0].p.hasura).toBeUndefined()
  })
})

describe('domains (convertDomainData)', () => {
  it('a trusted domain is named and carries its own SID as domainsid', () => {
    const o = run(convertDomain, {
      ObjectIdentifier: 'S-1-5-21-1',
      Properties: { name: 'A.LOCAL' },
      Trusts: [{ TargetDomainSid: 'S-1-5-21-2', TargetDomainName: 'B.LOCAL', TrustDirection: 'Outbound', TrustType: 'External', IsTransitive: false, SidFilteringEnabled: true }],
    })
    expect(o.nodes.find((n) => n.o === 'S-1-5-21-2')).toMatchObject({ k: 'Domain', p: { name: 'B.LOCAL', domainsid: 'S-1-5-21-2' } })
  })

  it('GPOChanges: Backup Operators (551) is a local group of each affected computer, with the others', () => {
    const P = (id: string, t: string) => ({ ObjectIdentifier: id, ObjectType: t })
    const o = run(convertDomain, {
      ObjectIdentifier: 'S-1-5-21-1',
      GPOChanges: { AffectedComputers: [P('C', 'Computer')], BackupOperators: [P('BK', 'Group')], LocalAdmins: [P('AD', 'User')] },
    })
    expect(kinds(o)).toEqual(expect.arrayContaining(['C-551 LocalToComputer C', 'BK MemberOfLocalGroup C-551', 'C-544 LocalToComputer C', 'AD MemberOfLocalGroup C-544']))
    expect(o.nodes.map((n) => n.o)).toEqual(expect.arrayContaining(['C-551', 'C-544']))
  })
})

describe('detection', () => {
  const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v))
  const ctx = { environmentTypes: new Map([['Domain', 'active-directory']]) }
  const violations = (v: unknown) => {
    const out: string[] = []
    openGraphPayload(enc(v), ctx).validate((x) => (out.push(`${x.context}: ${x.message}`), true))
    return out
  }

  it('data before meta (SharpHound writes it so), missing version read as 5, extra top-level members ignored', () => {
    expect(violations({ data: [{ ObjectIdentifier: 'U' }], meta: { type: 'users', count: 1 }, $schema: 'x' })).toEqual([])
  })

  it('meta.count is only a warning (any disagreement, any type); meta.version must be an integer of 5 or more', () => {
    const warnings = (v: unknown) => openGraphPayload(enc(v), ctx).validate(() => true).warnings?.map((x) => `${x.context}: ${x.message}`)
    expect(violations({ data: [], meta: { type: 'users', count: 2, version: 6 } })).toEqual([])
    expect(warnings({ data: [], meta: { type: 'users', count: 2, version: 6 } })).toEqual([
      'meta.count: meta.count is 2 but data holds 0 element(s): the file may be truncated or edited; its data was ingested as it is (BloodHound does not check the count)',
    ])
    expect(warnings({ data: [{ ObjectIdentifier: 'U' }], meta: { type: 'users', count: 0 } })).toEqual([])
    expect(warnings({ data: [{ ObjectIdentifier: 'U' }], meta: { type: 'users', count: 1 } })).toEqual([])
    expect(violations({ data: [], meta: { type: 'users', count: -1 } })).toEqual([])
    expect(warnings({ data: [], meta: { type: 'users', count: -1 } })).toEqual(['meta.count: meta.count -1 is not a count (a non-negative integer); ignored, as BloodHound ignores it'])
    expect(violations({ data: [], meta: { type: 'users', version: '6' } })).toEqual(['meta.version: meta.version must be an integer'])
    expect(violations({ data: [], meta: { type: 'users', version: 3 } })[0]).toMatch(/^meta.version: SharpHound data version 3 is not supported/)
  })

  it('a UTF-8 byte order mark and pretty-printing are accepted', () => {
    const text = JSON.stringify({ data: [{ ObjectIdentifier: 'U', Properties: { name: 'Ü@X' } }], meta: { type: 'users', count: 1, version: 6 } }, null, 2)
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)])
    const p = openGraphPayload(bytes, ctx)
    expect([...p.nodeRows()].map((r) => r.p.name)).toEqual(['Ü@X'])
  })

  it('a missing meta or data is named', () => {
    expect(violations({ data: [] })).toEqual(['meta: meta is required: {"type", "version", "count", "methods"}'])
    expect(violations({ meta: { type: 'users' } })).toEqual(['data: no data tag found: data must be an array'])
  })
})
