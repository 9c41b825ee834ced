/**
 * Deterministic generator of AD-like attack graphs (plus one Azure tenant) in BloodHound's OpenGraph
 * format (reference §8.2). Same (edges, seed) in, byte-identical graph out, on any machine: the only
 * randomness is a seeded PRNG, there is no Date, no Math.random and no Map/Set iteration order that
 * depends on anything but insertion.
 *
 * Shape, for a target of E edges (N ≈ E / 10 nodes, so 1 M edges ⇔ 100 k nodes as in the goals):
 *  - ~90 % Active Directory in two domains (CORP.LOCAL ≈ 75 %, DEV.CORP.LOCAL ≈ 25 %), each with its
 *    well-known principals (Administrator -500, Domain Admins -512, Domain Users -513, Domain Computers
 *    -515, Domain Controllers -516, Schema Admins -518 and Enterprise Admins -519 in the forest root,
 *    builtin Administrators `<DOMAIN>-S-1-5-32-544`), two domain controllers, users (enabled, hasspn for
 *    ~5 %, dontreqpreauth for ~1 %, admincount), computers, groups (nested as a DAG), OUs and GPOs;
 *  - ~10 % Azure: one tenant with Global Administrator / Privileged Role Administrator roles (object id
 *    `<templateid>@<tenantid>`), users, groups, service principals, applications, subscriptions,
 *    resource groups, VMs and key vaults;
 *  - structural edges (Contains, MemberOf incl. Domain Users, nested groups, HasSession, AdminTo, CanRDP,
 *    GPLink, AZContains, AZMemberOf, AZRunsAs, AZHasRole, AZOwns, AZExecuteCommand …), then ACL edges
 *    (GenericAll, GenericWrite, WriteDacl, WriteOwner, Owns, ForceChangePassword, AddMember,
 *    AllExtendedRights, ReadLAPSPassword) from power-law-chosen principals until exactly E edges exist;
 *  - a few deliberate Tier Zero paths per domain and in the tenant (listed in `tierZeroPaths`), so that
 *    analysis has findings and shortest path has long answers;
 *  - every (start, kind, end) triple is unique (the storage's UNIQUE constraint) and no edge is a loop.
 *
 * Pure: no I/O. Edges are held in typed arrays, so a 1 M-edge graph costs ~9 MB plus node objects.
 */

export type PropValue = string | number | boolean
export interface GenNode {
  objectid: string
  kinds: string[]
  properties: Record<string, PropValue>
}

export interface GenGraph {
  seed: number
  nodes: GenNode[]
  edgeCount: number
  /** node indexes and interned kinds of every edge, in generation order */
  edgeStart: Int32Array
  edgeEnd: Int32Array
  edgeKind: Uint8Array
  edgeKinds: string[]
  domains: { name: string; sid: string; index: number }[]
  tenant: { name: string; id: string; index: number }
  /** node indexes of the Tier Zero nodes the generator created on purpose */
  tierZero: number[]
  /** deliberate attack paths: node index sequences ending at a Tier Zero node */
  tierZeroPaths: { name: string; nodes: number[] }[]
}

/** Relationship kinds the generator emits; all are traversable in BloodHound (src/graph/kinds.ts). */
export const EDGE_KINDS = [
  'Contains', 'MemberOf', 'HasSession', 'AdminTo', 'CanRDP', 'CanPSRemote', 'GPLink',
  'GenericAll', 'GenericWrite', 'WriteDacl', 'WriteOwner', 'Owns', 'ForceChangePassword', 'AddMember',
  'AllExtendedRights', 'ReadLAPSPassword',
  'AZContains', 'AZMemberOf', 'AZHasRole', 'AZRunsAs', 'AZOwns', 'AZExecuteCommand', 'AZVMAdminLogin',
  'AZAddSecret', 'AZGetSecrets', 'AZResetPassword', 'SyncedToEntraUser',
] as const
const KIND_INDEX = new Map<string, number>(EDGE_KINDS.map((k, i) => [k, i]))
const ACL_KINDS = ['GenericAll', 'GenericWrite', 'WriteDacl', 'WriteOwner', 'Owns', 'ForceChangePassword', 'AddMember', 'AllExtendedRights', 'ReadLAPSPassword']
const AZ_ACL_KINDS = ['AZOwns', 'AZAddSecret', 'AZGetSecrets', 'AZResetPassword', 'AZExecuteCommand']

