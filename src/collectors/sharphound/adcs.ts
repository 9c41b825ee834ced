/**
 * SharpHound's ADCS object types → their nodes and structural relationships (BloodHound's
 * convertCertTemplateData, convertEnterpriseCAData, convertRootCAData, convertAIACAData,
 * convertNTAuthStoreData, convertIssuancePolicy). Six small types share this file.
 * EnterpriseCAFor, IssuedSignedBy, TrustedForNTAuth and the ADCS escalation relationships are derived
 * after ingest from the properties kept here (src/collectors/adcs.ts); docs/collectors.md lists what is not.
 */
import type { Emitter } from '../payload'
import { adKind, adObject, domainSidFallback, emitAces, emitContainedBy, get, isObject, list, nodeRow, obj, principal, principals, rel, str, type Ace } from './common'

export function convertCertTemplate(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'CertTemplate', path, out)
  if (!o) return
  domainSidFallback(o, out)
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
  emitContainedBy(o, out)
}

export function convertAiaCa(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'AIACA', path, out)
  if (!o) return
  domainSidFallback(o, out)
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
  emitContainedBy(o, out)
}

export function convertRootCa(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'RootCA', path, out)
  if (!o) return
  const domainsid = domainSidFallback(o, out)
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
  if (domainsid !== '') out.edge(o.id, 'RootCA', domainsid, 'Domain', 'RootCAFor', rel())
  emitContainedBy(o, out)
}

export function convertNtAuthStore(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'NTAuthStore', path, out)
  if (!o) return
  const domainsid = domainSidFallback(o, out)
  out.node(nodeRow(o))
  if (domainsid !== '') out.edge(o.id, 'NTAuthStore', domainsid, 'Domain', 'NTAuthStoreFor', rel())
  emitAces(o, o.aces, out)
  emitContainedBy(o, out)
}

export function convertIssuancePolicy(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'IssuancePolicy', path, out)
  if (!o) return
  domainSidFallback(o, out)
  const link = get(o.item, 'GroupLink')
  if (link !== undefined && link !== null) {
    const g = principal(link, `${path}.GroupLink`, out)
    if (g && g.id !== '') {
      out.edge(o.id, 'IssuancePolicy', g.id, g.kind, 'OIDGroupLink', rel())
      o.props.grouplinkid = g.id
    }
  }
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
  emitContainedBy(o, out)
}

/** CA security entries (CARegistryData.CASecurity.Data) as ACEs. */
function caSecurity(data: unknown[], path: string, out: Emitter): Ace[] {
  const res: Ace[] = []
  data.forEach((v, i) => {
    const p = `${path}[${i}]`
    if (!isObject(v)) return out.violation(p, 'an ACE must be an object {PrincipalSID, PrincipalType, RightName, IsInherited}')
    const sid = get(v, 'PrincipalSID')
    const right = get(v, 'RightName')
    if (typeof sid !== 'string' || sid === '') return out.violation(`${p}.PrincipalSID`, 'PrincipalSID is required and must be a non-empty string')
    if (typeof right !== 'string' || right === '') return out.violation(`${p}.RightName`, 'RightName is required and must be a non-empty string')
    const pt = get(v, 'PrincipalType')
    if (pt === 'LocalGroup' || pt === 'ADLocalGroup' || right === 'Owns') return
    const hash = get(v, 'InheritanceHash')
    res.push({ sid, kind: adKind(pt), right, inherited: get(v, 'IsInherited') === true, hash: typeof hash === 'string' ? hash : '' })
  })
  return res
}

