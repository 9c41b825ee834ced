/**
 * Entra ID objects: tenants, users, groups, service principals, applications, devices, roles and
 * federated identity credentials. Each becomes an AZ node (ids and names upper-cased, `tenantid` set)
 * and the tenant's `AZContains` relationship to it, as BloodHound's ein/azure.go does. Property names
 * are BloodHound's (graphschema common/azure), e.g. `displayname`, `userprincipalname`, `trustype`.
 */
import { azNode, iso8601, nameAt, rel, up, type AzureConverter } from './common'

const contains = (tenant: string, kind: string) => (out: Parameters<AzureConverter>[1], id: string) => rel(out, tenant, 'AZTenant', id, kind, 'AZContains')

export const convertTenant: AzureConverter = (d, out) => {
  const tenant = d.id('tenantId')
  if (!tenant) return
  out.node(
    azNode('AZTenant', tenant, {
      name: up(d.str('displayName')),
      displayname: d.str('displayName'),
      tenantid: up(tenant),
      // BloodHound marks the tenant AzureHound collected (`collected` is only written when true)
      collected: d.bool('collected') ? true : undefined,
    }),
  )
}

export const convertUser: AzureConverter = (d, out) => {
  const id = d.id('id')
  const tenant = d.str('tenantId')
  const onPrem = d.str('onPremisesSecurityIdentifier')
  if (!id) return
  out.node(
    azNode('AZUser', id, {
      name: up(d.str('userPrincipalName')),
      enabled: d.bool('accountEnabled'),
      whencreated: iso8601(d.str('createdDateTime')),
      displayname: d.str('displayName'),
      title: d.str('jobTitle'),
      pwdlastset: iso8601(d.str('lastPasswordChangeDateTime')),
      email: d.str('mail'),
      onpremid: onPrem,
      onpremsyncenabled: d.bool('onPremisesSyncEnabled'),
      userprincipalname: d.str('userPrincipalName'),
      usertype: d.str('userType'),
      tenantid: up(tenant),
    }),
  )
  // the synchronised on-premises account: an AD User node (BloodHound's OnPremNodes)
  if (onPrem) out.node({ o: up(onPrem), k: 'User', ks: ['User', 'Base'], p: {}, ek: null })
  contains(tenant, 'AZUser')(out, id)
}

export const convertGroup: AzureConverter = (d, out) => {
  const id = d.id('id')
  const tenant = d.str('tenantId')
  const onPrem = d.str('onPremisesSecurityIdentifier')
  if (!id) return
  out.node(
    azNode('AZGroup', id, {
      name: nameAt(d.str('displayName'), d.str('tenantName')),
      whencreated: iso8601(d.str('createdDateTime')),
      description: d.str('description'),
      displayname: d.str('displayName'),
      isassignabletorole: d.bool('isAssignableToRole'),
      onpremid: onPrem,
      onpremsyncenabled: d.bool('onPremisesSyncEnabled'),
      securityenabled: d.bool('securityEnabled'),
      securityidentifier: d.str('securityIdentifier'),
      tenantid: up(tenant),
    }),
  )
  if (onPrem) out.node({ o: up(onPrem), k: 'Group', ks: ['Group', 'Base'], p: {}, ek: null })
  contains(tenant, 'AZGroup')(out, id)
}

export const convertServicePrincipal: AzureConverter = (d, out) => {
  const id = d.id('id')
  const tenant = d.str('tenantId')
  const appId = d.str('appId')
  const owner = d.str('appOwnerOrganizationId')
  if (!id) return
  out.node(
    azNode('AZServicePrincipal', id, {
      name: nameAt(d.str('displayName'), d.str('tenantName')),
      enabled: d.bool('accountEnabled'),
      displayname: d.str('displayName'),
      description: d.str('description'),
      appownerorganizationid: owner,
      appdescription: d.str('appDescription'),
      appdisplayname: d.str('appDisplayName'),
      loginurl: d.str('loginUrl'),
      serviceprincipaltype: d.str('servicePrincipalType'),
      tenantid: up(tenant),
    }),
  )
  // the application the principal is an instance of (possibly another tenant's: its owner organisation)
  if (appId) out.node(azNode('AZApp', appId, { displayname: d.str('appDisplayName'), tenantid: up(owner) }))
  rel(out, appId, 'AZApp', id, 'AZServicePrincipal', 'AZRunsAs')
  contains(tenant, 'AZServicePrincipal')(out, id)
}

/** An application's object id in the graph is its appId (client id), not its directory object id. */
export const convertApp: AzureConverter = (d, out) => {
  const appId = d.id('appId')
  const tenant = d.str('tenantId')
  if (!appId) return
  out.node(
    azNode('AZApp', appId, {
      name: nameAt(d.str('displayName'), d.str('publisherDomain')),
      description: d.str('description'),
      displayname: d.str('displayName'),
      whencreated: iso8601(d.str('createdDateTime')),
      appid: d.str('appId'),
      publisherdomain: d.str('publisherDomain'),
      signinaudience: d.str('signInAudience'),
      tenantid: up(tenant),
    }),
  )
  contains(tenant, 'AZApp')(out, appId)
}

export const convertDevice: AzureConverter = (d, out) => {
  const id = d.id('id')
  const tenant = d.str('tenantId')
  if (!id) return
  out.node(
    azNode('AZDevice', id, {
      name: nameAt(d.str('displayName'), d.str('tenantName')),
      displayname: d.str('displayName'),
      operatingsystem: d.str('operatingSystem'),
      deviceid: d.str('deviceId'),
      operatingsystemversion: d.str('operatingSystemVersion'),
      trustype: d.str('trustType'), // sic: BloodHound's property name
      tenantid: up(tenant),
    }),
  )
  contains(tenant, 'AZDevice')(out, id)
}

/** A directory role of one tenant: object id `<role id>@<tenant id>` (Tier Zero reads its template id). */
export const convertRole: AzureConverter = (d, out) => {
  const id = d.id('id')
  const tenant = d.str('tenantId')
  if (!id) return
  const roleId = `${up(id)}@${up(tenant)}`
  out.node(
    azNode('AZRole', roleId, {
      name: nameAt(d.str('displayName'), d.str('tenantName')),
      description: d.str('description'),
      displayname: d.str('displayName'),
      enabled: d.bool('isEnabled'),
      isbuiltin: d.bool('isBuiltIn'),
      templateid: d.str('templateId'),
      tenantid: up(tenant),
    }),
  )
  contains(tenant, 'AZRole')(out, roleId)
}

/** Federated identity credentials of an application: a node each, `AZAuthenticatesTo` the application. */
export const convertFederatedIdentityCredential: AzureConverter = (d, out) => {
  const appId = d.str('appId')
  for (const f of d.list('fics')) {
    const fic = f.obj_('fic')
    const id = fic.id('id')
    if (!id) continue
    out.node(
      azNode('AZFederatedIdentityCredential', id, {
        name: up(fic.str('name')),
        audiences: fic.strings('audiences'),
        description: fic.str('description'),
        issuer: fic.str('issuer'),
        subject: fic.str('subject'),
      }),
    )
    rel(out, id, 'AZFederatedIdentityCredential', f.str('appId') || appId, 'AZApp', 'AZAuthenticatesTo')
  }
}
