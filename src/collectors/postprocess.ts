/**
 * Post-processing of collector data: the relationships BloodHound derives after ingest
 * (packages/go/analysis/ad/post.go) and that the findings depend on. Runs at the start of every
 * analysis run (src/findings/run.ts), off the request path, and replaces the previous derived set as a
 * whole in one batch, so it always reflects the graph as it is now (a removed ACE removes its DCSync).
 *
 *   DCSync             principals holding GetChanges AND GetChangesAll on a collected domain, directly or
 *                      through group membership: the cross product of the two sets of first-degree holders
 *                      (BloodHound's CalculateCrossProductNodeSets, `crossProductNodeSets` in
 *                      src/collectors/adcs.ts, the one implementation shared with the ADCS and Citrix rules)
 *   SyncLAPSPassword   the same with GetChanges AND GetChangesInFilteredSet, to every computer of the
 *                      domain with `haslaps: true`
 *   AdminTo, CanRDP, CanPSRemote, ExecuteDCOM   from the computers' local groups (SQL, postprocess.store.ts)
 *   CanRDP on Citrix computers (a "Direct Access Users" local group, BloodHound's citrixEnabled rule, on by
 *                      default there): the cross product (src/collectors/adcs.ts) of the Remote Desktop
 *                      Users members, the Direct Access Users members and the RemoteInteractiveLogonRight
 *                      holders, computed here per computer (the cross product of src/collectors/adcs.ts)
 *   first, as BloodHound: well-known group kinds, domain association of unnamed SIDs, the well-known groups
 *                      and their MemberOf / ClaimSpecialIdentity links (wellknown.store.ts; these stay)
 *   Owns, WriteOwner   from OwnsRaw / WriteOwnerRaw (SQL, postprocess.store.ts)
 *   ADCS               the certificate relationships (EnterpriseCAFor, IssuedSignedBy, TrustedForNTAuth),
 *                      ExtendedByPolicy, EnrollOnBehalfOf, GoldenCert and the ADCSESC* relationships
 *                      (src/collectors/adcs.ts, pure; reads in adcs.store.ts)
 *   NTLM relay         CoerceAndRelayNTLMToSMB / ToLDAP / ToLDAPS / ToADCS from the domain's Authenticated
 *                      Users group (SQL, ntlm.store.ts; the ESC8 victims come from adcs.ts)
 *
 * The set arithmetic is pure (`replicationHolders`, `citrixCanRdp`, adcs.ts), unit-tested; the store does the I/O.
 */
import { crossProductNodeSets, deriveAdcs, Membership, type AdcsNode } from './adcs'
import { loadAdcsFacts } from './adcs.store'
import { loadCitrixData, loadReplicationData, replaceDerivedEdges, type CitrixData, type ReplicationData } from './postprocess.store'
import { analysisSettings } from '../appcfg/appcfg.store'
import { linkWellKnownNodes } from './wellknown.store'

export interface DomainHolders {
  domain: number
  domainsid: string | null
  dcsync: number[]
  lapsSyncers: number[]
}

/** The membership of a loaded subgraph (DCSync and Citrix data), as the cross product reads it. */
function membershipOf(nodes: readonly { id: number; objectid: string; kinds: string }[], membership: readonly [number, number][]): Membership {
  const byId = new Map<number, AdcsNode>(nodes.map((n) => [n.id, { id: n.id, objectid: n.objectid, kinds: JSON.parse(n.kinds) as string[], props: {} }]))
  return new Membership(byId, membership.map(([start, end]) => ({ start, end, kind: 'MemberOf' })))
}

/**
 * Per collected domain: who gets DCSync (GetChanges × GetChangesAll) and SyncLAPSPassword (GetChanges ×
 * GetChangesInFilteredSet), BloodHound's getDCSyncers / getLAPSSyncers: the cross product
 * (`crossProductNodeSets`, src/collectors/adcs.ts) of the first-degree holders of the two rights. Pure.
 */
