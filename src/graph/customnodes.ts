/**
 * BloodHound's custom node kinds (`/api/v2/custom-nodes`): the request bodies and their rules (pure). Messages
 * are BloodHound's (`BadRequest: …`, CreateCustomNodeKind / UpdateCustomNodeKind); EdgeHound adds bounds on
 * names and counts, and that a kind name is a kind name (letters, digits, `_`) and an icon name a short
 * identifier, as graph extensions require (docs/extensions.md): the values end up in the console's drawing
 * code and in every reader's answer.
 */
import { z } from 'zod'
import { ApiError } from '../http/errors'
import { KIND_PATTERN } from './kinds'

export const ICON_TYPE = 'font-awesome'
/** BloodHound's colour rule for custom nodes */
export const COLOR = /^#([a-fA-F0-9]{6}|[a-fA-F0-9]{3})$/
const ICON_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
export const MAX_KINDS_PER_REQUEST = 500

/** Loose on purpose: BloodHound decodes absent fields as "", and its own rules (below) then answer. */
const Icon = z
  .object({ type: z.string().max(64).optional(), name: z.string().max(256).optional(), color: z.string().max(64).optional() })
  .partial()
const Config = z.object({ icon: Icon.optional() })

export const CreateBody = z.object({
  custom_types: z.record(z.string().max(256), Config).refine((r) => Object.keys(r).length <= MAX_KINDS_PER_REQUEST, `at most ${MAX_KINDS_PER_REQUEST} kinds per request`),
})
export const UpdateBody = z.object({ config: Config })

export interface IconConfig {
  type: string
  name: string
  color: string
}

const bad = (message: string, context: string) => new ApiError(400, `BadRequest: ${message}`, context)

/** BloodHound's validateConfig, plus the icon name rule; the colour defaults to #FFFFFF as BloodHound's. */
export function checkConfig(c: z.infer<typeof Config>, context: string): IconConfig {
  const icon = c.icon ?? {}
  if (icon.type !== ICON_TYPE) throw bad('invalid icon type. only Font Awesome icons are supported', `${context}.icon.type`)
  const color = icon.color ?? ''
  if (color !== '' && !COLOR.test(color))
    throw bad("icon color must be a valid hexadecimal color string starting with '#' followed by 3 or 6 hex digits", `${context}.icon.color`)
  const name = icon.name ?? ''
  if (!ICON_NAME.test(name)) throw bad('icon name must be a Font Awesome icon name such as "user" (letters, digits, "-" and "_", at most 64)', `${context}.icon.name`)
  return { type: ICON_TYPE, name, color: color || '#FFFFFF' }
}

/** The kinds of a POST, each checked (BloodHound's order of rules: the key, then the config). */
export function checkCreate(body: z.infer<typeof CreateBody>): { kind: string; icon: IconConfig }[] {
  const out: { kind: string; icon: IconConfig }[] = []
  for (const [kind, config] of Object.entries(body.custom_types)) {
    if (kind === '') throw bad('custom_types contains an entry with an empty string as a key. please remove or replace the empty key', 'custom_types')
    if (!KIND_PATTERN.test(kind) || kind.length > 128) throw bad(`kind name "${kind.slice(0, 64)}" may contain only letters, digits and underscores (at most 128)`, 'custom_types')
    out.push({ kind, icon: checkConfig(config, `custom_types.${kind}`) })
  }
  return out
}
