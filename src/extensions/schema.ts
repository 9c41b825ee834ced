import { z } from 'zod'

/**
 * The graph extension document (spec: "Graph extension (request payload of the upsert operation)"), as
 * zod shapes. Shapes decide types, required members, lengths and character sets; the cross-member rules
 * (namespace prefixes, uniqueness, references, collisions with installed extensions, Markdown safety) live
 * in rules.ts. Both run on every payload so that a client sees every violation in one answer.
 *
 * Decisions where the spec and the issue are silent (docs/extensions.md):
 *  - Unknown members are rejected (strict objects): a misspelt `is_traversible` would otherwise vanish
 *    silently and change what paths exist.
 *  - `null` in an optional member means "absent" (Go clients and Python `None` send it); it reads back absent.
 *  - `""` for `icon` or `color` means "none" (BloodHound accepts it) and reads back as `""`.
 *  - Missing `relationship_kinds`, `environments` or `relationship_findings` mean "none" and read back as `[]`.
 */

export const LIMITS = {
  extensionName: 128,
  displayName: 256,
  version: 64,
  namespace: 32,
  kindName: 128,
  description: 4096,
  icon: 64,
  shortText: 4096,
  longText: 32768,
  nodeKinds: 1000,
  relationshipKinds: 1000,
  environments: 100,
  principalKinds: 1000,
  findings: 1000,
} as const

/** Kind names are graph labels: ingest accepts `^[A-Za-z0-9_]+$` for edge kinds, so every kind is held to it. */
export const KIND_NAME = /^[A-Za-z0-9_]+$/
/** Namespaces: a letter, then letters and digits, optionally in `_`-separated groups (`GH`, `Okta`, `AZ_DevOps`). */
export const NAMESPACE = /^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*$/
export const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/
/** A short identifier such as a Font Awesome icon name (`user`, `building-columns`). */
export const ICON = /^[A-Za-z0-9][A-Za-z0-9_-]*$/
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

const text = (max: number, what = 'text') =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !CONTROL.test(s.replace(/[\n\r\t]/g, '')), `${what} must not contain control characters`)

/** A required name: non-blank, no surrounding whitespace (it is a key), no control characters. */
const name = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => s.trim().length > 0, 'must not be blank')
    .refine((s) => s.trim() === s || s.trim().length === 0, 'must not start or end with whitespace')
    .refine((s) => !CONTROL.test(s), 'must not contain control characters')

const kindName = (what: string) =>
  z
    .string()
    .max(LIMITS.kindName, `must be at most ${LIMITS.kindName} characters`)
    .refine((s) => s.length > 0, 'must not be blank')
    .refine((s) => s.length === 0 || KIND_NAME.test(s), `${what} may contain only letters, digits and underscores`)

/** Optional member: absent or null (both stored as absent) or a value of the shape. */
const optional = <T extends z.ZodType>(t: T) =>
  t
    .nullish()
    .transform((v) => (v === null ? undefined : v))
    .optional()

export const SchemaInfo = z.strictObject({
  name: name(LIMITS.extensionName),
  display_name: optional(text(LIMITS.displayName)),
  version: z
    .string()
    .max(LIMITS.version, `must be at most ${LIMITS.version} characters`)
    .refine((s) => s.trim().length > 0, 'must not be blank'),
  namespace: z
    .string()
    .max(LIMITS.namespace, `must be at most ${LIMITS.namespace} characters`)
    .refine((s) => s.trim().length > 0, 'must not be blank')
    .refine(
      (s) => s.trim().length === 0 || NAMESPACE.test(s),
      'must start with a letter and contain only letters, digits and single underscores between them',
    ),
})

export const NodeKind = z.strictObject({
  name: kindName('a node kind name'),
  display_name: optional(text(LIMITS.displayName)),
  description: optional(text(LIMITS.description)),
  is_display_kind: optional(z.boolean()),
  icon: optional(
    z
      .string()
      .max(LIMITS.icon, `must be at most ${LIMITS.icon} characters`)
      .refine((s) => s === '' || ICON.test(s), 'must be a short identifier such as "user" or "building-columns" (letters, digits, "-" and "_")'),
  ),
  color: optional(z.string().refine((s) => s === '' || HEX_COLOR.test(s), 'must be a hex colour of the form #RGB or #RRGGBB')),
})

export const RelationshipKind = z.strictObject({
  name: kindName('a relationship kind name'),
  description: optional(text(LIMITS.description)),
  is_traversable: z.boolean(),
})

export const Environment = z.strictObject({
  environment_kind: kindName('an environment kind'),
  source_kind: z
    .string()
    .max(LIMITS.kindName, `must be at most ${LIMITS.kindName} characters`)
    .refine((s) => s.trim().length > 0, 'must not be blank')
    .refine((s) => s.trim().length === 0 || KIND_NAME.test(s), 'a source kind may contain only letters, digits and underscores'),
  principal_kinds: z.array(kindName('a principal kind')).max(LIMITS.principalKinds, `at most ${LIMITS.principalKinds} principal kinds`),
})

const remediationText = (max: number) =>
  text(max, 'remediation text').refine((s) => s.trim().length > 0, 'must not be blank')

export const Remediation = z.strictObject({
  short_description: remediationText(LIMITS.shortText),
  long_description: remediationText(LIMITS.longText),
  short_remediation: remediationText(LIMITS.shortText),
  long_remediation: remediationText(LIMITS.longText),
})

export const RelationshipFinding = z.strictObject({
  name: kindName('a relationship finding name'),
  display_name: optional(text(LIMITS.displayName)),
  relationship_kind: kindName('a relationship kind'),
  environment_kind: kindName('an environment kind'),
  remediation: Remediation,
})

const list = <T extends z.ZodType>(item: T, max: number, what: string) =>
  z
    .array(item)
    .max(max, `at most ${max} ${what} are allowed`)
    .nullish()
    .transform((v) => v ?? [])

export const ExtensionDocumentSchema = z
  .strictObject({
    schema: SchemaInfo,
    node_kinds: z.array(NodeKind).min(1, 'at least one node kind is required').max(LIMITS.nodeKinds, `at most ${LIMITS.nodeKinds} node kinds are allowed`),
    relationship_kinds: list(RelationshipKind, LIMITS.relationshipKinds, 'relationship kinds'),
    environments: list(Environment, LIMITS.environments, 'environments'),
    relationship_findings: list(RelationshipFinding, LIMITS.findings, 'relationship findings'),
  })
  .meta({ description: 'A graph extension: node and relationship kinds, environments and relationship findings' })

export type ExtensionDocument = z.output<typeof ExtensionDocumentSchema>
/** What a client may send (optional arrays may be left out, optional members may be null). */
export type ExtensionDocumentInput = z.input<typeof ExtensionDocumentSchema>
export type NodeKindDoc = z.output<typeof NodeKind>
export type RelationshipKindDoc = z.output<typeof RelationshipKind>
export type EnvironmentDoc = z.output<typeof Environment>
export type RelationshipFindingDoc = z.output<typeof RelationshipFinding>
export type RemediationDoc = z.output<typeof Remediation>

/** Messages for the generic issues, so that every detail says what is wrong in the client's terms. */
export function shapeMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined) return 'is required'
    const got = issue.input === null ? 'null' : Array.isArray(issue.input) ? 'an array' : typeof issue.input
    const want = issue.expected === 'object' ? 'an object' : issue.expected === 'array' ? 'an array' : `a ${issue.expected}`
    return `must be ${want}, not ${got}`
  }
  return undefined
}
