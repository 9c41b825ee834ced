/**
 * How a node kind looks: a colour and a glyph (the console's own simple shapes, SVG path data in a 24×24 box,
 * drawn with Path2D on the graph and as inline <svg> in lists and panels). Built-in Active Directory and Azure
 * kinds have fixed ones; the node kinds of installed graph extensions bring their own colour and icon name
 * (`icon`, a short name such as "user" or "building-columns", matched here to the nearest glyph by its words);
 * any other kind gets a stable colour from its name and the generic glyph. Pure; unit-tested.
 */

export type GlyphName =
  | 'user' | 'group' | 'computer' | 'domain' | 'policy' | 'tree' | 'box' | 'certificate' | 'key' | 'cloud' | 'badge'
  | 'window' | 'robot' | 'server' | 'cube' | 'bolt' | 'lock' | 'gear' | 'store' | 'generic'

/** Our own glyphs: filled shapes, even-odd rule, 24×24. */
export const GLYPHS: Record<GlyphName, string> = {
  user: 'M12 3a4.5 4.5 0 1 1 0 9a4.5 4.5 0 1 1 0-9z M3.5 21c0-4.6 3.8-7.5 8.5-7.5s8.5 2.9 8.5 7.5z',
  group: 'M8 4a3.5 3.5 0 1 1 0 7a3.5 3.5 0 1 1 0-7z M16.5 5a3 3 0 1 1 0 6a3 3 0 1 1 0-6z M1.5 20c0-3.9 2.9-6.5 6.5-6.5s6.5 2.6 6.5 6.5z M15.5 20c0-2.4-.8-4.4-2.2-5.8c1-.6 2-.9 3.2-.9c3.3 0 6 2.3 6 6.7z',
  computer: 'M2.5 4h19v12.5h-19z M4.5 6v8.5h15V6z M9 18.5h6v2H9z',
  domain: 'M12 2a10 10 0 1 1 0 20a10 10 0 1 1 0-20z M12 4a8 8 0 1 0 0 16a8 8 0 1 0 0-16z M11 3h2v18h-2z M3 11h18v2H3z',
  policy: 'M5 2.5h14v19H5z M8 7v2h8V7z M8 11v2h8v-2z M8 15v2h5v-2z',
  tree: 'M9.5 2h5v4.5h-5z M11.25 6.5h1.5v4h-1.5z M3.5 10.5h17V12h-17z M3.5 12h1.5v3H3.5z M11.25 12h1.5v3h-1.5z M19 12h1.5v3H19z M1.5 15h5.5v5H1.5z M9.25 15h5.5v5h-5.5z M17 15h5.5v5H17z',
  box: 'M12 2.5l9 4v11l-9 4l-9-4v-11z M5 8.2v8l6 2.7v-8z',
  certificate: 'M3 3.5h18v13H3z M5 5.5v9h14v-9z M7 8h10v1.5H7z M7 11h6v1.5H7z M10 16.5h4l2 5l-4-2l-4 2z',
  key: 'M7.5 6.5a5 5 0 1 1 0 10a5 5 0 1 1 0-10z M7.5 9.5a2 2 0 1 0 0 4a2 2 0 1 0 0-4z M12 10.5h10v2.5h-2.5v3h-2.5v-3H12z',
  cloud: 'M6.5 19h11a4.5 4.5 0 0 0 .6-8.96A6.5 6.5 0 0 0 5.6 9.2A5 5 0 0 0 6.5 19z',
  badge: 'M12 2l2.9 6.3l6.9.7l-5.2 4.6l1.5 6.8L12 16.9l-6.1 3.5l1.5-6.8L2.2 9l6.9-.7z',
  window: 'M2.5 3.5h19v17h-19z M4.5 8v10.5h15V8z M5 5h2v1.5H5z M8 5h2v1.5H8z',
  robot: 'M11 2h2v3h-2z M5 5.5h14V17H5z M8 9v2.5h2.5V9z M13.5 9v2.5H16V9z M9 13.5V15h6v-1.5z M2 9h2v5H2z M20 9h2v5h-2z M8 18h8v3.5H8z',
  server: 'M3 3h18v5H3z M5 5v1h2V5z M3 9.5h18v5H3z M5 11.5v1h2v-1z M3 16h18v5H3z M5 18v1h2v-1z',
  cube: 'M12 2l9 5v10l-9 5l-9-5V7z M12 4.3L5.2 8.1L12 11.9l6.8-3.8z',
  bolt: 'M13.5 1.5L4 13.5h6.5l-1.5 9l10-12.5h-6.5z',
  lock: 'M5 10h14v12H5z M7.5 10V7a4.5 4.5 0 0 1 9 0v3h-2.5V7a2 2 0 0 0-4 0v3z M11 14h2v4h-2z',
  gear: 'M10 1.5h4l.6 3l2.2 1.3l2.9-1l2 3.5l-2.3 2v2.5l2.3 2l-2 3.5l-2.9-1l-2.2 1.3l-.6 3h-4l-.6-3l-2.2-1.3l-2.9 1l-2-3.5l2.3-2v-2.5l-2.3-2l2-3.5l2.9 1l2.2-1.3z M12 8.5a3.5 3.5 0 1 0 0 7a3.5 3.5 0 1 0 0-7z',
  store: 'M3 3h18l1 6H2z M4 10.5h16V21H4z M9 14v7h6v-7z',
  generic: 'M12 2.5l9.5 9.5l-9.5 9.5L2.5 12z M12 6.5L6.5 12l5.5 5.5l5.5-5.5z',
}

