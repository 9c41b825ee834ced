/**
 * AzureHound → graph rows, relationship by relationship, for our own tenant fixture
 * (test/fixtures/azurehound/tenant.ts), against BloodHound's conversion (ein/azure.go).
 */
import { describe, expect, it } from 'vitest'
import { convertAzureItem, AZURE_CONVERTERS, IGNORED_KINDS } from '../../src/collectors/azurehound'
import { resourceWithinScope } from '../../src/collectors/azurehound/rbac'
import type { NodeRow } from '../../src/graph/opengraph'
import { AZ, ids, items, role, T } from '../fixtures/azurehound/tenant'

interface Captured {
  nodes: NodeRow[]
  edges: string[]
  edgeProps: Map<string, unknown>
  endKinds: Map<string, string>
  violations: { context: string; message: string }[]
}

function convert(list: unknown[]): Captured {
  const c: Captured = { nodes: [], edges: [], edgeProps: new Map(), endKinds: new Map(), violations: [] }
  list.forEach((item, i) =>
    convertAzureItem(item, `data[${i}]`, {
      node: (row) => c.nodes.push(row),
      edge: (s, sk, t, tk, k, p) => {
        const key = `${s} -${k}-> ${t}`
        c.edges.push(key)
        c.edgeProps.set(key, p)
        c.endKinds.set(s, sk)
        c.endKinds.set(t, tk)
      },
      violation: (context, message) => c.violations.push({ context, message }),
    }),
  )
  return c
}

const all = convert(items)
const node = (id: string) => {
  const found = all.nodes.filter((n) => n.o === id)
  expect(found.length, `node ${id}`).toBeGreaterThan(0)
  // as the store merges rows of one object id: later kinds first, properties patched
  return found.reduce((a, b) => ({ ...b, p: { ...a.p, ...b.p } }))
}
const R = (s: string, k: string, t: string) => `${AZ(s)} -${k}-> ${AZ(t)}`
const TEN = AZ(T)

