/**
 * Post-processing of collector data: the relationships BloodHound derives after ingest
 * (packages/go/analysis/ad/post.go) and that the findings depend on. Runs at the start of every
 * analysis run (src/findings/run.ts), off the request path, and replaces the previous derived set as a
 * whole in one batch, so it always reflects the graph as it is now (a removed ACE removes its DCSync).
 *
 *   DCSync             principals holding GetChanges AND GetChangesAll on a collected domain, directly or
 *                      through group membership (BloodHound's CalculateCrossProductNodeSets): a group that
 *                      holds both gets the relationship, its members reach the domain through MemberOf;
 *                      a principal that gets the two rights through different groups gets it itself
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
 *
 * The set arithmetic is pure (`crossProduct`), unit-tested; the store does the I/O.
 */
import { crossProductNodeSets, deriveAdcs, Membership, type AdcsNode } from './adcs'
import { loadAdcsFacts } from './adcs.store'
import { loadCitrixData, loadReplicationMembership, replaceDerivedEdges, type CitrixData, type ReplicationRow } from './postprocess.store'
import { linkWellKnownNodes } from './wellknown.store'

/**
 * The principals that hold both rights: every node reached (directly or as a transitive member) from both
 * `a` and `b`, minus those that are members (transitively) of another such node, since they reach the
 * target through that node's MemberOf path anyway. `parents` maps a node to the groups it was reached through.
 */
export function crossProduct(a: ReadonlySet<number>, b: ReadonlySet<number>, parents: ReadonlyMap<number, ReadonlySet<number>>): number[] {
  const both = new Set<number>()
  for (const x of a) if (b.has(x)) both.add(x)
  const out: number[] = []
  for (const x of both) {
    // Is any ancestor of x (through the groups it was reached by) also in `both`?
    const seen = new Set<number>([x])
    const stack = [...(parents.get(x) ?? [])]
    let covered = false
    while (stack.length > 0) {
      const p = stack.pop()!
      if (seen.has(p)) continue
      seen.add(p)
      if (both.has(p)) {
        covered = true
        break
      }
      for (const q of parents.get(p) ?? []) stack.push(q)
    }
    if (!covered) out.push(x)
  }
  return out.sort((p, q) => p - q)
}

export interface DomainHolders {
  domain: number
  domainsid: string | null
  dcsync: number[]
  lapsSyncers: number[]
}

/** Per collected domain: who gets DCSync and SyncLAPSPassword. Pure. */
export function replicationHolders(rows: readonly ReplicationRow[]): DomainHolders[] {
  const byDomain = new Map<number, { sid: string | null; sets: Map<string, Set<number>>; parents: Map<number, Set<number>> }>()
  for (const r of rows) {
    let d = byDomain.get(r.domain)
    if (!d) byDomain.set(r.domain, (d = { sid: r.domainsid, sets: new Map(), parents: new Map() }))
    let s = d.sets.get(r.right)
    if (!s) d.sets.set(r.right, (s = new Set()))
    s.add(r.id)
    if (r.parent !== null) {
      let p = d.parents.get(r.id)
      if (!p) d.parents.set(r.id, (p = new Set()))
      p.add(r.parent)
    }
  }
  const empty = new Set<number>()
  return [...byDomain].map(([domain, d]) => ({
    domain,
    domainsid: d.sid,
    dcsync: crossProduct(d.sets.get('GetChanges') ?? empty, d.sets.get('GetChangesAll') ?? empty, d.parents),
    lapsSyncers: crossProduct(d.sets.get('GetChanges') ?? empty, d.sets.get('GetChangesInFilteredSet') ?? empty, d.parents),
  }))
}

/**
 * CanRDP on the computers that have the Citrix Direct Access Users group (BloodHound's
 * FetchCanRDPEntityBitmapForComputer with citrixEnabled and user rights enforced): the cross product
 * (CalculateCrossProductNodeSets, shared with the ADCS rules: src/collectors/adcs.ts `crossProductNodeSets`)
 * of {Remote Desktop Users}, {Direct Access Users} and the RemoteInteractiveLogonRight holders. Pure.
 */
export function citrixCanRdp(d: CitrixData): [number, number][] {
  const nodes = new Map<number, AdcsNode>(d.nodes.map((n) => [n.id, { id: n.id, objectid: n.objectid, kinds: JSON.parse(n.kinds) as string[], props: {} }]))
  const m = new Membership(nodes, d.membership.map(([start, end]) => ({ start, end, kind: 'MemberOf' })))
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
  const holders = replicationHolders(await loadReplicationMembership(db))
  const t0 = Date.now()
  const facts = await loadAdcsFacts(db)
  const t1 = Date.now()
  const adcs = deriveAdcs(facts)
  const t2 = Date.now()
  const citrixRdp = citrixCanRdp(await loadCitrixData(db))
  const derivedEdges = await replaceDerivedEdges(db, {
    now,
    dcsync: holders.flatMap((h) => h.dcsync.map((id) => [id, h.domain] as [number, number])),
    lapsSyncers: holders.filter((h) => h.domainsid && h.lapsSyncers.length > 0).map((h) => ({ domainsid: h.domainsid!, holders: h.lapsSyncers })),
    adcs,
    citrixRdp,
  })
  return { derivedEdges, durationMs: Date.now() - started, adcs: { readMs: t1 - t0, deriveMs: t2 - t1, nodes: facts.nodes.length, edges: facts.edges.length } }
}
