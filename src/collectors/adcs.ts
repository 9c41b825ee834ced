/**
 * ADCS post-processing: the certificate relationships and the ADCS escalation (ESC) relationships
 * BloodHound derives after ingest (packages/go/analysis/ad/adcs.go, adcscache.go, esc_shared.go, esc1.go,
 * esc3.go, esc4.go, esc6.go, esc9.go, esc10.go, esc13.go and CalculateCrossProductNodeSets in ad.go).
 *
 * Pure: the facts the store reads (src/collectors/adcs.store.ts: the ADCS nodes, the relationships into
 * them, the membership below their principals) in, relationship pairs out. Nothing here reads D1; the pairs
 * are written by the one post-processing batch (postprocess.store.ts).
 *
 * Order, as BloodHound's PostADCS:
 *   1. certificate relationships from the CA properties: TrustedForNTAuth, IssuedSignedBy, EnterpriseCAFor,
 *      and ExtendedByPolicy (template → issuance policy);
 *   2. the per-CA facts (enrollers, controllers, published templates, hosting computers) and the domains
 *      each enterprise CA chains to; EnrollOnBehalfOf (template → template);
 *   3. per enterprise CA that chains to a domain and has an enabled hosting computer: GoldenCert, ADCSESC1,
 *      ADCSESC3, ADCSESC4, ADCSESC6a/6b, ADCSESC9a/9b, ADCSESC10a/10b, ADCSESC13, ADCSESC16 (esc16.go), and
 *      the computers that
 *      are candidate victims of CoerceAndRelayNTLMToADCS (ESC8, BloodHound's PostCoerceAndRelayNTLMToADCS in
 *      ntlm.go; the relationship itself is written in SQL, src/collectors/ntlm.store.ts, which keeps the
 *      victims that are unprotected computers and draws it from the domain's Authenticated Users group).
 *
 * Property reads follow Go's typed getters: a property that is missing or of another type fails the check
 * it belongs to (the template or CA is skipped for that rule), never reads as false.
 */

export const EKU_ANY_PURPOSE = '2.5.29.37.0'
export const EKU_CERT_REQUEST_AGENT = '1.3.6.1.4.1.311.20.2.1'
export const EKU_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2'
/** szOID_NTDS_CA_SECURITY_EXT: the SID security extension; a CA that disables it is open to ESC16. */
export const OID_NTDS_CA_SECURITY_EXT = '1.3.6.1.4.1.311.25.2'

/** CertificateMappingMethods bit for UPN mapping (Schannel); -1 = the registry value does not exist. */
const CERT_MAPPING_UPN = 0x4
const REGISTRY_VALUE_DOES_NOT_EXIST = -1

export type Props = Record<string, unknown>

/** A node the ADCS rules look at: the ADCS objects, domains, and every principal met on the way. */
export interface AdcsNode {
  id: number
  objectid: string
  kinds: readonly string[]
  props: Props
}

/** A stored relationship (not derived by an earlier run): start -kind-> end. */
export interface AdcsEdge {
  start: number
  end: number
  kind: string
}

export interface AdcsFacts {
  nodes: readonly AdcsNode[]
  /**
   * Ingested relationships the rules read: into cert templates, enterprise CAs, NTAuth stores, root CAs,
   * AIA CAs and domains, out of issuance policies (OIDGroupLink), and MemberOf / MemberOfLocalGroup below
   * every principal that holds a right on a template or CA. `OwnsRaw` / `WriteOwnerRaw` are read as `Owns` /
   * `WriteOwner` (on templates and CAs BloodHound's implicit-owner rule never blocks them).
   */
  edges: readonly AdcsEdge[]
}

export type Pair = [number, number]

export interface AdcsResult {
  /** derived kind → [start, end] pairs, each pair once */
  pairs: Map<string, Pair[]>
  /**
   * ESC9 / ESC10: the victims (principals that may enroll) per target domain; the attackers are the Group,
   * User and Computer principals holding GenericAll, GenericWrite, Owns, WriteOwner or WriteDacl on a victim,
   * found in SQL in the write batch (computersOnly: only victims that are computers count, scenario b).
   */
  attackerRules: { kind: string; computersOnly: boolean; victims: Pair[] }[]
  /**
   * CoerceAndRelayNTLMToADCS (ESC8): [computer, domain] — a computer that may enroll (template and CA
   * enrollers, `victims` below) in an authentication template published to an enterprise CA with a
   * vulnerable web enrollment endpoint that chains to the domain. src/collectors/ntlm.store.ts keeps the
   * unprotected computers and writes Authenticated Users (of the domain) → computer.
   */
  relayVictims: Pair[]
}

// ---------------------------------------------------------------------------------------------------------
// property readers (Go's Properties.Get(...).Bool() / Float64() / StringSlice(): missing or mistyped = none)

