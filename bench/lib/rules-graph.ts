/**
 * The graph of the rules benchmark (bench/rules.ts): `nodes` nodes split evenly over `environments` Active Directory
 * domains, as rows of the nodes and edges tables (bench/worker.ts POST /__bench/rules-graph writes them).
 *
 * Each domain: its Domain node, Domain Admins (`-512`), three admin groups (the first a member of Domain Admins,
 * the others nested into it, five users in the first), then ordinary groups (a tenth of the domain) nested in a
 * tree under the first ordinary group, and users, each a member of one ordinary group. The first domain is the
 * forest root: it also has Enterprise Admins (`-519`), which its Domain Admins and the first user of up to three
 * other domains are members of (memberships across a trust, as in a real forest).
 */
export const RULES_BENCH_SID = 'S-1-5-21-4242'

export interface RulesGraph {
  /** [id, objectid, kind, kinds (JSON), name, environment_id, properties (JSON)] */
  nodes: [number, string, string, string, string, string, string][]
  /** [start id, end id, kind, properties (JSON)] */
  edges: [number, number, string, string][]
}

export function rulesGraph(nodes: number, environments: number): RulesGraph {
  const out: RulesGraph = { nodes: [], edges: [] }
  let id = 0
  const add = (objectid: string, kind: string, env: string): number => {
    out.nodes.push([++id, objectid, kind, JSON.stringify([kind, 'Base']), `${objectid}@BENCH`, env, '{}'])
    return id
  }
  const memberOf = (s: number, t: number) => out.edges.push([s, t, 'MemberOf', '{}'])
  const per = Math.floor(nodes / environments)
  let rootEa = 0
  for (let e = 0; e < environments; e++) {
    const sid = `${RULES_BENCH_SID}-${e}`
    const start = id
    add(sid, 'Domain', sid)
    const da = add(`${sid}-512`, 'Group', sid)
    if (e === 0) {
      rootEa = add(`${sid}-519`, 'Group', sid)
      memberOf(da, rootEa)
    }
    const admins = [0, 1, 2].map((k) => add(`${sid}-1${k}00`, 'Group', sid))
    memberOf(admins[0], da)
    memberOf(admins[1], admins[0])
    memberOf(admins[2], admins[1])
    const left = per - (id - start)
    const groups: number[] = []
    for (let k = 0; k < Math.max(1, Math.floor(left / 10)); k++) {
      const g = add(`${sid}-2${String(k).padStart(5, '0')}`, 'Group', sid)
      if (k > 0) memberOf(g, groups[Math.floor((k - 1) / 2)])
      groups.push(g)
    }
    for (let k = 0; id - start < per; k++) {
      const u = add(`${sid}-5${String(k).padStart(5, '0')}`, 'User', sid)
      if (k < 5) memberOf(u, admins[0])
      else memberOf(u, groups[k % groups.length])
      if (k === 0 && e >= 1 && e <= 3) memberOf(u, rootEa)
    }
  }
  return out
}