export const GLOBAL_ADMIN_TEMPLATE = '62e90394-69f5-4237-9190-012177145e10'
export const PRIV_ROLE_ADMIN_TEMPLATE = 'e8611ab8-c189-46e8-94e1-60213ab1f814'
const OTHER_ROLE_TEMPLATES: [string, string][] = [
  ['User Administrator', 'fe930be7-5e62-47db-91af-98c3a49a38b1'],
  ['Helpdesk Administrator', '729827e3-9c14-49f7-bb1b-9608f156bbb8'],
  ['Application Administrator', '9b895d92-2cd3-44c7-9d02-a6ac2d5ea5c3'],
  ['Cloud Application Administrator', '158c047a-c907-4556-b7ef-446551a6b5f7'],
  ['Security Reader', '5d6b6bb7-de71-4623-b4af-96380a352509'],
  ['Global Reader', 'f2ef992c-3afb-46b9-b7cf-a126ee74c451'],
]

/** sfc32: small, fast, and good enough for test data; seeded by splitmix32 so nearby seeds diverge. */
export function prng(seed: number): () => number {
  let s = seed >>> 0
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
  let a = split(), b = split(), c = split(), d = split()
  return () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0
    let t = (a + b) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    d = (d + 1) | 0
    t = (t + d) | 0
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
}

export interface GenerateOptions {
  /** exact number of edges */
  edges: number
  /** nodes; default round(edges / 10), at least 120 */
  nodes?: number
  seed?: number
}