function bool(p: Props, k: string): boolean | undefined {
  const v = p[k]
  return typeof v === 'boolean' ? v : undefined
}
function num(p: Props, k: string): number | undefined {
  const v = p[k]
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}
function strings(p: Props, k: string): string[] | undefined {
  const v = p[k]
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined
}
/**
 * An integer as Go's `Properties.Get(...).Int()` reads the DC registry values: a whole number, or a string of
 * one (BloodHound's own tests store "4" and "1" there).
 */
function int(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v)
  return undefined
}
function str(p: Props, k: string): string | undefined {
  const v = p[k]
  return typeof v === 'string' ? v : undefined
}

// ---------------------------------------------------------------------------------------------------------
// group membership (BloodHound's LocalGroupData: MemberOf and MemberOfLocalGroup reachability)

/** Authenticated Users (S-1-5-11) and Everyone (S-1-1-0): BloodHound's FetchAuthUsersAndEveryoneGroups. */
export function isAuthUsersOrEveryone(n: AdcsNode): boolean {
  return n.kinds.includes('Group') && (n.objectid.endsWith('S-1-5-11') || n.objectid.endsWith('S-1-1-0'))
}

export class Membership {
  private readonly members = new Map<number, number[]>()
  private readonly reachCache = new Map<number, ReadonlySet<number>>()
  readonly nodes: ReadonlyMap<number, AdcsNode>
  /** Authenticated Users and Everyone groups: where a cross product stops (ExcludedShortcutGroups) */
  readonly excluded: ReadonlySet<number>

  constructor(nodes: ReadonlyMap<number, AdcsNode>, edges: readonly AdcsEdge[]) {
    this.nodes = nodes
    for (const e of edges) {
      if (e.kind !== 'MemberOf' && e.kind !== 'MemberOfLocalGroup') continue
      let m = this.members.get(e.end)
      if (!m) this.members.set(e.end, (m = []))
      m.push(e.start)
    }
    const ex = new Set<number>()
    for (const n of nodes.values()) if (isAuthUsersOrEveryone(n)) ex.add(n.id)
    this.excluded = ex
  }

  kinds(id: number): readonly string[] {
    return this.nodes.get(id)?.kinds ?? []
  }

  /** Every transitive member of `id` (inbound MemberOf / MemberOfLocalGroup), `id` itself excluded. */
  reach(id: number): ReadonlySet<number> {
    const hit = this.reachCache.get(id)
    if (hit) return hit
    const out = new Set<number>()
    const stack = [...(this.members.get(id) ?? [])]
    while (stack.length > 0) {
      const x = stack.pop()!
      if (x === id || out.has(x)) continue
      out.add(x)
      for (const y of this.members.get(x) ?? []) stack.push(y)
    }
    this.reachCache.set(id, out)
    return out
  }

  /** Direct members of `id`. */
  direct(id: number): readonly number[] {
    return this.members.get(id) ?? []
  }
}

/**
 * BloodHound's CalculateCrossProductNodeSets: the principals that hold every one of the given first-degree
 * sets of rights, directly or through group membership, each reported once at the highest level — a group
 * that holds them all is reported and its members are not (they reach the target through MemberOf).
 *
 * Authenticated Users and Everyone: a set that contains one of them (directly, or as a member of one of its
 * groups) stands for "everyone" and is left out of the intersection; if every set does, the result is the
 * union of the first-degree sets, if all but one do, that one set's first-degree principals.
 *
 * Otherwise the first remaining set is the reference: its first-degree principals that are in all the other
 * (expanded) sets are results; the members of the others are walked group by group, smallest group first —
 * a group in all the other sets is a result and its members are toggled out of the walk (BloodHound's
 * XorReach, kept as it is), a group that is not is dropped; what remains and is in all the other sets is a
 * result.
 */
