/**
 * Tier Zero: the rules that decide which nodes are "the crown jewels" (issue 6). Pure: plain values in,
 * a boolean out; the analysis applies it to every node and unit tests check every rule.
 *
 * A node is Tier Zero when ANY of these holds:
 *  0. an administrator's selector of the "Admin Tier Zero" asset group names its object id
 *     (`selectedTags` holds `admin_tier_0`: src/assetgroups, read by the analysis at the start of a run
 *     and by graph reads from the members that run committed);
 *  1. its `system_tags` contains the tag `admin_tier_0`, or it has BloodHound's kind `Tag_Tier_Zero` (BloodHound stores tags as one space-separated
 *     string, e.g. "admin_tier_0 owned"; an array of tags is accepted too). We match whole tags, never
 *     substrings, so a tag such as `admin_tier_0_candidate` does not count;
 *  2. its `isTierZero` property is boolean true (also the lower-case spelling `istierzero`, because
 *     collectors disagree on case). Only a real `true` counts (a JSON `true`, which SQLite's
 *     `json_extract` hands back as the integer 1): strings such as "false" must never promote a node;
 *  3. its PRIMARY kind is `Domain` or `AZTenant` (the first of its kinds, as the graph stores it);
 *  4. it is an Active Directory object (one of its kinds is an AD node kind) but not a computer's local
 *     group or user (ADLocalGroup / ADLocalUser: `<computer SID>-544` is a local Administrators group), whose object id ends with
 *     `-512` (Domain Admins), `-516` (Domain Controllers), `-518` (Schema Admins), `-519` (Enterprise
 *     Admins) or `-544` (Administrators). The suffix is compared on the object id exactly as stored
 *     (SIDs such as `S-1-5-21-…-512`, or BloodHound's `CORP.LOCAL-S-1-5-32-544`);
 *  5. it is an `AZRole` whose role template id is Global Administrator or Privileged Role Administrator.
 *     The template id comes from the `templateid` property; AzureHound's role object ids have the form
 *     `<templateid>@<tenantid>`, so the object id's part before `@` is accepted as well. GUIDs are
 *     compared case-insensitively.
 *
 * Why the rules are this strict: a false positive silently hides findings (edges INTO a Tier Zero node
 * from another Tier Zero node are not findings) and a false negative drops them, so every rule matches
 * exactly what the issue names and nothing "close to" it.
 */

export const AD_NODE_KINDS: ReadonlySet<string> = new Set([
  'Base',
  'User',
  'Computer',
  'Group',
  'GPO',
  'OU',
  'Container',
  'Domain',
  'ADLocalGroup',
  'ADLocalUser',
  'AIACA',
  'RootCA',
  'EnterpriseCA',
  'NTAuthStore',
  'CertTemplate',
  'IssuancePolicy',
])

export const TIER_ZERO_RID_SUFFIXES = ['-512', '-516', '-518', '-519', '-544'] as const

/** Azure AD role template ids (well-known, identical in every tenant). */
export const GLOBAL_ADMINISTRATOR_TEMPLATE_ID = '62e90394-69f5-4237-9190-012177145e10'
export const PRIVILEGED_ROLE_ADMINISTRATOR_TEMPLATE_ID = 'e8611ab8-c189-46e8-94e1-60213ab1f814'
const TIER_ZERO_ROLE_TEMPLATES: ReadonlySet<string> = new Set([GLOBAL_ADMINISTRATOR_TEMPLATE_ID, PRIVILEGED_ROLE_ADMINISTRATOR_TEMPLATE_ID])

/** What Tier Zero (and the list findings) need to know about a node. */
export interface NodeFacts {
  objectid: string
  /** primary kind */
  kind: string
  kinds: readonly string[]
  /** raw `system_tags` value (string, array, or anything else) */
  systemTags?: unknown
  /** raw `isTierZero` / `istierzero` values */
  isTierZero?: unknown
  enabled?: unknown
  hasspn?: unknown
  dontreqpreauth?: unknown
  templateid?: unknown
  /** tags of the asset groups whose selectors name this node (e.g. ["admin_tier_0"]) */
  selectedTags?: readonly string[]
}

/** JSON `true` (or SQLite's 1 for it). Nothing else. */
export function isTrue(v: unknown): boolean {
  return v === true || v === 1
}

