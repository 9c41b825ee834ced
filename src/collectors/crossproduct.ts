/**
 * BloodHound's cross product of principal sets (CalculateCrossProductNodeSets, packages/go/analysis/ad/ad.go
 * and CalculateCrossProductNodeSetsDoc.md), used here for CanRDP on Citrix computers: the principals that
 * are, directly or through group membership, in every one of several sets (for example "member of Remote
 * Desktop Users" AND "member of Direct Access Users" AND "holds RemoteInteractiveLogonRight"), reported at
 * the highest level that satisfies it: a group in all sets gets the relationship, and its members reach the
 * target through their membership instead of getting one each.
 *
 * The rules, as BloodHound applies them:
 *  - each set is "unrolled": its entities plus, for each group among them, every transitive member (through
 *    MemberOf and MemberOfLocalGroup). A set that contains Everyone or Authenticated Users, directly or as a
 *    member of one of its groups, constrains nothing (every principal is in it) and is left out;
 *  - no set left: every entity of every set; one set left: that set's own entities;
 *  - otherwise the "check set" is the intersection of the unrolled sets but the first. An entity of the
 *    first set that is in the check set is a result; the members of the others form the reference set;
 *  - the groups of the reference set are visited from the smallest (fewest transitive members) to the
 *    largest: a group in the check set is a result and is removed with its members toggled (BloodHound XORs
 *    the member set, so members already removed by a smaller group come back); a group not in the check set
 *    is removed alone, its members stay;
 *  - what remains of the reference set and is in the check set is a result.
 * Ties between groups of the same size are broken by node id (BloodHound's order there is unspecified).
 *
 * Pure: the membership graph comes in as a map group → direct members; unit-tested.
 */

export interface MembershipGraph {
  /** direct members of each group (MemberOf / MemberOfLocalGroup start nodes), by node id */
  members: ReadonlyMap<number, readonly number[]>
  /** node ids of kind Group or local group (only those are unrolled) */
  groups: ReadonlySet<number>
  /** Everyone / Authenticated Users node ids */
  excluded: ReadonlySet<number>
}

/** Transitive members of a node (empty for a node without members); memoised per graph. */
export function reachOf(g: MembershipGraph, cache: Map<number, Set<number>>, id: number): Set<number> {
  const hit = cache.get(id)
  if (hit) return hit
  const out = new Set<number>()
  const stack = [...(g.members.get(id) ?? [])]
  while (stack.length > 0) {
    const x = stack.pop()!
    if (out.has(x)) continue
    out.add(x)
    for (const y of g.members.get(x) ?? []) if (!out.has(y)) stack.push(y)
  }
  cache.set(id, out)
  return out
}

export function crossProductSets(g: MembershipGraph, sets: readonly (readonly number[])[]): number[] {
  if (sets.length < 2) return []
  const cache = new Map<number, Set<number>>()
  const reach = (id: number) => reachOf(g, cache, id)
  const firstDegree: Set<number>[] = []
  const unrolled: Set<number>[] = []
  for (const set of sets) {
    let excluded = false
    const fd = new Set<number>()
    const ur = new Set<number>()
    for (const id of set) {
      fd.add(id)
      ur.add(id)
      if (g.groups.has(id)) {
        if (g.excluded.has(id)) excluded = true
        else {
          const r = reach(id)
          for (const x of r) ur.add(x)
          for (const x of g.excluded) if (r.has(x)) excluded = true
        }
      }
      if (excluded) break
    }
    if (!excluded) {
      firstDegree.push(fd)
      unrolled.push(ur)
    }
  }
  if (firstDegree.length === 0) return [...new Set(sets.flat())].sort((a, b) => a - b)
  if (firstDegree.length === 1) return [...firstDegree[0]].sort((a, b) => a - b)

  const check = new Set(unrolled[1])
  for (const u of unrolled.slice(2)) for (const x of check) if (!u.has(x)) check.delete(x)

  const result = new Set<number>()
  const ref = new Set<number>()
  for (const id of firstDegree[0]) {
    if (check.has(id)) result.add(id)
    else for (const x of reach(id)) ref.add(x)
  }
  const groupsBySize = [...ref]
    .map((id) => [id, reach(id).size] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => a[1] - b[1] || a[0] - b[0])
  for (const [id] of groupsBySize) {
    if (!ref.has(id)) continue
    ref.delete(id)
    if (check.has(id)) {
      result.add(id)
      for (const x of reach(id)) if (!ref.delete(x)) ref.add(x)
    }
  }
  for (const x of ref) if (check.has(x)) result.add(x)
  return [...result].sort((a, b) => a - b)
}