export function crossProductNodeSets(m: Membership, sets: readonly (readonly number[])[]): Set<number> {
  if (sets.length < 2) return new Set()
  const firstDegree: Set<number>[] = []
  const unrolled: Set<number>[] = []
  for (const set of sets) {
    let excluded = false
    const fd = new Set<number>()
    const ur = new Set<number>()
    for (const id of set) {
      fd.add(id)
      ur.add(id)
      const k = m.kinds(id)
      if (k.includes('Group') || k.includes('ADLocalGroup')) {
        if (m.excluded.has(id)) excluded = true
        else {
          const r = m.reach(id)
          for (const x of r) ur.add(x)
          for (const e of m.excluded) if (r.has(e)) excluded = true
        }
      }
      if (excluded) break
    }
    if (!excluded) {
      unrolled.push(ur)
      firstDegree.push(fd)
    }
  }
  if (firstDegree.length === 0) return new Set(sets.flat())
  if (firstDegree.length === 1) return firstDegree[0]

  const check = new Set(unrolled[1])
  for (const u of unrolled.slice(2)) for (const x of check) if (!u.has(x)) check.delete(x)

  const result = new Set<number>()
  const ref = new Set<number>()
  for (const id of firstDegree[0]) {
    if (check.has(id)) result.add(id)
    else for (const x of m.reach(id)) ref.add(x)
  }
  const groups = [...ref].filter((id) => m.reach(id).size > 0)
  groups.sort((a, b) => m.reach(a).size - m.reach(b).size || a - b)
  for (const g of groups) {
    if (!ref.has(g)) continue
    ref.delete(g)
    if (check.has(g)) {
      result.add(g)
      for (const x of m.reach(g)) {
        if (ref.has(x)) ref.delete(x)
        else ref.add(x)
      }
    }
  }
  for (const x of ref) if (check.has(x)) result.add(x)
  return result
}

/**
 * BloodHound's getVictimBitmap (ESC9 / ESC10): the principals that may enroll, groups expanded to their
 * non-group members. When Authenticated Users or Everyone may enroll on the template, every enroller of the
 * CA is a victim (and the reverse); otherwise the victims are in both.
 */
export function victims(m: Membership, templateEnrollers: readonly number[], caEnrollers: readonly number[], templateSpecial: boolean, caSpecial: boolean): Set<number> {
  const expand = (nodes: readonly number[]) => {
    const out = new Set<number>()
    for (const id of nodes) {
      if (m.kinds(id).includes('Group')) {
        for (const x of m.reach(id)) if (!m.kinds(x).includes('Group')) out.add(x)
      } else out.add(id)
    }
    return out
  }
  const t = expand(templateEnrollers)
  const c = expand(caEnrollers)
  if (!templateSpecial && !caSpecial) return new Set([...t].filter((x) => c.has(x)))
  const out = new Set<number>()
  if (templateSpecial) for (const x of c) out.add(x)
  if (caSpecial) for (const x of t) out.add(x)
  return out
}

/** Whether Authenticated Users or Everyone is one of the principals, or a direct member of one of its groups. */
function hasSpecialEnroller(m: Membership, principals: readonly number[]): boolean {
  for (const id of principals) {
    if (m.excluded.has(id)) return true
    if (m.kinds(id).includes('Group') && m.direct(id).some((x) => m.excluded.has(x))) return true
  }
  return false
}

// ---------------------------------------------------------------------------------------------------------
// template and CA checks

/** A template a user may be a victim of: it requires no DNS name in the subject alternative name. */
function validForUserVictim(t: Props): boolean {
  return bool(t, 'subjectaltrequiredns') === false && bool(t, 'subjectaltrequiredomaindns') === false
}

/** BloodHound's filterUserDNSResults: users (not gMSA / sMSA accounts) are dropped when the template requires DNS. */
function filterUserDns(m: Membership, ids: Set<number>, template: Props): Set<number> {
  if (validForUserVictim(template)) return ids
  const out = new Set<number>()
  for (const id of ids) {
    const n = m.nodes.get(id)
    const isUser = n?.kinds.includes('User') ?? false
    if (isUser && n!.props.gmsa !== true && n!.props.msa !== true) continue
    out.add(id)
  }
  return out
}

/** schemaversion and authorizedsignatures are readable and not (schemaversion > 1 with a signature required). */
function noSignatureRequired(t: Props): boolean {
  const v = num(t, 'schemaversion')
  const s = num(t, 'authorizedsignatures')
  if (v === undefined || s === undefined) return false
  return !(v > 1 && s > 0)
}

function isFalse(t: Props, k: string): boolean {
  return bool(t, k) === false
}
function isTrue(t: Props, k: string): boolean {
  return bool(t, k) === true
}

export function validForEsc1(t: Props): boolean {
  return isFalse(t, 'requiresmanagerapproval') && isTrue(t, 'authenticationenabled') && isTrue(t, 'enrolleesuppliessubject') && noSignatureRequired(t)
}

/** ESC3 enrollment-agent template (the first one): no approval; schema 1, or a later one with no signature. */
function validEsc3Start(t: Props): boolean {
  if (!isFalse(t, 'requiresmanagerapproval')) return false
  const v = num(t, 'schemaversion')
  if (v === undefined) return false
  if (v === 1) return true
  if (v > 1) {
    const s = num(t, 'authorizedsignatures')
    return s !== undefined && !(s > 0)
  }
  return false
}

/** ESC3 target template (enrolled on behalf of another): authentication, no approval. */
function validEsc3End(t: Props): boolean {
  return isTrue(t, 'authenticationenabled') && isFalse(t, 'requiresmanagerapproval')
}