export function generateGraph(opts: GenerateOptions): GenGraph {
  const E = Math.floor(opts.edges)
  const N = Math.max(120, Math.floor(opts.nodes ?? Math.round(E / 10)))
  if (E < N) throw new Error(`generateGraph: ${E} edges are too few for ${N} nodes (need at least one edge per node)`)
  const seed = opts.seed ?? 7
  const rnd = prng(seed * 1_000_003 + E)
  const int = (n: number) => Math.floor(rnd() * n)
  const pick = <T>(a: readonly T[]): T => a[int(a.length)]
  /** power-law pick: a few items get most of the picks (hub principals, as real ACLs have) */
  const pickSkewed = <T>(a: readonly T[]): T => a[Math.floor(a.length * rnd() ** 3)]
  const guid = () => {
    const h = () => int(0x10000).toString(16).toUpperCase().padStart(4, '0')
    return `${h()}${h()}-${h()}-4${h().slice(1)}-${(8 + int(4)).toString(16).toUpperCase()}${h().slice(1)}-${h()}${h()}${h()}`
  }

  const nodes: GenNode[] = []
  const add = (objectid: string, kinds: string[], properties: Record<string, PropValue>) => {
    nodes.push({ objectid, kinds, properties: { name: '', objectid, ...properties } })
    return nodes.length - 1
  }

  // ---- edges: typed arrays + a uniqueness set keyed by (start, end, kind) -----------------------------
  const edgeStart = new Int32Array(E)
  const edgeEnd = new Int32Array(E)
  const edgeKind = new Uint8Array(E)
  let m = 0
  const seen = new Set<number>()
  const K = EDGE_KINDS.length
  // Key fits in 2^53 for up to ~1.5 M nodes; the generator is used far below that. `stride` is set once
  // every node exists (edges are only added after that).
  let stride = 0
  const key = (s: number, e: number, k: number) => (s * stride + e) * K + k
  /** adds the edge unless it is a loop, a duplicate, or the budget is full; returns whether it was added */
  const edge = (s: number, e: number, kind: string): boolean => {
    if (m >= E || s === e) return false
    const k = KIND_INDEX.get(kind)
    if (k === undefined) throw new Error(`unknown edge kind ${kind}`)
    const kk = key(s, e, k)
    if (seen.has(kk)) return false
    seen.add(kk)
    edgeStart[m] = s
    edgeEnd[m] = e
    edgeKind[m] = k
    m++
    return true
  }
  /** the protected edges (Tier Zero paths) are added first so the budget can never squeeze them out */
  const pathEdges: [number, number, string][] = []

  const azShare = Math.max(30, Math.round(N * 0.1))
  const adTotal = N - azShare
  const domainSpecs = [
    { name: 'CORP.LOCAL', sid: 'S-1-5-21-3623811015-3361044348-30300820', share: 0.75, root: true },
    { name: 'DEV.CORP.LOCAL', sid: 'S-1-5-21-1004336348-1177238915-682003330', share: 0.25, root: false },
  ]
  const domains: GenGraph['domains'] = []
  const tierZero: number[] = []
  const tierZeroPaths: GenGraph['tierZeroPaths'] = []

  interface DomainParts {
    domain: number
    users: number[]
    computers: number[]
    groups: number[]
    ous: number[]
    gpos: number[]
    da: number
    admins: number
    domainUsers: number
    domainComputers: number
    administrator: number
    dcs: number[]
    adminGroups: number[]
  }
  const parts: DomainParts[] = []

  let adLeft = adTotal
  domainSpecs.forEach((d, di) => {
    const size = di === domainSpecs.length - 1 ? adLeft : Math.round(adTotal * d.share)
    adLeft -= size
    const dom = d.name
    const common = { domainsid: d.sid, domain: dom }
    const domain = add(d.sid, ['Domain', 'Base'], { ...common, name: dom, functionallevel: '2016', collected: true })
    domains.push({ name: dom, sid: d.sid, index: domain })
    tierZero.push(domain)
    let rid = 1000
    const wk = (r: number, name: string, extra: Record<string, PropValue> = {}) =>
      add(`${d.sid}-${r}`, ['Group', 'Base'], { ...common, name: `${name}@${dom}`, admincount: true, ...extra })
    const da = wk(512, 'DOMAIN ADMINS')
    const domainUsers = wk(513, 'DOMAIN USERS', { admincount: false })
    const domainComputers = wk(515, 'DOMAIN COMPUTERS', { admincount: false })
    const dcGroup = wk(516, 'DOMAIN CONTROLLERS')
    const admins = add(`${dom}-S-1-5-32-544`, ['Group', 'Base'], { ...common, name: `ADMINISTRATORS@${dom}`, admincount: true })
    tierZero.push(da, dcGroup, admins)
    if (d.root) {
      tierZero.push(wk(518, 'SCHEMA ADMINS'), wk(519, 'ENTERPRISE ADMINS'))
    }
    const administrator = add(`${d.sid}-500`, ['User', 'Base'], {
      ...common, name: `ADMINISTRATOR@${dom}`, enabled: true, hasspn: false, dontreqpreauth: false, admincount: true,
    })
    const dcs = [1, 2].map((i) =>
      add(`${d.sid}-${rid++}`, ['Computer', 'Base'], { ...common, name: `DC0${i}.${dom}`, enabled: true, operatingsystem: 'Windows Server 2022 Datacenter' }),
    )
    const fixed = nodes.length - domain
    const rest = Math.max(20, size - fixed)
    const nUsers = Math.round(rest * 0.62)
    const nComputers = Math.round(rest * 0.25)
    const nOus = Math.max(2, Math.round(rest * 0.02))
    const nGpos = Math.max(1, Math.round(rest * 0.01))
    const nGroups = Math.max(4, rest - nUsers - nComputers - nOus - nGpos)
    const users: number[] = [administrator]
    for (let i = 0; i < nUsers; i++) {
      const hasspn = rnd() < 0.05
      users.push(
        add(`${d.sid}-${rid++}`, ['User', 'Base'], {
          ...common,
          name: `${hasspn ? 'SVC' : 'USER'}${String(i).padStart(6, '0')}@${dom}`,
          enabled: rnd() < 0.9,
          hasspn,
          dontreqpreauth: rnd() < 0.01,
          admincount: rnd() < 0.02,
          pwdlastset: 1_700_000_000 + int(30_000_000),
        }),
      )
    }
    const computers: number[] = [...dcs]
    for (let i = 0; i < nComputers; i++) {
      const server = rnd() < 0.15
      computers.push(
        add(`${d.sid}-${rid++}`, ['Computer', 'Base'], {
          ...common,
          name: `${server ? 'SRV' : 'WS'}${String(i).padStart(6, '0')}.${dom}`,
          enabled: rnd() < 0.95,
          operatingsystem: server ? 'Windows Server 2019 Standard' : 'Windows 11 Enterprise',
          haslaps: rnd() < 0.6,
        }),
      )
    }
    const groups: number[] = []
    for (let i = 0; i < nGroups; i++) {
      groups.push(add(`${d.sid}-${rid++}`, ['Group', 'Base'], { ...common, name: `GROUP${String(i).padStart(5, '0')}@${dom}`, admincount: false }))
    }
    const ous: number[] = []
    for (let i = 0; i < nOus; i++) ous.push(add(guid(), ['OU', 'Base'], { ...common, name: `OU${String(i).padStart(4, '0')}@${dom}` }))
    const gpos: number[] = []
    for (let i = 0; i < nGpos; i++) gpos.push(add(guid(), ['GPO', 'Base'], { ...common, name: `GPO${String(i).padStart(4, '0')}@${dom}` }))
    // a handful of groups administer many computers (workstation/server admins)
    const adminGroups = groups.slice(0, Math.max(2, Math.round(groups.length * 0.05)))
    parts.push({ domain, users, computers, groups, ous, gpos, da, admins, domainUsers, domainComputers, administrator, dcs, adminGroups })

    // Deliberate Tier Zero paths (protected edges), if the domain is large enough to hold them.
    if (users.length > 8 && groups.length > 4 && computers.length > 4) {
      const helpdesk = groups[1]
      const svc = users[3]
      const ws = computers[computers.length - 1]
      const tech = users[5]
      pathEdges.push([administrator, da, 'MemberOf'])
      // 1. a helpdesk group may reset the built-in Administrator's password
      pathEdges.push([users[1], helpdesk, 'MemberOf'], [helpdesk, administrator, 'ForceChangePassword'])
      tierZeroPaths.push({ name: `${dom}: helpdesk resets Administrator`, nodes: [users[1], helpdesk, administrator, da] })
      // 2. a service account with GenericAll on Domain Admins
      pathEdges.push([svc, da, 'GenericAll'])
      tierZeroPaths.push({ name: `${dom}: service account controls Domain Admins`, nodes: [svc, da] })
      // 3. a workstation admin reaches a Domain Admin's session
      pathEdges.push([tech, adminGroups[0], 'MemberOf'], [adminGroups[0], ws, 'AdminTo'], [ws, administrator, 'HasSession'])
      tierZeroPaths.push({ name: `${dom}: admin of a workstation with a Domain Admin session`, nodes: [tech, adminGroups[0], ws, administrator, da] })
      // 4. WriteDacl on the domain object
      pathEdges.push([groups[2], domain, 'WriteDacl'])
      tierZeroPaths.push({ name: `${dom}: group may rewrite the domain's ACL`, nodes: [groups[2], domain] })
    }
    for (const dc of dcs) pathEdges.push([dc, dcGroup, 'MemberOf'])
    pathEdges.push([da, admins, 'MemberOf'])
  })

  // ---- Azure tenant ------------------------------------------------------------------------------------
  const tenantId = '6c12b0b0-b2cc-4a73-8252-0b94bfca2145'
  const tenantName = 'CONTOSO.ONMICROSOFT.COM'
  const az = { tenantid: tenantId }
  const tenant = add(tenantId.toUpperCase(), ['AZTenant', 'AZBase'], { ...az, name: tenantName, collected: true })
  tierZero.push(tenant)
  const role = (name: string, template: string) =>
    add(`${template}@${tenantId}`.toUpperCase(), ['AZRole', 'AZBase'], { ...az, name: `${name.toUpperCase()}@${tenantName}`, templateid: template, displayname: name })
  const ga = role('Global Administrator', GLOBAL_ADMIN_TEMPLATE)
  const pra = role('Privileged Role Administrator', PRIV_ROLE_ADMIN_TEMPLATE)
  tierZero.push(ga, pra)
  const roles = [ga, pra, ...OTHER_ROLE_TEMPLATES.map(([n, t]) => role(n, t))]
  const azRest = Math.max(20, N - nodes.length)
  const azNode = (kind: string, label: string, i: number, extra: Record<string, PropValue> = {}) =>
    add(guid(), [kind, 'AZBase'], { ...az, name: `${label}${String(i).padStart(5, '0')}@${tenantName}`, ...extra })
  const azCount = (share: number) => Math.max(2, Math.round(azRest * share))
  const subs = [0, 1].map((i) => azNode('AZSubscription', 'SUBSCRIPTION', i))
  const rgs = Array.from({ length: azCount(0.03) }, (_, i) => azNode('AZResourceGroup', 'RG', i))
  const vms = Array.from({ length: azCount(0.1) }, (_, i) => azNode('AZVM', 'VM', i))
  const kvs = Array.from({ length: azCount(0.02) }, (_, i) => azNode('AZKeyVault', 'KV', i))
  const apps = Array.from({ length: azCount(0.1) }, (_, i) => azNode('AZApp', 'APP', i))
  const sps = apps.map((_, i) => azNode('AZServicePrincipal', 'SP', i))
  const azGroups = Array.from({ length: azCount(0.1) }, (_, i) => azNode('AZGroup', 'AZGROUP', i))
  const azUsers: number[] = []
  while (nodes.length < N) azUsers.push(azNode('AZUser', 'AZUSER', azUsers.length, { enabled: rnd() < 0.95 }))
  if (azUsers.length < 4) for (let i = 0; i < 4; i++) azUsers.push(azNode('AZUser', 'AZUSER', azUsers.length, { enabled: true }))

  // Azure Tier Zero paths
  pathEdges.push([azUsers[0], ga, 'AZHasRole'], [azUsers[1], pra, 'AZHasRole'])
  pathEdges.push([azUsers[2], apps[0], 'AZOwns'], [apps[0], sps[0], 'AZRunsAs'], [sps[0], ga, 'AZHasRole'])
  tierZeroPaths.push({ name: `${tenantName}: app owner → service principal with Global Administrator`, nodes: [azUsers[2], apps[0], sps[0], ga] })
  pathEdges.push([azUsers[3], azGroups[0], 'AZMemberOf'], [azGroups[0], pra, 'AZHasRole'])
  tierZeroPaths.push({ name: `${tenantName}: group holding Privileged Role Administrator`, nodes: [azUsers[3], azGroups[0], pra] })
  // hybrid identity: an AD user synced to an Entra user who is Global Administrator
  const p0 = parts[0]
  pathEdges.push([p0.users[7 % p0.users.length], azUsers[0], 'SyncedToEntraUser'])
  tierZeroPaths.push({ name: 'hybrid: AD user synced to a Global Administrator', nodes: [p0.users[7 % p0.users.length], azUsers[0], ga] })

  stride = nodes.length + 1
  for (const [s, e, k] of pathEdges) edge(s, e, k)
  if (m !== new Set(pathEdges.map(([s, e, k]) => `${s}/${e}/${k}`)).size)
    throw new Error('generateGraph: the edge budget is too small for the Tier Zero paths')

  // ---- structural edges ----------------------------------------------------------------------------------
  for (const p of parts) {
    for (const ou of p.ous) edge(p.domain, ou, 'Contains')
    for (const g of p.gpos) {
      edge(g, pick(p.ous), 'GPLink')
      if (rnd() < 0.3) edge(g, p.domain, 'GPLink')
    }
    for (const u of p.users) {
      edge(pick(p.ous), u, 'Contains')
      edge(u, p.domainUsers, 'MemberOf')
      const k = 1 + int(3)
      for (let i = 0; i < k; i++) edge(u, pickSkewed(p.groups), 'MemberOf')
    }
    for (const c of p.computers) {
      edge(pick(p.ous), c, 'Contains')
      edge(c, p.domainComputers, 'MemberOf')
      edge(pick(p.adminGroups), c, 'AdminTo')
      if (rnd() < 0.1) edge(pick(p.users), c, 'AdminTo')
      if (rnd() < 0.2) edge(pickSkewed(p.groups), c, 'CanRDP')
      if (rnd() < 0.05) edge(pickSkewed(p.groups), c, 'CanPSRemote')
      const sessions = int(4)
      for (let i = 0; i < sessions; i++) edge(c, pick(p.users), 'HasSession')
    }
    // nested groups: a DAG (a group only joins groups created before it), 60 % of groups nest once
    for (let i = 1; i < p.groups.length; i++) if (rnd() < 0.6) edge(p.groups[i], p.groups[int(i)], 'MemberOf')
  }
  for (const s of subs) edge(tenant, s, 'AZContains')
  for (const rg of rgs) edge(pick(subs), rg, 'AZContains')
  for (const v of [...vms, ...kvs]) edge(pick(rgs), v, 'AZContains')
  apps.forEach((a, i) => edge(a, sps[i], 'AZRunsAs'))
  for (const u of azUsers) {
    const k = 1 + int(2)
    for (let i = 0; i < k; i++) edge(u, pickSkewed(azGroups), 'AZMemberOf')
    if (rnd() < 0.02) edge(u, pick(roles.slice(2)), 'AZHasRole')
    if (rnd() < 0.05) edge(u, pick(apps), 'AZOwns')
  }
  for (const v of vms) {
    edge(pickSkewed(azGroups), v, 'AZExecuteCommand')
    if (rnd() < 0.3) edge(pickSkewed(azGroups), v, 'AZVMAdminLogin')
  }

  // ---- ACL edges until exactly E -------------------------------------------------------------------------
  const adPrincipals = parts.map((p) => [...p.groups, ...p.users])
  const adTargets = parts.map((p) => [...p.users, ...p.groups, ...p.computers])
  const azPrincipals = [...azGroups, ...azUsers, ...sps]
  const azTargets = [...azUsers, ...apps, ...sps, ...vms, ...kvs, ...azGroups]
  const adWeight = adTotal / N
  let guard = 0
  while (m < E) {
    if (++guard > E * 20) throw new Error(`generateGraph: could not place ${E} unique edges on ${N} nodes`)
    if (rnd() < adWeight) {
      const d = rnd() < 0.8 ? 0 : parts.length - 1
      const s = pickSkewed(adPrincipals[d])
      const t = pick(adTargets[d])
      const kind = nodes[t].kinds[0] === 'Computer' ? pick(['GenericAll', 'GenericWrite', 'ReadLAPSPassword', 'WriteDacl', 'Owns']) : pick(ACL_KINDS)
      // AddMember only makes sense on groups; ForceChangePassword only on users
      if (kind === 'AddMember' && nodes[t].kinds[0] !== 'Group') continue
      if (kind === 'ForceChangePassword' && nodes[t].kinds[0] !== 'User') continue
      edge(s, t, kind)
    } else {
      edge(pickSkewed(azPrincipals), pick(azTargets), pick(AZ_ACL_KINDS))
    }
  }

  return {
    seed,
    nodes,
    edgeCount: m,
    edgeStart,
    edgeEnd,
    edgeKind,
    edgeKinds: [...EDGE_KINDS],
    domains,
    tenant: { name: tenantName, id: tenantId.toUpperCase(), index: tenant },
    tierZero,
    tierZeroPaths,
  }
}