export function replicationHolders(d: ReplicationData): DomainHolders[] {
  const m = membershipOf(d.nodes, d.membership)
  const byDomain = new Map<number, { sid: string | null; sets: Map<string, number[]> }>()
  for (const h of d.holders) {
    let x = byDomain.get(h.domain)
    if (!x) byDomain.set(h.domain, (x = { sid: h.domainsid, sets: new Map() }))
    const s = x.sets.get(h.right)
    if (s) s.push(h.holder)
    else x.sets.set(h.right, [h.holder])
  }
  const cross = (x: { sets: Map<string, number[]> }, a: string, b: string) =>
    [...crossProductNodeSets(m, [x.sets.get(a) ?? [], x.sets.get(b) ?? []])].sort((p, q) => p - q)
  return [...byDomain].map(([domain, x]) => ({
    domain,
    domainsid: x.sid,
    dcsync: cross(x, 'GetChanges', 'GetChangesAll'),
    lapsSyncers: cross(x, 'GetChanges', 'GetChangesInFilteredSet'),
  }))
}

/**
 * CanRDP on the computers that have the Citrix Direct Access Users group (BloodHound's
 * FetchCanRDPEntityBitmapForComputer with citrixEnabled and user rights enforced): the cross product
 * (CalculateCrossProductNodeSets, shared with the ADCS rules: src/collectors/adcs.ts `crossProductNodeSets`)
 * of {Remote Desktop Users}, {Direct Access Users} and the RemoteInteractiveLogonRight holders. Pure.
 */
export function citrixCanRdp(d: CitrixData): [number, number][] {
  const m = membershipOf(d.nodes, d.membership)
  const holders = new Map<number, number[]>()
  for (const [computer, holder] of d.logonRight) holders.set(computer, [...(holders.get(computer) ?? []), holder])
  const out: [number, number][] = []
  for (const c of d.computers)
    for (const id of [...crossProductNodeSets(m, [[c.rdp], [c.dau], holders.get(c.computer) ?? []])].sort((a, b) => a - b))
      if (id !== c.computer) out.push([id, c.computer])
  return out
}

export interface PostProcessSummary {
  derivedEdges: number
  durationMs: number
  /** ADCS: time to read the facts (two D1 batches) and to derive (isolate), the facts' size */
  adcs: { readMs: number; deriveMs: number; nodes: number; edges: number }
}

/** Derives and stores the post-processed relationships (one read, one write batch). */
export async function postProcess(db: D1Database, now: string): Promise<PostProcessSummary> {
  const started = Date.now()
  // BloodHound's first three steps; every read below sees their result (e.g. Domain Users -MemberOf-> Everyone).
  await linkWellKnownNodes(db, now)
  const holders = replicationHolders(await loadReplicationData(db))
  const t0 = Date.now()
  const facts = await loadAdcsFacts(db)
  const t1 = Date.now()
  const adcs = deriveAdcs(facts)
  const t2 = Date.now()
  // the administrator's settings (src/appcfg/): the Citrix rule (analysis.citrix_rdp_support) and the NTLM
  // relay relationships (feature flag ntlm_post_processing)
  const settings = await analysisSettings(db)
  const citrixRdp = settings.citrixRdp ? citrixCanRdp(await loadCitrixData(db)) : []
  const derivedEdges = await replaceDerivedEdges(db, {
    citrix: settings.citrixRdp,
    ntlm: settings.ntlm,
    now,
    dcsync: holders.flatMap((h) => h.dcsync.map((id) => [id, h.domain] as [number, number])),
    lapsSyncers: holders.filter((h) => h.domainsid && h.lapsSyncers.length > 0).map((h) => ({ domainsid: h.domainsid!, holders: h.lapsSyncers })),
    adcs,
    citrixRdp,
  })
  return { derivedEdges, durationMs: Date.now() - started, adcs: { readMs: t1 - t0, deriveMs: t2 - t1, nodes: facts.nodes.length, edges: facts.edges.length } }
}