export const TIER_ZERO_TAG = 'admin_tier_0'
export const OWNED_TAG = 'owned'

/** The whole tags of a raw `system_tags` value (space-separated string, JSON array text, or array). */
export function tagsOf(systemTags: unknown): string[] {
  if (typeof systemTags === 'string') {
    const s = systemTags.trim()
    if (s.startsWith('[')) {
      try {
        return tagsOf(JSON.parse(s))
      } catch {
        /* not JSON: the space-separated form */
      }
    }
    return s.split(/\s+/).filter(Boolean)
  }
  if (Array.isArray(systemTags)) return systemTags.filter((t): t is string => typeof t === 'string').map((t) => t.trim()).filter(Boolean)
  return []
}

/**
 * Owned ("Owned" asset group, BloodHound's `owned` tag / `Tag_Owned` kind): the node has the kind
 * `Tag_Owned`, the whole tag `owned` in its system_tags, or a selector of the Owned group names it.
 */
export function isOwned(f: Pick<NodeFacts, 'kinds' | 'systemTags' | 'selectedTags'>): boolean {
  return f.kinds.includes('Tag_Owned') || tagsOf(f.systemTags).includes(OWNED_TAG) || (f.selectedTags?.includes(OWNED_TAG) ?? false)
}

export function hasTierZeroTag(systemTags: unknown): boolean {
  if (typeof systemTags === 'string') {
    // json_extract returns arrays as JSON text: accept `["admin_tier_0"]` as well as "admin_tier_0 owned".
    const s = systemTags.trim()
    if (s.startsWith('[')) {
      try {
        return hasTierZeroTag(JSON.parse(s))
      } catch {
        /* not JSON: fall through to the space-separated form */
      }
    }
    return s.split(/\s+/).includes('admin_tier_0')
  }
  if (Array.isArray(systemTags)) return systemTags.some((t) => typeof t === 'string' && t.trim() === 'admin_tier_0')
  return false
}

function roleTemplateId(f: NodeFacts): string | null {
  if (typeof f.templateid === 'string' && f.templateid) return f.templateid.toLowerCase()
  const at = f.objectid.indexOf('@')
  return at > 0 ? f.objectid.slice(0, at).toLowerCase() : f.objectid.toLowerCase()
}

export function isAdObject(kinds: readonly string[]): boolean {
  for (const k of kinds) if (AD_NODE_KINDS.has(k)) return true
  return false
}

/**
 * A computer's own local group or user (SharpHound's `<computer SID>-544` is that computer's local
 * Administrators group, not the domain's): never Tier Zero by RID, only the domain's groups are.
 */
const LOCAL_PRINCIPAL_KINDS: ReadonlySet<string> = new Set(['ADLocalGroup', 'ADLocalUser', 'LocalGroup', 'LocalUser'])

export function isLocalPrincipal(kinds: readonly string[]): boolean {
  for (const k of kinds) if (LOCAL_PRINCIPAL_KINDS.has(k)) return true
  return false
}

export type TierZeroReason = 'selector' | 'system_tags' | 'isTierZero' | 'primary_kind' | 'ad_rid' | 'az_role'

/** Which rule makes the node Tier Zero (the first that matches), or null. */
export function tierZeroReason(f: NodeFacts): TierZeroReason | null {
  if (f.selectedTags?.includes(TIER_ZERO_TAG)) return 'selector'
  if (hasTierZeroTag(f.systemTags) || f.kinds.includes('Tag_Tier_Zero')) return 'system_tags'
  if (isTrue(f.isTierZero)) return 'isTierZero'
  if (f.kind === 'Domain' || f.kind === 'AZTenant') return 'primary_kind'
  if (isAdObject(f.kinds) && !isLocalPrincipal(f.kinds) && TIER_ZERO_RID_SUFFIXES.some((s) => f.objectid.endsWith(s))) return 'ad_rid'
  if (f.kinds.includes('AZRole')) {
    const t = roleTemplateId(f)
    if (t && TIER_ZERO_ROLE_TEMPLATES.has(t)) return 'az_role'
  }
  return null
}

export function isTierZero(f: NodeFacts): boolean {
  return tierZeroReason(f) !== null
}