/** OpenGraph node JSON (reference §8.2): id, kinds (≤ 3, first = primary), flat properties. */
export function nodeJson(n: GenNode): { id: string; kinds: string[]; properties: Record<string, PropValue> } {
  return { id: n.objectid, kinds: n.kinds, properties: n.properties }
}

/** OpenGraph edge JSON, matched by object id. */
export function edgeJson(g: GenGraph, i: number) {
  return { start: { value: g.nodes[g.edgeStart[i]].objectid }, end: { value: g.nodes[g.edgeEnd[i]].objectid }, kind: g.edgeKinds[g.edgeKind[i]] }
}

/**
 * The graph as a sequence of OpenGraph payloads of at most `maxElements` elements each: all nodes first,
 * then all edges, so that every edge's endpoints already exist whichever way the ingest resolves them.
 */
export function* openGraphPayloads(g: GenGraph, maxElements = 20_000): Generator<{ text: string; nodes: number; edges: number }> {
  for (let i = 0; i < g.nodes.length; i += maxElements) {
    const slice = g.nodes.slice(i, i + maxElements).map(nodeJson)
    yield { text: JSON.stringify({ graph: { nodes: slice, edges: [] } }), nodes: slice.length, edges: 0 }
  }
  for (let i = 0; i < g.edgeCount; i += maxElements) {
    const end = Math.min(g.edgeCount, i + maxElements)
    const slice = []
    for (let j = i; j < end; j++) slice.push(edgeJson(g, j))
    yield { text: JSON.stringify({ graph: { nodes: [], edges: slice } }), nodes: 0, edges: slice.length }
  }
}