export interface KindStyle {
  colour: string
  glyph: GlyphName
}

const BUILTIN: Record<string, KindStyle> = {
  User: { colour: '#3f8efc', glyph: 'user' },
  Group: { colour: '#e0b422', glyph: 'group' },
  Computer: { colour: '#e05a50', glyph: 'computer' },
  Domain: { colour: '#2bb673', glyph: 'domain' },
  GPO: { colour: '#8e6cf0', glyph: 'policy' },
  OU: { colour: '#f39a35', glyph: 'tree' },
  Container: { colour: '#b07d62', glyph: 'box' },
  AIACA: { colour: '#7d5fd6', glyph: 'certificate' },
  RootCA: { colour: '#5a61d6', glyph: 'certificate' },
  EnterpriseCA: { colour: '#3c7dd9', glyph: 'certificate' },
  NTAuthStore: { colour: '#c266e0', glyph: 'store' },
  CertTemplate: { colour: '#a24fd9', glyph: 'policy' },
  IssuancePolicy: { colour: '#7f9ccc', glyph: 'policy' },
  LocalGroup: { colour: '#c9a227', glyph: 'group' },
  LocalUser: { colour: '#5b9cf5', glyph: 'user' },
  AZUser: { colour: '#2ab7d6', glyph: 'user' },
  AZGroup: { colour: '#ea6f93', glyph: 'group' },
  AZTenant: { colour: '#20c5c5', glyph: 'cloud' },
  AZSubscription: { colour: '#b9ae6c', glyph: 'key' },
  AZResourceGroup: { colour: '#6fa988', glyph: 'cube' },
  AZManagementGroup: { colour: '#a77fc4', glyph: 'tree' },
  AZVM: { colour: '#e88e7e', glyph: 'computer' },
  AZDevice: { colour: '#a07cc0', glyph: 'computer' },
  AZVMScaleSet: { colour: '#2a78c2', glyph: 'server' },
  AZWebApp: { colour: '#3d86d3', glyph: 'window' },
  AZLogicApp: { colour: '#86c43a', glyph: 'tree' },
  AZFunctionApp: { colour: '#e3a532', glyph: 'bolt' },
  AZAutomationAccount: { colour: '#d9a03b', glyph: 'gear' },
  AZContainerRegistry: { colour: '#2a7fc0', glyph: 'box' },
  AZManagedCluster: { colour: '#3a62c9', glyph: 'cube' },
  AZKeyVault: { colour: '#d9587d', glyph: 'lock' },
  AZApp: { colour: '#22c67a', glyph: 'window' },
  AZServicePrincipal: { colour: '#8fb3b3', glyph: 'robot' },
  AZRole: { colour: '#e07a34', glyph: 'badge' },
}