function validForEsc4(t: Props): boolean {
  return isTrue(t, 'authenticationenabled') && noSignatureRequired(t)
}

/** Schannel authentication: the property when present, else client authentication, any purpose or no EKU. */
function schannelAuthentication(t: Props): boolean | undefined {
  if ('schannelauthenticationenabled' in t) return bool(t, 'schannelauthenticationenabled')
  const ekus = strings(t, 'effectiveekus')
  if (ekus === undefined) return undefined
  return ekus.includes(EKU_CLIENT_AUTH) || ekus.includes(EKU_ANY_PURPOSE) || ekus.length === 0
}

function validForEsc6(t: Props, b: boolean): boolean {
  if (!isFalse(t, 'requiresmanagerapproval') || !noSignatureRequired(t)) return false
  if (!b) return isTrue(t, 'nosecurityextension') && isTrue(t, 'authenticationenabled')
  return schannelAuthentication(t) === true
}

function validForEsc9(t: Props, b: boolean): boolean {
  if (!isFalse(t, 'requiresmanagerapproval') || !isTrue(t, 'authenticationenabled') || !isTrue(t, 'nosecurityextension')) return false
  if (!isFalse(t, 'enrolleesuppliessubject') || !noSignatureRequired(t)) return false
  if (!b) {
    const upn = bool(t, 'subjectaltrequireupn')
    const spn = bool(t, 'subjectaltrequirespn')
    return upn !== undefined && spn !== undefined && (upn || spn)
  }
  return isTrue(t, 'subjectaltrequiredns')
}

function validForEsc10(t: Props, b: boolean): boolean {
  if (!isFalse(t, 'requiresmanagerapproval') || schannelAuthentication(t) !== true) return false
  if (!isFalse(t, 'enrolleesuppliessubject') || !noSignatureRequired(t)) return false
  if (!b) {
    const upn = bool(t, 'subjectaltrequireupn')
    const spn = bool(t, 'subjectaltrequirespn')
    return upn !== undefined && spn !== undefined && (upn || spn)
  }
  return isTrue(t, 'subjectaltrequiredns')
}

/**
 * BloodHound's isCertTemplateValidForADCSRelay (ESC8): no manager approval, authentication, and schema 1 (or
 * lower), or a later schema with no authorized signature required; each property readable (Go's typed getters).
 */
export function validForAdcsRelay(t: Props): boolean {
  if (!isFalse(t, 'requiresmanagerapproval') || !isTrue(t, 'authenticationenabled')) return false
  const v = num(t, 'schemaversion')
  if (v === undefined) return false
  if (v <= 1) return true
  return num(t, 'authorizedsignatures') === 0
}

/**
 * BloodHound's isCertTemplateValidForESC16: no manager approval, authentication, and schema 1 exactly, or a
 * schema above 1 with no authorized signature required (below 1: not valid); each property readable.
 */
export function validForEsc16(t: Props): boolean {
  if (!isFalse(t, 'requiresmanagerapproval') || !isTrue(t, 'authenticationenabled')) return false
  const v = num(t, 'schemaversion')
  if (v === undefined || v < 1) return false
  if (v === 1) return true
  return num(t, 'authorizedsignatures') === 0
}

/**
 * The CA side of ESC16 (BloodHound's PostADCSESC16): the requester may specify the SAN
 * (`isuserspecifiessanenabledcollected` and `isuserspecifiessanenabled` true) and the CA disables the SID
 * security extension (`disabledextensionscollected` true, `disabledextensions` listing its OID).
 */
export function caOpenToEsc16(ca: Props): boolean {
  return (
    isTrue(ca, 'isuserspecifiessanenabledcollected') &&
    isTrue(ca, 'isuserspecifiessanenabled') &&
    isTrue(ca, 'disabledextensionscollected') &&
    (strings(ca, 'disabledextensions') ?? []).includes(OID_NTDS_CA_SECURITY_EXT)
  )
}

function validForEsc13(t: Props): boolean {
  return isFalse(t, 'requiresmanagerapproval') && isTrue(t, 'authenticationenabled') && noSignatureRequired(t)
}

// ---------------------------------------------------------------------------------------------------------
// the derivation

const CA_KINDS = ['EnterpriseCA', 'RootCA', 'AIACA'] as const

class PairSet {
  readonly byKind = new Map<string, Map<string, Pair>>()
  add(kind: string, start: number, end: number): void {
    let m = this.byKind.get(kind)
    if (!m) this.byKind.set(kind, (m = new Map()))
    m.set(`${start}:${end}`, [start, end])
  }
  has(kind: string, start: number, end: number): boolean {
    return this.byKind.get(kind)?.has(`${start}:${end}`) ?? false
  }
  result(): Map<string, Pair[]> {
    return new Map([...this.byKind].map(([k, m]) => [k, [...m.values()]]))
  }
}