/** The whole graph as one OpenGraph document (small graphs: demo data, fixtures). */
export function openGraphDocument(g: GenGraph): { graph: { nodes: unknown[]; edges: unknown[] } } {
  const edges = []
  for (let i = 0; i < g.edgeCount; i++) edges.push(edgeJson(g, i))
  return { graph: { nodes: g.nodes.map(nodeJson), edges } }
}

/** FNV-1a over the serialised graph: the determinism check compares two generations by this. */
export function graphFingerprint(g: GenGraph): string {
  let h = 0x811c9dc5
  const feed = (s: string) => {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  }
  for (const n of g.nodes) feed(JSON.stringify(n))
  for (let i = 0; i < g.edgeCount; i++) feed(`${g.edgeStart[i]}>${g.edgeKind[i]}>${g.edgeEnd[i]};`)
  return (h >>> 0).toString(16).padStart(8, '0')
}

/** Compressed sparse row adjacency (outbound), for the in-memory BFS floor and pair selection. */
export interface Csr {
  n: number
  offsets: Int32Array
  targets: Int32Array
}

export function buildCsr(g: GenGraph, reverse = false): Csr {
  const n = g.nodes.length
  const offsets = new Int32Array(n + 1)
  const from = reverse ? g.edgeEnd : g.edgeStart
  const to = reverse ? g.edgeStart : g.edgeEnd
  for (let i = 0; i < g.edgeCount; i++) offsets[from[i] + 1]++
  for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i]
  const fill = offsets.slice(0, n)
  const targets = new Int32Array(g.edgeCount)
  for (let i = 0; i < g.edgeCount; i++) targets[fill[from[i]]++] = to[i]
  return { n, offsets, targets }
}

