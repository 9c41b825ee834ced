/**
 * BloodHound's older graph format (package bloodhoundgraph), which `GET /api/v2/pathfinding` and
 * `GET /api/v2/graph-search` still answer with: one flat object whose keys are node ids (a node) and
 * `rel_<relationship id>` (a relationship). Pure.
 *
 * Node: `{data: {...properties, objectid, system_tags?, level?, nodetype}, size: 1, border: {color}, label: {text,
 * backgroundColor, fontSize, center}, fontIcon: {text}, color}`; `level` 0 marks a Tier Zero node (BloodHound's
 * legacy level), `nodetype` is the primary kind. The icon and colour are the kind's display icon: the installed
 * extension's (`icon`, `color` of a display kind), else BloodHound's built-in one below, else BloodHound's
 * unknown-kind icon (`fas fa-question`, `#EEE`).
 * Relationship: `{data: {...properties}, color: "3a5464", label: {text: kind}, end2: {arrow: true}, id1, id2}`.
 */
import type { KindCatalog } from '../extensions/catalog'
import { isTierZero, props, type NodeRecord } from './present'
import type { EdgeRecord } from './graph.store'

/** Font Awesome icon and colour of BloodHound's built-in display kinds. */
const BUILTIN_ICONS: Record<string, [icon: string, color: string]> = {
  User: ['user', '#17E625'],
  Group: ['users', '#DBE617'],
  Computer: ['desktop', '#E67873'],
  Domain: ['globe', '#17E6B9'],
  GPO: ['list', '#998EFD'],
  OU: ['sitemap', '#FFAA00'],
  Container: ['box', '#F79A78'],
  AIACA: ['arrows-left-right-to-line', '#9769F0'],
  RootCA: ['landmark', '#6968E8'],
  EnterpriseCA: ['building', '#4696E9'],
  NTAuthStore: ['store', '#D575F5'],
  CertTemplate: ['id-card', '#B153F3'],
  IssuancePolicy: ['clipboard-check', '#99B2DD'],
  AZUser: ['user', '#34D2EB'],
  AZGroup: ['users', '#F57C9B'],
  AZTenant: ['cloud', '#54F2F2'],
  AZSubscription: ['key', '#D2CCA1'],
  AZResourceGroup: ['cube', '#89BD9E'],
  AZVM: ['desktop', '#F9ADA0'],
  AZDevice: ['desktop', '#B18FCF'],
  AZKeyVault: ['lock', '#ED658C'],
  AZApp: ['window-restore', '#03FC84'],
  AZServicePrincipal: ['robot', '#C1D6D6'],
  AZRole: ['clipboard-list', '#ED8537'],
  AZManagementGroup: ['cube', '#BE2EDD'],
}

const UNKNOWN_ICON = 'fas fa-question'
const UNKNOWN_COLOR = '#EEE'
const RELATIONSHIP_COLOR = '3a5464'

function icon(kind: string, catalog: KindCatalog): { text: string; color: string } {
  const info = catalog.nodeKindInfo?.get(kind)
  if (info?.isDisplayKind && info.icon) return { text: `fas fa-${info.icon}`, color: info.color ?? UNKNOWN_COLOR }
  const builtin = BUILTIN_ICONS[kind]
  if (builtin) return { text: `fas fa-${builtin[0]}`, color: builtin[1] }
  return { text: UNKNOWN_ICON, color: UNKNOWN_COLOR }
}

export function legacyNode(n: NodeRecord, catalog: KindCatalog) {
  const data: Record<string, unknown> = { ...props(n) }
  if (isTierZero(n)) data.level = 0
  data.nodetype = n.kind
  const i = icon(n.kind, catalog)
  return {
    data,
    size: 1,
    border: { color: 'black' },
    label: { text: n.name ?? n.objectid, backgroundColor: 'rgba(255,255,255,0.9)', fontSize: 14, center: true },
    fontIcon: { text: i.text },
    color: i.color,
  }
}

export function legacyRelationship(e: EdgeRecord) {
  return {
    data: e.properties,
    color: RELATIONSHIP_COLOR,
    label: { text: e.kind },
    end2: { arrow: true },
    id1: String(e.from),
    id2: String(e.to),
  }
}

/** The flat map: relationships under `rel_<id>`, nodes under their id. */
export function legacyGraph(nodes: NodeRecord[], edges: EdgeRecord[], catalog: KindCatalog): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const e of edges) out[`rel_${e.id}`] = legacyRelationship(e)
  for (const n of nodes) out[String(n.id)] = legacyNode(n, catalog)
  return out
}