export function convertEnterpriseCa(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'EnterpriseCA', path, out)
  if (!o) return
  domainSidFallback(o, out)
  const p = o.props
  // Web enrollment endpoints (ConvertEnterpriseCAToNode).
  const http: string[] = []
  const https: string[] = []
  let anyCollected = false
  list(o.item, 'HttpEnrollmentEndpoints', path, out).forEach((e) => {
    if (!isObject(e) || get(e, 'Collected') !== true) return
    anyCollected = true
    const r = get(e, 'Result')
    if (!isObject(r)) return
    const url = typeof get(r, 'Url') === 'string' ? (get(r, 'Url') as string) : ''
    if (get(r, 'ADCSWebEnrollmentHTTP') === true) http.push(url)
    if (get(r, 'ADCSWebEnrollmentHTTPS') === true && get(r, 'ADCSWebEnrollmentEPA') !== true) https.push(url)
  })
  if (http.length > 0) p.httpenrollmentendpoints = http
  if (https.length > 0) p.httpsenrollmentendpoints = https
  if (http.length > 0 || https.length > 0) p.hasvulnerableendpoint = true
  else if (anyCollected) p.hasvulnerableendpoint = false
  // Registry data (ParseCARegistryProperties).
  const reg = obj(o.item, 'CARegistryData', path, out)
  const regPath = `${path}.CARegistryData`
  let security: unknown[] | null = null
  let restrictions: unknown[] = []
  let restrictionsCollected = false
  if (reg) {
    const ear = obj(reg, 'EnrollmentAgentRestrictions', regPath, out)
    if (ear && get(ear, 'Collected') === true) {
      restrictionsCollected = true
      restrictions = list(ear, 'Restrictions', `${regPath}.EnrollmentAgentRestrictions`, out)
      p.hasenrollmentagentrestrictions = restrictions.length > 0
    }
    for (const [key, prop] of [['IsUserSpecifiesSanEnabled', 'isuserspecifiessanenabled'], ['RoleSeparationEnabled', 'roleseparationenabled']] as const) {
      const r = obj(reg, key, regPath, out)
      if (r && get(r, 'Collected') === true && typeof get(r, 'Value') === 'boolean') p[prop] = get(r, 'Value') as boolean
    }
    const sec = obj(reg, 'CASecurity', regPath, out)
    if (sec && get(sec, 'Collected') === true) security = list(sec, 'Data', `${regPath}.CASecurity`, out)
  }
  out.node(nodeRow(o))
  const hosting = str(o.item, 'HostingComputer', path, out)
  // ACEs: with CA security collected, the CA's own ManageCA / ManageCertificates / Enroll ACEs are
  // replaced by the registry's (except the hosting computer's).
  const acl = security
    ? [...caSecurity(security, `${regPath}.CASecurity.Data`, out), ...o.aces.filter((a) => a.sid === hosting || !['ManageCA', 'ManageCertificates', 'Enroll'].includes(a.right))]
    : o.aces
  emitAces(o, acl, out)
  const enabled = principals(o.item, 'EnabledCertTemplates', path, out)
  for (const t of enabled) out.edge(t.id, 'CertTemplate', o.id, 'EnterpriseCA', 'PublishedTo', rel())
  if (hosting !== '') out.edge(hosting, 'Computer', o.id, 'EnterpriseCA', 'HostsCAService', rel())
  if (restrictionsCollected) {
    restrictions.forEach((r, i) => {
      const rp = `${regPath}.EnrollmentAgentRestrictions.Restrictions[${i}]`
      if (!isObject(r)) return out.violation(rp, 'a restriction must be an object {AccessType, Agent, AllTemplates, Template}')
      if (get(r, 'AccessType') !== 'AccessAllowedCallback') return
      const agent = principal(get(r, 'Agent'), `${rp}.Agent`, out)
      if (!agent) return
      let templates: string[]
      if (get(r, 'AllTemplates') === true) templates = enabled.map((t) => t.id)
      else {
        const t = get(r, 'Template')
        const tp = t === undefined || t === null ? null : principal(t, `${rp}.Template`, out)
        templates = tp ? [tp.id] : []
      }
      for (const t of templates) out.edge(agent.id, agent.kind, t, 'CertTemplate', 'DelegatedEnrollmentAgent', rel())
    })
  }
  emitContainedBy(o, out)
}