/**
 * Breadth-first search from `s` to `t` over the outbound CSR; returns the path as node indexes or null.
 * `dist`/`prev` are caller-owned scratch arrays (reset here) so that repeated searches allocate nothing.
 */
export function bfsPath(csr: Csr, s: number, t: number, prev: Int32Array, queue: Int32Array): number[] | null {
  prev.fill(-2)
  let head = 0, tail = 0
  queue[tail++] = s
  prev[s] = -1
  while (head < tail) {
    const u = queue[head++]
    if (u === t) break
    for (let j = csr.offsets[u], end = csr.offsets[u + 1]; j < end; j++) {
      const v = csr.targets[j]
      if (prev[v] === -2) {
        prev[v] = u
        queue[tail++] = v
      }
    }
  }
  if (prev[t] === -2) return null
  const path: number[] = []
  for (let v = t; v !== -1; v = prev[v]) path.push(v)
  return path.reverse()
}

/** Object ids of the one-large-file payload start with this; no id of `generateGraph` does (SIDs, GUIDs, …). */
export const LARGE_FILE_ID_PREFIX = 'BENCHFILE-'

export interface LargeFilePayload {
  /** the OpenGraph document, ASCII only (so characters = bytes) */
  text: string
  bytes: number
  nodes: number
  edges: number
}