/** An extension's icon name → the nearest glyph, by the words in the name (first rule that matches). */
const ICON_WORDS: [RegExp, GlyphName][] = [
  [/users|group|people/, 'group'],
  [/user|person|id-badge|address-card/, 'user'],
  [/desktop|laptop|computer|display|tablet|mobile/, 'computer'],
  [/server|database|hard-drive|hdd/, 'server'],
  [/cloud/, 'cloud'],
  [/key/, 'key'],
  [/lock|shield|vault/, 'lock'],
  [/globe|earth|network|domain/, 'domain'],
  [/sitemap|diagram|tree|folder/, 'tree'],
  [/certificate|landmark|building|award|stamp/, 'certificate'],
  [/robot|microchip/, 'robot'],
  [/bolt|lightning|function/, 'bolt'],
  [/gear|cog|wrench|tools/, 'gear'],
  [/window|code|app|browser|terminal/, 'window'],
  [/cube|layer|box|archive|package|container/, 'cube'],
  [/star|crown|badge|medal|gem/, 'badge'],
  [/file|list|scroll|clipboard|book|policy/, 'policy'],
  [/store|shop/, 'store'],
]

export function glyphForIcon(icon: string | null | undefined): GlyphName {
  const name = (icon ?? '').toLowerCase()
  if (!name) return 'generic'
  for (const [re, g] of ICON_WORDS) if (re.test(name)) return g
  return 'generic'
}

/** A stable colour for a kind without one: from its name. */
export function hashColour(kind: string): string {
  let h = 0
  for (let i = 0; i < kind.length; i++) h = (h * 31 + kind.charCodeAt(i)) >>> 0
  return `hsl(${h % 360}, 55%, 50%)`
}

/** An installed extension's node kind as its document declares it. */
export interface ExtensionNodeKind {
  name: string
  icon?: string | null
  color?: string | null
}

/**
 * The style table, from the weakest to the strongest: the built-in kinds, then the node kinds of installed
 * extensions (their colour and icon when they give them; an extension that redefines a built-in kind's look
 * wins), then the custom node kinds registered through `/api/v2/custom-nodes` (BloodHound's per-kind icon and
 * colour, as OpenGraph collectors register them), which win over both: they are the explicit per-kind
 * setting, and deleting one gives the kind its extension's (or built-in) look back (docs/extensions.md).
 */
export function styleTable(extensionKinds: readonly ExtensionNodeKind[] = [], customKinds: readonly ExtensionNodeKind[] = []): Map<string, KindStyle> {
  const out = new Map<string, KindStyle>(Object.entries(BUILTIN))
  for (const k of [...extensionKinds, ...customKinds]) {
    const base = out.get(k.name)
    const colour = k.color && /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(k.color) ? k.color : (base?.colour ?? hashColour(k.name))
    const glyph = k.icon ? glyphForIcon(k.icon) : (base?.glyph ?? 'generic')
    out.set(k.name, { colour, glyph })
  }
  return out
}

const DEFAULT_TABLE = styleTable()

/** A custom node kind as `GET /api/v2/custom-nodes` answers it (the part read here). */
export interface CustomNodeKindLike {
  kindName: string
  config: { icon: { name: string; color: string } }
}

/** `GET /api/v2/custom-nodes`'s kinds as style entries (a Font Awesome icon name and a colour each). */
export function customKindsOf(list: readonly CustomNodeKindLike[]): ExtensionNodeKind[] {
  return list.map((k) => ({ name: k.kindName, icon: k.config.icon.name, color: k.config.icon.color }))
}

/**
 * Explore's style table from its two sources, each fetched on its own: the extensions' node kinds and the custom
 * node kinds (`GET /api/v2/custom-nodes`). A source that fails (an older server without custom-nodes, a
 * permission) counts as empty, so the other's styles still apply.
 */
export async function loadStyleTable(sources: {
  extensionKinds: () => Promise<readonly ExtensionNodeKind[]>
  customNodeKinds: () => Promise<{ data: readonly CustomNodeKindLike[] }>
}): Promise<Map<string, KindStyle>> {
  const [ext, custom] = await Promise.all([
    sources.extensionKinds().catch(() => []),
    sources.customNodeKinds().then((r) => customKindsOf(r.data), () => []),
  ])
  return styleTable(ext, custom)
}

/** The style of a node: its first kind with a style (primary kind first), else one made from its kind's name. */
export function styleOf(kinds: string | readonly string[], table: Map<string, KindStyle> = DEFAULT_TABLE): KindStyle {
  const list = typeof kinds === 'string' ? [kinds] : kinds
  for (const k of list) {
    const s = table.get(k)
    if (s) return s
  }
  return { colour: hashColour(list[0] ?? 'Unknown'), glyph: 'generic' }
}
