/**
 * Azure Resource Manager objects: subscriptions, management groups (and their descendants), resource
 * groups, key vaults (and their access policies), virtual machines and scale sets, managed (AKS)
 * clusters, container registries, web, function and logic apps, automation accounts. Each becomes an AZ
 * node (`name` upper-cased, `tenantid`), contained by its resource group (subscription, tenant), with
 * `AZManagedIdentity` to the service principals of its managed identities (ein/azure.go).
 */
import { azNode, managedIdentities, nameAt, rel, up, type AzureConverter } from './common'

export const convertSubscription: AzureConverter = (d, out) => {
  const id = d.id('id')
  const tenant = d.str('tenantId')
  if (!id) return
  out.node(azNode('AZSubscription', id, { name: up(d.str('displayName')), displayname: d.str('displayName'), tenantid: up(tenant) }))
  rel(out, tenant, 'AZTenant', id, 'AZSubscription', 'AZContains')
}

export const convertManagementGroup: AzureConverter = (d, out) => {
  const id = d.id('id')
  const tenant = d.str('tenantId')
  if (!id) return
  out.node(azNode('AZManagementGroup', id, { name: nameAt(d.obj_('properties').str('displayName'), d.str('tenantName')), tenantid: up(tenant) }))
  rel(out, tenant, 'AZTenant', id, 'AZManagementGroup', 'AZContains')
}

/** A management group's child (a management group or a subscription): parent `AZContains` child. */
export const convertManagementGroupDescendant: AzureConverter = (d, out) => {
  const parent = d.obj_('properties').obj_('parent').str('id')
  rel(out, parent, 'AZManagementGroup', d.id('id'), 'AZBase', 'AZContains')
}

export const convertResourceGroup: AzureConverter = (d, out) => {
  const id = d.id('id')
  if (!id) return
  out.node(azNode('AZResourceGroup', id, { name: up(d.str('name')), tenantid: up(d.str('tenantId')) }))
  rel(out, d.str('subscriptionId'), 'AZSubscription', id, 'AZResourceGroup', 'AZContains')
}

export const convertKeyVault: AzureConverter = (d, out) => {
  const id = d.id('id')
  if (!id) return
  out.node(
    azNode('AZKeyVault', id, {
      name: up(d.str('name')),
      enablerbacauthorization: d.obj_('properties').bool('enableRbacAuthorization'),
      tenantid: up(d.str('tenantId')),
    }),
  )
  // key vaults name their resource group `resourceGroup` (the others `resourceGroupId`)
  rel(out, d.str('resourceGroup'), 'AZResourceGroup', id, 'AZKeyVault', 'AZContains')
}

/** An access policy entry: `Get` on certificates, keys or secrets → AZGetCertificates / AZGetKeys / AZGetSecrets. */
export const convertKeyVaultAccessPolicy: AzureConverter = (d, out) => {
  const vault = d.id('keyVaultId')
  const principal = d.str('objectId')
  const perms = d.obj_('permissions')
  for (const [list, kind] of [['certificates', 'AZGetCertificates'], ['keys', 'AZGetKeys'], ['secrets', 'AZGetSecrets']] as const)
    if (perms.strings(list).includes('Get')) rel(out, principal, 'AZBase', vault, 'AZKeyVault', kind)
}

export const convertVirtualMachine: AzureConverter = (d, out) => {
  const id = d.id('id')
  if (!id) return
  out.node(
    azNode('AZVM', id, {
      name: up(d.str('name')),
      operatingsystem: d.obj_('properties').obj_('storageProfile').obj_('osDisk').str('osType'),
      tenantid: up(d.str('tenantId')),
    }),
  )
  rel(out, d.str('resourceGroupId'), 'AZResourceGroup', id, 'AZVM', 'AZContains')
  managedIdentities(out, d, id, 'AZVM')
}

/** Resources that are a name, a resource group and managed identities. */
function resource(kind: string): AzureConverter {
  return (d, out) => {
    const id = d.id('id')
    if (!id) return
    out.node(azNode(kind, id, { name: up(d.str('name')), tenantid: up(d.str('tenantId')) }))
    rel(out, d.str('resourceGroupId'), 'AZResourceGroup', id, kind, 'AZContains')
    managedIdentities(out, d, id, kind)
  }
}

export const convertVMScaleSet = resource('AZVMScaleSet')
export const convertFunctionApp = resource('AZFunctionApp')
export const convertLogicApp = resource('AZLogicApp')
export const convertWebApp = resource('AZWebApp')
export const convertAutomationAccount = resource('AZAutomationAccount')
export const convertContainerRegistry = resource('AZContainerRegistry')

/**
 * An AKS cluster and its node resource group (`/subscriptions/<subscription>/resourcegroups/<name>`,
 * where the cluster's nodes live): `AZNodeResourceGroup` from the cluster to it. BloodHound gives the
 * cluster no managed identity relationships.
 */
export const convertManagedCluster: AzureConverter = (d, out) => {
  const id = d.id('id')
  if (!id) return
  const nodeRg = up(`/subscriptions/${d.str('subscriptionId')}/resourcegroups/${d.obj_('properties').str('nodeResourceGroup')}`)
  out.node(azNode('AZManagedCluster', id, { name: up(d.str('name')), tenantid: up(d.str('tenantId')), noderesourcegroupid: nodeRg }))
  rel(out, d.str('resourceGroupId'), 'AZResourceGroup', id, 'AZManagedCluster', 'AZContains')
  rel(out, id, 'AZManagedCluster', nodeRg, 'AZResourceGroup', 'AZNodeResourceGroup')
}