/**
 * One OpenGraph file of at most `maxBytes` bytes and a few hundred bytes short of it at most (the "a 20 MiB file
 * is ingested in one request"): an AD-like domain of users, computers and groups (≈ a quarter of the bytes),
 * then edges between them (MemberOf, AdminTo, HasSession, ACL edges) until the file is full. Every edge's
 * ends are nodes of the same file (matched by id), every (start, kind, end) is unique, and every object id
 * starts with LARGE_FILE_ID_PREFIX, so the file never collides with a generated graph. Deterministic: the
 * same (maxBytes, seed) gives the same text. Pure.
 */
export function largeFilePayload(o: { maxBytes: number; seed?: number }): LargeFilePayload {
  const seed = o.seed ?? 11
  const rnd = prng(seed + 7919)
  const domain = `BENCHFILE${seed}.LOCAL`
  const domainId = `${LARGE_FILE_ID_PREFIX}${seed}-DOMAIN`
  const head = '{"graph":{"nodes":['
  const middle = '],"edges":['
  const tail = ']}}'
  const parts: string[] = [head]
  let bytes = head.length + middle.length + tail.length
  let count = 0
  const push = (json: string) => {
    parts.push(count === 0 ? json : ',' + json)
    bytes += json.length + (count === 0 ? 0 : 1)
    count++
  }
  const ids: string[] = []
  const users: number[] = []
  const computers: number[] = []
  const groups: number[] = []
  const node = (id: string, kinds: string[], properties: Record<string, PropValue>) => {
    push(JSON.stringify({ id, kinds, properties: { objectid: id, domainsid: domainId, domain, ...properties } }))
    ids.push(id)
    return ids.length - 1
  }
  node(domainId, ['Domain', 'Base'], { name: domain, functionallevel: '2016', collected: true })
  const nodeBudget = o.maxBytes / 4
  for (let i = 0; bytes < nodeBudget; i++) {
    const id = `${LARGE_FILE_ID_PREFIX}${seed}-${String(i).padStart(7, '0')}`
    const r = i % 10
    if (r < 7) {
      users.push(node(id, ['User', 'Base'], {
        name: `USER${i}@${domain}`,
        enabled: rnd() < 0.9,
        hasspn: rnd() < 0.05,
        dontreqpreauth: rnd() < 0.01,
        pwdlastset: 1_700_000_000 + Math.floor(rnd() * 30_000_000),
        description: `Bench user ${i}, department ${Math.floor(rnd() * 40)}`,
      }))
    } else if (r < 9) {
      computers.push(node(id, ['Computer', 'Base'], {
        name: `HOST${i}.${domain}`,
        enabled: true,
        operatingsystem: rnd() < 0.8 ? 'Windows 11 Enterprise' : 'Windows Server 2022 Standard',
        unconstraineddelegation: false,
      }))
    } else {
      groups.push(node(id, ['Group', 'Base'], { name: `GROUP${i}@${domain}`, admincount: rnd() < 0.02 }))
    }
  }
  const nodes = count
  parts.push(middle)
  count = 0
  const pick = (a: number[]) => a[Math.floor(rnd() * a.length)]
  const principals = [...users, ...groups]
  const seen = new Set<number>()
  const kinds = ['MemberOf', 'AdminTo', 'HasSession', 'GenericAll', 'GenericWrite', 'WriteDacl', 'ForceChangePassword', 'AddMember']
  for (;;) {
    const k = Math.floor(rnd() * kinds.length)
    const kind = kinds[k]
    const [s, t] =
      kind === 'MemberOf' ? [rnd() < 0.8 ? pick(users) : pick(computers), pick(groups)]
        : kind === 'AdminTo' ? [pick(principals), pick(computers)]
          : kind === 'HasSession' ? [pick(computers), pick(users)]
            : kind === 'ForceChangePassword' ? [pick(principals), pick(users)]
              : kind === 'AddMember' ? [pick(principals), pick(groups)]
                : [pick(principals), Math.floor(rnd() * ids.length)]
    if (s === t) continue
    const key = (s * ids.length + t) * kinds.length + k
    if (seen.has(key)) continue
    const acl = k >= 3
    const json = JSON.stringify({ start: { value: ids[s] }, end: { value: ids[t] }, kind, ...(acl ? { properties: { isacl: true, isinherited: rnd() < 0.5 } } : {}) })
    const add = json.length + (count === 0 ? 0 : 1)
    // stop at the first edge that does not fit: edges are short, so the file ends within ~200 bytes of the limit
    if (bytes + add > o.maxBytes) break
    seen.add(key)
    push(json)
  }
  parts.push(tail)
  const text = parts.join('')
  return { text, bytes: text.length, nodes, edges: count }
}