describe('AzureHound conversion', () => {
  it('accepts the whole fixture without a violation', () => {
    expect(all.violations).toEqual([])
  })

  it('writes every relationship BloodHound writes, and no other', () => {
    const expected = [
      // tenant containment
      R(T, 'AZContains', ids.alice), R(T, 'AZContains', ids.bob), R(T, 'AZContains', ids.admins), R(T, 'AZContains', ids.sp),
      R(T, 'AZContains', ids.app), R(T, 'AZContains', ids.device), `${TEN} -AZContains-> ${role(ids.ga)}`, `${TEN} -AZContains-> ${role(ids.appAdmin)}`,
      R(T, 'AZContains', ids.sub), R(T, 'AZContains', ids.mg),
      // applications and service principals
      R(ids.app, 'AZRunsAs', ids.sp), R(ids.fic, 'AZAuthenticatesTo', ids.app),
      // membership and ownership (the orgContact member is skipped)
      R(ids.alice, 'AZMemberOf', ids.admins), R(ids.sp, 'AZMemberOf', ids.admins), R(ids.bob, 'AZOwns', ids.admins),
      R(ids.bob, 'AZOwns', ids.app), R(ids.admins, 'AZOwns', ids.sp), R(ids.alice, 'AZOwns', ids.device),
      // directory roles: tenant-wide assignments are AZHasRole; a scoped application administrator is AZAppAdmin
      `${AZ(ids.admins)} -AZHasRole-> ${role(ids.ga)}`, `${AZ(ids.alice)} -AZHasRole-> ${role(ids.appAdmin)}`, R(ids.bob, 'AZAppAdmin', ids.appObject),
      `${AZ(ids.bob)} -AZRoleEligible-> ${role(ids.pra)}`,
      `${AZ(ids.admins)} -AZRoleApprover-> ${role(ids.ga)}`, `${role(ids.pra)} -AZRoleApprover-> ${role(ids.exchangeAdmin)}`,
      // Microsoft Graph app role (RoleManagement.ReadWrite.Directory) granted to a service principal
      R(ids.sp, 'AZMGRoleManagement_ReadWrite_Directory', ids.graphSp),
      // resource manager hierarchy
      R(ids.mg, 'AZContains', ids.sub), R(ids.sub, 'AZContains', ids.rg), R(ids.rg, 'AZContains', ids.kv), R(ids.rg, 'AZContains', ids.vm),
      R(ids.rg, 'AZContains', ids.vmss), R(ids.rg, 'AZContains', ids.func), R(ids.rg, 'AZContains', ids.logic), R(ids.rg, 'AZContains', ids.web),
      R(ids.rg, 'AZContains', ids.automation), R(ids.rg, 'AZContains', ids.acr), R(ids.rg, 'AZContains', ids.aks),
      R(ids.aks, 'AZNodeResourceGroup', `/subscriptions/${ids.subGuid}/resourcegroups/MC_rg-prod_aks-1`),
      // managed identities (the logic app's user-assigned identity has no client id: skipped)
      R(ids.vm, 'AZManagedIdentity', ids.vmSp), R(ids.vm, 'AZManagedIdentity', ids.uaiSp), R(ids.func, 'AZManagedIdentity', ids.vmSp),
      // key vault access policy: Get on secrets and certificates, only List on keys
      R(ids.sp, 'AZGetCertificates', ids.kv), R(ids.sp, 'AZGetSecrets', ids.kv),
      // RBAC lists: only assignments scoped to the object itself (bob's owner assignment at the MG is not the subscription's)
      R(ids.admins, 'AZOwner', ids.sub), R(ids.bob, 'AZUserAccessAdministrator', ids.sub), R(ids.admins, 'AZOwner', ids.mg),
      R(ids.alice, 'AZUserAccessAdministrator', ids.mg), R(ids.alice, 'AZOwner', ids.rg), R(ids.bob, 'AZUserAccessAdministrator', ids.rg),
      R(ids.bob, 'AZOwner', ids.kv), R(ids.alice, 'AZUserAccessAdministrator', ids.kv), R(ids.admins, 'AZContributor', ids.kv),
      R(ids.sp, 'AZKeyVaultContributor', ids.kv),
      // VM roles: ResourceWithinScope is case-insensitive equality in practice (bob's resource-group scope does not count)
      R(ids.alice, 'AZVMAdminLogin', ids.vm), R(ids.bob, 'AZAvereContributor', ids.vm), R(ids.sp, 'AZContributor', ids.vm),
      R(ids.admins, 'AZVMContributor', ids.vm), R(ids.bob, 'AZOwner', ids.vm), R(ids.alice, 'AZUserAccessAdministrator', ids.vm),
      // resource role assignments: the role decides the kind; Reader and a resource-group scope do not count
      R(ids.alice, 'AZContributor', ids.web), R(ids.bob, 'AZLogicAppContributor', ids.logic), R(ids.bob, 'AZUserAccessAdministrator', ids.vmss),
      R(ids.alice, 'AZOwner', ids.automation), R(ids.alice, 'AZContributor', ids.acr), R(ids.bob, 'AZAKSContributor', ids.aks),
    ]
    expect([...all.edges].sort()).toEqual([...expected].sort())
  })

  it('gives relationship properties where BloodHound has them (AZHasRole scope)', () => {
    expect(all.edgeProps.get(`${AZ(ids.admins)} -AZHasRole-> ${role(ids.ga)}`)).toEqual({ scope: TEN })
    expect(all.edgeProps.get(R(ids.alice, 'AZMemberOf', ids.admins))).toEqual({})
  })

  it('names each end kind so that missing objects become placeholders of the right kind', () => {
    expect(all.endKinds.get(AZ(ids.alice))).toBeDefined()
    expect(all.endKinds.get(role(ids.exchangeAdmin))).toBe('AZRole')
    expect(all.endKinds.get(AZ(ids.graphSp))).toBe('AZServicePrincipal')
    expect(all.endKinds.get(AZ(ids.appObject))).toBe('AZBase') // the scope of a scoped role: any object
  })

  it('writes nodes with BloodHound kinds, upper-cased ids and names, tenantid', () => {
    const alice = node(AZ(ids.alice))
    expect(alice).toMatchObject({ k: 'AZUser', ks: ['AZUser', 'AZBase'], ek: null })
    expect(alice.p).toEqual({
      name: 'ALICE@CONTOSO.EXAMPLE', enabled: true, whencreated: '2024-02-03T04:05:06Z', displayname: 'Alice', title: 'Cloud admin',
      email: 'alice@contoso.example', onpremid: ids.onPremAlice, onpremsyncenabled: true, userprincipalname: 'alice@contoso.example',
      usertype: 'Member', tenantid: TEN,
    }) // pwdlastset with fractional seconds does not parse in BloodHound either: left out
    expect(node(AZ(ids.onPremAlice))).toMatchObject({ k: 'User', ks: ['User', 'Base'], p: {} })
    expect(node(AZ(ids.onPremGroup))).toMatchObject({ k: 'Group', ks: ['Group', 'Base'] })
    expect(node(TEN)).toMatchObject({ k: 'AZTenant', ek: 'AZTenant', p: { name: 'CONTOSO', displayname: 'Contoso', tenantid: TEN, collected: true } })
    expect(node(AZ(ids.admins)).p).toMatchObject({ name: 'CLOUD ADMINS@CONTOSO', isassignabletorole: true, securityidentifier: 'S-1-12-1-1', tenantid: TEN })
    expect(node(AZ(ids.sp)).p).toMatchObject({ name: 'DEPLOY-BOT@CONTOSO', enabled: true, appdisplayname: 'Deploy Bot', serviceprincipaltype: 'Application', tenantid: TEN })
    const app = node(AZ(ids.app))
    expect(app.k).toBe('AZApp')
    expect(app.p).toMatchObject({ name: 'DEPLOY BOT@CONTOSO.EXAMPLE', appid: ids.app, publisherdomain: 'contoso.example', tenantid: TEN })
    expect(app.p.whencreated).toBeUndefined()
    expect(node(AZ(ids.device)).p).toMatchObject({ name: 'LAPTOP-1@CONTOSO', trustype: 'AzureAd', operatingsystem: 'Windows', tenantid: TEN })
    expect(node(role(ids.ga))).toMatchObject({ k: 'AZRole', p: { name: 'GLOBAL ADMINISTRATOR@CONTOSO', templateid: ids.ga, isbuiltin: true, enabled: true, tenantid: TEN, enduserassignmentrequiresapproval: true, enduserassignmentgroupapprovers: [AZ(ids.admins)], enduserassignmentrequiresmfa: true } })
    expect(node(AZ(ids.fic)).p).toEqual({ name: 'GH-MAIN', audiences: ['api://AzureADTokenExchange'], description: '', issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:contoso/infra:ref:refs/heads/main' })
    expect(node(AZ(ids.sub)).p).toEqual({ name: 'PRODUCTION', displayname: 'Production', tenantid: TEN })
    expect(node(AZ(ids.mg)).p).toEqual({ name: 'CONTOSO ROOT@CONTOSO', tenantid: TEN })
    expect(node(AZ(ids.kv)).p).toEqual({ name: 'KV-PROD', enablerbacauthorization: false, tenantid: TEN })
    expect(node(AZ(ids.vm)).p).toEqual({ name: 'VM-WEB', operatingsystem: 'Linux', tenantid: TEN })
    expect(node(AZ(ids.aks)).p).toEqual({ name: 'AKS-1', tenantid: TEN, noderesourcegroupid: AZ(`/subscriptions/${ids.subGuid}/resourcegroups/MC_rg-prod_aks-1`) })
    expect(node(AZ(ids.graphSp)).p).toEqual({ displayname: 'MICROSOFT GRAPH', tenantid: TEN })
    // every node of the tenant names it (environment access, available-domains)
    for (const n of all.nodes) if (n.k.startsWith('AZ') && n.k !== 'AZFederatedIdentityCredential') expect(n.p.tenantid, n.o).toBe(TEN)
  })

  it('ignores the kinds AzureHound writes and BloodHound does not convert', () => {
    expect(IGNORED_KINDS.has('AZStorageAccount')).toBe(true)
    for (const k of IGNORED_KINDS) expect(AZURE_CONVERTERS[k]).toBeUndefined()
    expect(convert([{ kind: 'AZStorageContainer', data: { id: 'x' } }])).toMatchObject({ nodes: [], edges: [], violations: [] })
  })

  it('reproduces ResourceWithinScope as BloodHound has it', () => {
    expect(resourceWithinScope('/subscriptions/s/resourceGroups/rg/providers/x/vm', '/SUBSCRIPTIONS/S/RESOURCEGROUPS/RG/PROVIDERS/X/VM')).toBe(true)
    expect(resourceWithinScope('/subscriptions/s/resourceGroups/rg/providers/x/vm', '/subscriptions/s/resourceGroups/rg')).toBe(false)
    expect(resourceWithinScope('/wd/resourceGroups/rg1/vm', '/wd/resourceGroups/rg1')).toBe(true)
  })
})

describe('AzureHound bad input: violations with JSON paths', () => {
  const cases: [unknown, string, string][] = [
    ['AZUser', 'data[0]', 'must be an object'],
    [{ data: {} }, 'data[0].kind', 'kind is required'],
    [{ kind: 'AZUsers', data: {} }, 'data[0].kind', 'unknown AzureHound kind "AZUsers"'],
    [{ kind: 'AZUser', data: [] }, 'data[0].data', 'data must be an object'],
    [{ kind: 'AZUser', data: { tenantId: T } }, 'data[0].data.id', 'id is required'],
    [{ kind: 'AZUser', data: { id: 'u', accountEnabled: 'yes' } }, 'data[0].data.accountEnabled', 'accountEnabled must be a boolean, not a string'],
    [{ kind: 'AZGroupMember', data: { groupId: 'g', members: [{ member: 'u' }] } }, 'data[0].data.members[0].member', 'member must be an object'],
    [{ kind: 'AZGroupMember', data: { groupId: 'g', members: {} } }, 'data[0].data.members', 'members must be an array'],
    [{ kind: 'AZKeyVaultAccessPolicy', data: { keyVaultId: 'kv', permissions: { secrets: 'Get' } } }, 'data[0].data.permissions.secrets', 'secrets must be an array of strings'],
    [{ kind: 'AZRoleAssignment', data: { tenantId: T, roleAssignments: [7] } }, 'data[0].data.roleAssignments[0]', 'must be an object'],
  ]
  for (const [item, context, message] of cases)
    it(`${context}: ${message}`, () => {
      const c = convert([item])
      expect(c.violations.length).toBeGreaterThan(0)
      expect(c.violations[0].context).toBe(context)
      expect(c.violations[0].message).toContain(message)
    })
})
