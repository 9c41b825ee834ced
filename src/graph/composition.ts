/**
 * What a post-processed (composite) relationship is made of, for `GET /api/v2/graphs/edge-composition`.
 *
 * EdgeHound's post-processing (src/collectors/adcs.ts, ntlm.store.ts) derives each composite relationship
 * from ingested ones of known kinds; its composition is the set of those ingested relationships that join
 * the composite's two ends. Each composite kind names the relationship kinds its rule reads (the rules'
 * doc comments list them) and the shape of the walk:
 *
 * - `walks` (GoldenCert and the ADCS ESC relationships): every relationship on a walk of at most
 *   `maxLength` relationships from the source to the target over the kinds, found by a breadth-first search
 *   from both ends (`walkUnion`): a relationship u→v lies on such a walk exactly when
 *   dist(source, u) + 1 + dist(v, target) ≤ maxLength.
 * - `admins` (CoerceAndRelayNTLMToSMB, drawn from Authenticated Users, which is not on the walk): the
 *   relationships through which computers hold AdminTo on the target: AdminTo into the target and the
 *   MemberOf / MemberOfLocalGroup chains below its holders, kept where they start from a computer
 *   (`adminUnion`).
 *
 * The walks follow the relationship kinds of the rule, not every property check of it (a template's flags,
 * a CA's settings): they show the relationships that make the composite up, as the rule found them when
 * it derived it. Pure: the data access is injected (the same `Expand` as path search), and every search is
 * bounded by `maxEdges` fetched relationships (`CompositionTooLarge` past it).
 */
import type { Expand, PathEdge } from './path'

const ENROLL = ['MemberOf', 'Enroll', 'GenericAll', 'AllExtendedRights']
const CERT_CHAIN = ['PublishedTo', 'IssuedSignedBy', 'EnterpriseCAFor', 'RootCAFor', 'TrustedForNTAuth', 'NTAuthStoreFor']
const TEMPLATE_CONTROL = ['GenericWrite', 'Owns', 'OwnsLimitedRights', 'WriteOwner', 'WriteOwnerLimitedRights', 'WriteDacl']

export type CompositionRule = { shape: 'walks'; kinds: readonly string[] } | { shape: 'admins' }

/** Composite kind → how its composition is found. Kinds not listed here have no composition (an empty graph). */
export const COMPOSITIONS: ReadonlyMap<string, CompositionRule> = new Map<string, CompositionRule>([
  ['GoldenCert', { shape: 'walks', kinds: ['HostsCAService', 'IssuedSignedBy', 'EnterpriseCAFor', 'RootCAFor', 'TrustedForNTAuth', 'NTAuthStoreFor'] }],
  ['ADCSESC1', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN] }],
  ['ADCSESC3', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN, 'EnrollOnBehalfOf', 'DelegatedEnrollmentAgent'] }],
  ['ADCSESC4', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN, ...TEMPLATE_CONTROL, 'WritePKINameFlag', 'WritePKIEnrollmentFlag'] }],
  ['ADCSESC6a', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN] }],
  ['ADCSESC6b', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN] }],
  ['ADCSESC9a', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN, ...TEMPLATE_CONTROL] }],
  ['ADCSESC9b', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN, ...TEMPLATE_CONTROL] }],
  ['ADCSESC10a', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN, ...TEMPLATE_CONTROL] }],
  ['ADCSESC10b', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN, ...TEMPLATE_CONTROL] }],
  ['ADCSESC13', { shape: 'walks', kinds: [...ENROLL, 'ExtendedByPolicy', 'OIDGroupLink'] }],
  ['ADCSESC16', { shape: 'walks', kinds: [...ENROLL, ...CERT_CHAIN] }],
  ['CoerceAndRelayNTLMToSMB', { shape: 'admins' }],
])

/** The NTLM relay relationships, whose relay targets `GET /api/v2/graphs/relay-targets` lists. */
export const RELAY_KINDS = ['CoerceAndRelayNTLMToSMB', 'CoerceAndRelayNTLMToLDAP', 'CoerceAndRelayNTLMToLDAPS', 'CoerceAndRelayNTLMToADCS'] as const

export interface CompositionLimits {
  /** longest walk (relationships) */
  maxLength: number
  /** relationships fetched over the whole search */
  maxEdges: number
}

export class CompositionTooLarge extends Error {}

const key = (e: PathEdge) => `${e.from}|${e.kind}|${e.to}`

/** Breadth-first distances from `root` (`out`: along relationships, `in`: against them), with every edge met. */
async function bfs(root: number, dir: 'out' | 'in', expand: Expand, limits: CompositionLimits, budget: { fetched: number }) {
  const dist = new Map<number, number>([[root, 0]])
  const edges: PathEdge[] = []
  let frontier = [root]
  for (let level = 1; level <= limits.maxLength && frontier.length > 0; level++) {
    const found = await expand(frontier, dir, limits.maxEdges - budget.fetched)
    budget.fetched += found.length
    if (budget.fetched > limits.maxEdges) throw new CompositionTooLarge(`more than ${limits.maxEdges} relationships`)
    const next: number[] = []
    for (const e of found) {
      edges.push(e)
      const v = dir === 'out' ? e.to : e.from
      if (!dist.has(v)) {
        dist.set(v, level)
        next.push(v)
      }
    }
    frontier = next
  }
  return { dist, edges }
}

/** Every relationship on a walk of at most `maxLength` from `source` to `target` (see above), each once. */
export async function walkUnion(source: number, target: number, expand: Expand, limits: CompositionLimits): Promise<PathEdge[]> {
  const budget = { fetched: 0 }
  const fwd = await bfs(source, 'out', expand, limits, budget)
  if (!fwd.dist.has(target)) return []
  const back = await bfs(target, 'in', expand, limits, budget)
  const out = new Map<string, PathEdge>()
  for (const e of fwd.edges) {
    const a = fwd.dist.get(e.from)
    const b = back.dist.get(e.to)
    if (a !== undefined && b !== undefined && a + 1 + b <= limits.maxLength) out.set(key(e), e)
  }
  return [...out.values()]
}

/**
 * The relationships through which computers hold AdminTo on `target`: a search against the relationships
 * from the target over AdminTo, MemberOf and MemberOfLocalGroup (`expand` is given those kinds), then the
 * edges kept that lie below a computer (`isComputer`), walked from the computers towards the target.
 */
export async function adminUnion(
  target: number,
  expand: Expand,
  isComputer: (ids: number[]) => Promise<Set<number>>,
  limits: CompositionLimits,
): Promise<PathEdge[]> {
  const back = await bfs(target, 'in', expand, limits, { fetched: 0 })
  // only edges that step one level closer to the target (the search's tree and its equal-length siblings)
  const toward = back.edges.filter((e) => back.dist.get(e.from) === (back.dist.get(e.to) ?? -2) + 1)
  const computers = await isComputer([...new Set(toward.map((e) => e.from))])
  const good = new Set<number>(computers)
  const out = new Map<string, PathEdge>()
  // deepest first, so a member's good standing reaches the groups it belongs to before they are looked at
  const byDepth = [...toward].sort((a, b) => (back.dist.get(b.from) ?? 0) - (back.dist.get(a.from) ?? 0))
  for (const e of byDepth) {
    if (good.has(e.from) && e.from !== target) {
      out.set(key(e), e)
      good.add(e.to)
    }
  }
  return [...out.values()]
}