export function deriveAdcs(facts: AdcsFacts): AdcsResult {
  const nodes = new Map(facts.nodes.map((n) => [n.id, n]))
  const has = (id: number, kind: string) => nodes.get(id)?.kinds.includes(kind) ?? false
  const ofKind = (kind: string) => facts.nodes.filter((n) => n.kinds.includes(kind))
  const out = new PairSet()

  // 1. certificate relationships (BloodHound's PostTrustedForNTAuth, PostIssuedSignedBy, PostEnterpriseCAFor)
  const byThumb = (thumb: string, kinds: readonly string[]) =>
    facts.nodes.filter((n) => kinds.some((k) => n.kinds.includes(k)) && str(n.props, 'certthumbprint') === thumb)
  for (const store of ofKind('NTAuthStore')) {
    for (const t of strings(store.props, 'certthumbprints') ?? []) {
      if (t === '') continue
      for (const ca of byThumb(t, ['EnterpriseCA'])) out.add('TrustedForNTAuth', ca.id, store.id)
    }
  }
  for (const ca of facts.nodes.filter((n) => CA_KINDS.some((k) => n.kinds.includes(k)))) {
    const chain = strings(ca.props, 'certchain')
    if (!chain || chain.length < 2) continue
    for (const parent of byThumb(chain[1], CA_KINDS)) out.add('IssuedSignedBy', ca.id, parent.id)
  }
  for (const eca of ofKind('EnterpriseCA')) {
    const t = str(eca.props, 'certthumbprint')
    if (!t) continue
    for (const r of byThumb(t, ['RootCA', 'AIACA'])) out.add('EnterpriseCAFor', eca.id, r.id)
  }
  // ExtendedByPolicy: template → issuance policy whose certtemplateoid the template's certificatepolicy
  // lists, in the same domain (BloodHound's PostExtendedByPolicyBinding)
  const policies = ofKind('IssuancePolicy')
  const templates = ofKind('CertTemplate')
  for (const ct of templates) {
    const certPolicies = strings(ct.props, 'certificatepolicy')
    const sid = str(ct.props, 'domainsid')
    if (!certPolicies || !sid) continue
    for (const oid of certPolicies)
      for (const p of policies) if (str(p.props, 'certtemplateoid') === oid && str(p.props, 'domainsid') === sid) out.add('ExtendedByPolicy', ct.id, p.id)
  }

  // The relationship graph the rules walk: stored relationships plus the certificate relationships above.
  const inbound = new Map<string, Set<number>>() // `${end}|${kind}` → starts
  const outbound = new Map<string, Set<number>>() // `${start}|${kind}` → ends
  const addEdge = (s: number, k: string, t: number) => {
    const ik = `${t}|${k}`
    const ok = `${s}|${k}`
    let a = inbound.get(ik)
    if (!a) inbound.set(ik, (a = new Set()))
    a.add(s)
    let b = outbound.get(ok)
    if (!b) outbound.set(ok, (b = new Set()))
    b.add(t)
  }
  for (const e of facts.edges) addEdge(e.start, e.kind === 'OwnsRaw' ? 'Owns' : e.kind === 'WriteOwnerRaw' ? 'WriteOwner' : e.kind, e.end)
  for (const [kind, pairs] of out.result()) for (const [s, t] of pairs) addEdge(s, kind, t)
  const into = (end: number, ...kinds: string[]) => {
    const r = new Set<number>()
    for (const k of kinds) for (const s of inbound.get(`${end}|${k}`) ?? []) r.add(s)
    return [...r]
  }
  const from = (start: number, ...kinds: string[]) => {
    const r = new Set<number>()
    for (const k of kinds) for (const t of outbound.get(`${start}|${k}`) ?? []) r.add(t)
    return [...r]
  }

  const m = new Membership(nodes, facts.edges)
  const domains = ofKind('Domain')
  const domainIds = new Set(domains.map((d) => d.id))
  const ecas = ofKind('EnterpriseCA')

  // 2. per-template and per-CA facts (BloodHound's ADCSCache.BuildCache)
  const tEnrollers = new Map<number, number[]>()
  const tControllers = new Map<number, number[]>()
  for (const ct of templates) {
    tEnrollers.set(ct.id, into(ct.id, 'Enroll', 'GenericAll', 'AllExtendedRights'))
    tControllers.set(ct.id, into(ct.id, 'Owns', 'GenericAll', 'WriteDacl', 'WriteOwner'))
  }
  const caEnrollers = new Map<number, number[]>()
  const published = new Map<number, AdcsNode[]>()
  for (const eca of ecas) {
    caEnrollers.set(eca.id, into(eca.id, 'Enroll'))
    published.set(
      eca.id,
      into(eca.id, 'PublishedTo')
        .filter((id) => has(id, 'CertTemplate'))
        .map((id) => nodes.get(id)!),
    )
  }
  const hosts = (eca: number) => into(eca, 'HostsCAService').filter((id) => has(id, 'Computer'))
  const hasEnabledHost = (eca: number) => hosts(eca).some((id) => nodes.get(id)!.props.enabled === true)

  // Domains an enterprise CA chains to: a certificate chain (IssuedSignedBy / EnterpriseCAFor through CA
  // objects) to a root CA that is RootCAFor the domain, AND TrustedForNTAuth an NTAuth store that is
  // NTAuthStoreFor the domain.
  const rootChain = (eca: number): Set<number> => {
    const seen = new Set<number>([eca])
    const stack = [eca]
    const roots = new Set<number>()
    while (stack.length > 0) {
      const x = stack.pop()!
      for (const y of from(x, 'IssuedSignedBy', 'EnterpriseCAFor')) {
        if (seen.has(y) || !CA_KINDS.some((k) => has(y, k))) continue
        seen.add(y)
        if (has(y, 'RootCA')) roots.add(y)
        stack.push(y)
      }
    }
    const out = new Set<number>()
    for (const r of roots) for (const d of from(r, 'RootCAFor')) if (domainIds.has(d)) out.add(d)
    return out
  }
  const ntAuthDomains = (eca: number): Set<number> => {
    const out = new Set<number>()
    for (const s of from(eca, 'TrustedForNTAuth')) if (has(s, 'NTAuthStore')) for (const d of from(s, 'NTAuthStoreFor')) if (domainIds.has(d)) out.add(d)
    return out
  }
  const chained = new Map<number, number[]>()
  for (const eca of ecas) {
    const nt = ntAuthDomains(eca.id)
    const ds = [...rootChain(eca.id)].filter((d) => nt.has(d))
    if (ds.length > 0) chained.set(eca.id, ds)
  }

  // Forest facts per domain (hasUPNCertMappingInForest, hasWeakCertBindingInForest): any DC (a Computer with
  // DCFor) of the domain or of a domain with a SameForestTrust path to it (BloodHound's
  // FetchNodesWithSameForestTrustRelationship: inbound, transitively) with the registry value.
  const forest = (d: number): Set<number> => {
    const seen = new Set<number>([d])
    const stack = [d]
    while (stack.length > 0) {
      const x = stack.pop()!
      for (const y of into(x, 'SameForestTrust'))
        if (!seen.has(y) && has(y, 'Domain')) {
          seen.add(y)
          stack.push(y)
        }
    }
    return seen
  }
  const upnMapping = new Set<number>()
  const weakBinding = new Set<number>()
  for (const d of domains) {
    for (const fd of forest(d.id)) {
      for (const dc of into(fd, 'DCFor')) {
        if (!has(dc, 'Computer')) continue
        const p = nodes.get(dc)?.props ?? {}
        const cmm = int(p.certificatemappingmethodsraw)
        if (cmm !== undefined && cmm !== REGISTRY_VALUE_DOES_NOT_EXIST && (cmm & CERT_MAPPING_UPN) === CERT_MAPPING_UPN) upnMapping.add(d.id)
        const sbe = int(p.strongcertificatebindingenforcementraw)
        if (sbe === 0 || sbe === 1 || sbe === -1) weakBinding.add(d.id)
      }
    }
  }

  // EnrollOnBehalfOf (BloodHound's PostEnrollOnBehalfOf): per domain, per enterprise CA chained to it,
  // from each template published there that is an enrollment agent template to each template of the
  // matching schema version that is published to a CA chaining (through root CA) to the domain.
  const linksToDomain = (ct: number, d: number): boolean => {
    // DoesCertTemplateLinkToDomain: a path over PublishedTo / IssuedSignedBy / EnterpriseCAFor / RootCAFor
    const seen = new Set<number>([ct])
    const stack = [ct]
    while (stack.length > 0) {
      const x = stack.pop()!
      for (const y of from(x, 'PublishedTo', 'IssuedSignedBy', 'EnterpriseCAFor', 'RootCAFor')) {
        if (y === d) return true
        if (!seen.has(y)) {
          seen.add(y)
          stack.push(y)
        }
      }
    }
    return false
  }
  const v1 = templates.filter((t) => num(t.props, 'schemaversion') === 1)
  const v2 = templates.filter((t) => (num(t.props, 'schemaversion') ?? 0) >= 2)
  for (const d of domains) {
    for (const eca of ecas) {
      if (!(chained.get(eca.id) ?? []).includes(d.id)) continue
      for (const ct1 of published.get(eca.id) ?? []) {
        const ekus = strings(ct1.props, 'effectiveekus')
        if (ekus === undefined) continue
        // version 2: an enrollment agent template (not any purpose) → templates requiring its signature
        if (!ekus.includes(EKU_ANY_PURPOSE) && ekus.includes(EKU_CERT_REQUEST_AGENT)) {
          for (const ct2 of v2) {
            if (ct2.id === ct1.id) continue
            const sigs = num(ct2.props, 'authorizedsignatures')
            if (sigs === undefined || sigs < 1) continue
            if (!(strings(ct2.props, 'applicationpolicies') ?? []).includes(EKU_CERT_REQUEST_AGENT)) continue
            if (linksToDomain(ct2.id, d.id)) out.add('EnrollOnBehalfOf', ct1.id, ct2.id)
          }
        }
        // version 1: an agent, any purpose or no EKU → every version 1 template
        if (ekus.length === 0 || ekus.includes(EKU_CERT_REQUEST_AGENT) || ekus.includes(EKU_ANY_PURPOSE)) {
          for (const ct2 of v1) if (linksToDomain(ct2.id, d.id)) out.add('EnrollOnBehalfOf', ct1.id, ct2.id)
        }
      }
    }
  }

  for (const [s, t] of out.result().get('EnrollOnBehalfOf') ?? []) addEdge(s, 'EnrollOnBehalfOf', t)

  // 3. per enterprise CA with a chain to a domain and an enabled hosting computer
  const special = (ids: readonly number[]) => hasSpecialEnroller(m, ids)
  const attackerRules = new Map<string, { kind: string; computersOnly: boolean; victims: Map<string, Pair> }>()
  const addVictims = (kind: string, computersOnly: boolean, ids: Iterable<number>, ds: readonly number[]) => {
    let r = attackerRules.get(kind)
    if (!r) attackerRules.set(kind, (r = { kind, computersOnly, victims: new Map() }))
    for (const v of ids) for (const d of ds) r.victims.set(`${v}:${d}`, [v, d])
  }
  const toDomains = (kind: string, ids: Iterable<number>, ds: readonly number[]) => {
    for (const id of ids) for (const d of ds) out.add(kind, id, d)
  }
  const relayVictims = new Map<string, Pair>()

  for (const eca of ecas) {
    const ds = chained.get(eca.id)
    if (!ds || !hasEnabledHost(eca.id)) continue
    const caP = eca.props
    const ecaEnrollers = caEnrollers.get(eca.id) ?? []
    const pub = published.get(eca.id) ?? []

    // GoldenCert: every computer hosting the CA service → each domain
    for (const h of hosts(eca.id)) toDomains('GoldenCert', [h], ds)

    for (const ct of pub) {
      const t = ct.props
      const enrollers = tEnrollers.get(ct.id) ?? []

      // ESC1: enrollee supplies the subject of an authentication certificate
      if (validForEsc1(t)) toDomains('ADCSESC1', crossProductNodeSets(m, [enrollers, ecaEnrollers]), ds)

      // ESC4: control of a published template (BloodHound's PostADCSESC4 steps 2a-2f)
      const ess = bool(t, 'enrolleesuppliessubject')
      const rma = bool(t, 'requiresmanagerapproval')
      if (ess !== undefined && rma !== undefined) {
        const genericWrite = into(ct.id, 'GenericWrite')
        const enrollOrAer = into(ct.id, 'Enroll', 'AllExtendedRights')
        const nameFlag = into(ct.id, 'WritePKINameFlag')
        const enrollmentFlag = into(ct.id, 'WritePKIEnrollmentFlag')
        const esc4 = new Set<number>()
        const or = (s: Set<number>) => s.forEach((x) => esc4.add(x))
        or(crossProductNodeSets(m, [ecaEnrollers, tControllers.get(ct.id) ?? []]))
        or(crossProductNodeSets(m, [ecaEnrollers, genericWrite, enrollOrAer]))
        if (validForEsc4(t)) {
          or(crossProductNodeSets(m, [ecaEnrollers, enrollOrAer, nameFlag, enrollmentFlag]))
          if (ess) or(crossProductNodeSets(m, [ecaEnrollers, enrollOrAer, enrollmentFlag]))
          if (!rma) or(crossProductNodeSets(m, [ecaEnrollers, enrollOrAer, nameFlag]))
        }
        toDomains('ADCSESC4', esc4, ds)
      }

      // ESC6a / ESC6b: the CA lets the requester specify the SAN (EDITF_ATTRIBUTESUBJECTALTNAME2)
      if (isTrue(caP, 'isuserspecifiessanenabledcollected') && isTrue(caP, 'isuserspecifiessanenabled')) {
        if (validForEsc6(t, false)) toDomains('ADCSESC6a', filterUserDns(m, crossProductNodeSets(m, [enrollers, ecaEnrollers]), t), ds)
        if (validForEsc6(t, true))
          toDomains(
            'ADCSESC6b',
            filterUserDns(m, crossProductNodeSets(m, [enrollers, ecaEnrollers]), t),
            ds.filter((d) => upnMapping.has(d)),
          )
      }

      // ESC9 / ESC10: victims that may enroll; attackers control a victim (SQL, in the write batch)
      if (ecaEnrollers.length > 0 && enrollers.length > 0) {
        const vict = () => victims(m, enrollers, ecaEnrollers, special(enrollers), special(ecaEnrollers))
        const weak = ds.filter((d) => weakBinding.has(d))
        const upn = ds.filter((d) => upnMapping.has(d))
        if (validForEsc9(t, false)) addVictims('ADCSESC9a', false, filterUserDns(m, vict(), t), weak)
        if (validForEsc9(t, true)) addVictims('ADCSESC9b', true, vict(), weak)
        if (validForEsc10(t, false)) addVictims('ADCSESC10a', false, filterUserDns(m, vict(), t), upn)
        if (validForEsc10(t, true)) addVictims('ADCSESC10b', true, vict(), upn)
      }

      // ESC16: the CA lets the requester specify the SAN and leaves out the SID security extension
      if (caOpenToEsc16(caP) && validForEsc16(t)) toDomains('ADCSESC16', filterUserDns(m, crossProductNodeSets(m, [enrollers, ecaEnrollers]), t), ds)

      // ESC13: the template's issuance policy is linked to a group (ExtendedByPolicy → OIDGroupLink)
      if (validForEsc13(t)) {
        const groups = new Set<number>()
        for (const p of from(ct.id, 'ExtendedByPolicy')) if (has(p, 'IssuancePolicy')) for (const g of from(p, 'OIDGroupLink')) if (has(g, 'Group')) groups.add(g)
        if (groups.size > 0) {
          const principals = filterUserDns(m, crossProductNodeSets(m, [enrollers, ecaEnrollers]), t)
          for (const g of groups) for (const p of principals) out.add('ADCSESC13', p, g)
        }
      }
    }

    // ESC8 (BloodHound's PostCoerceAndRelayNTLMToADCS): a web enrollment endpoint open to NTLM relay
    // (`hasvulnerableendpoint`, set at ingest from HttpEnrollmentEndpoints); per published template valid
    // for relay with at least one enroller, the victims (template and CA enrollers, groups expanded, as ESC9)
    // that are computers, to every domain the CA chains to.
    if (isTrue(caP, 'hasvulnerableendpoint')) {
      for (const ct of pub) {
        const enrollers = tEnrollers.get(ct.id) ?? []
        if (!validForAdcsRelay(ct.props) || enrollers.length === 0) continue
        for (const v of victims(m, enrollers, ecaEnrollers, special(enrollers), special(ecaEnrollers)))
          if (m.kinds(v).includes('Computer')) for (const d of ds) relayVictims.set(`${v}:${d}`, [v, d])
      }
    }

    // ESC3: enroll on behalf of another principal (an enrollment agent template on any CA, then a template
    // of this CA that accepts the agent's signature)
    if (bool(caP, 'enrollmentagentrestrictionscollected') !== undefined) {
      let restricted = false
      let readable = true
      if (caP.enrollmentagentrestrictionscollected === true) {
        const r = bool(caP, 'hasenrollmentagentrestrictions')
        if (r === undefined) readable = false
        else restricted = r
      }
      if (readable) {
        for (const ct2 of pub) {
          if (!validEsc3End(ct2.props)) continue
          for (const ct1 of into(ct2.id, 'EnrollOnBehalfOf').filter((id) => has(id, 'CertTemplate'))) {
            const c1 = nodes.get(ct1)!
            if (!validEsc3Start(c1.props)) continue
            const ecas1 = from(ct1, 'PublishedTo').filter((id) => has(id, 'EnterpriseCA'))
            const agents = restricted ? into(ct2.id, 'DelegatedEnrollmentAgent') : null
            for (const eca1 of ecas1) {
              const sets = [tEnrollers.get(ct1) ?? [], tEnrollers.get(ct2.id) ?? [], caEnrollers.get(eca1) ?? [], ecaEnrollers]
              if (agents) sets.push(agents)
              toDomains('ADCSESC3', filterUserDns(m, crossProductNodeSets(m, sets), c1.props), ds)
            }
          }
        }
      }
    }
  }

  return {
    pairs: out.result(),
    attackerRules: [...attackerRules.values()].filter((r) => r.victims.size > 0).map((r) => ({ kind: r.kind, computersOnly: r.computersOnly, victims: [...r.victims.values()] })),
    relayVictims: [...relayVictims.values()],
  }
}
