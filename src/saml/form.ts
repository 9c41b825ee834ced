/**
 * The multipart form of "create a SAML provider" and "update an SSO provider", as zod schemas whose
 * messages say what is wrong in BloodHound's words (`form is missing "name" parameter`,
 * `expected only one "metadata" file`, …). The route helper hands these schemas an object in which a
 * repeated field is an array, so "exactly one" is simply "not an array".
 *
 * The same schemas document the form in the OpenAPI document.
 */
import { z } from 'zod'
import { parseGoBool } from './provisioning'

const F_ENABLED = 'config.auto_provision.enabled'
const F_ROLE = 'config.auto_provision.default_role_id'
const F_ROLE_PROVISION = 'config.auto_provision.role_provision'
const F_IDP_INITIATED = 'config.allow_idp_initiated'
const F_SHA1 = 'config.allow_sha1'
export const FORM_FIELDS = ['name', 'metadata', F_ENABLED, F_ROLE, F_ROLE_PROVISION, F_IDP_INITIATED, F_SHA1] as const

type Issue = { input?: unknown }

/** One text field; `missing` says whether an absent field is an error (create) or not (update). */
function textField(field: string) {
  return z.string({
    error: (iss: Issue) =>
      iss.input === undefined
        ? `form is missing "${field}" parameter`
        : Array.isArray(iss.input)
          ? `expected only one "${field}" parameter`
          : `"${field}" must be a text field, not a file`,
  })
}

const metadataFile = z
  .instanceof(File, {
    error: (iss: Issue) =>
      iss.input === undefined
        ? 'form is missing "metadata" parameter'
        : Array.isArray(iss.input)
          ? 'expected only one "metadata" file'
          : '"metadata" must be a file (the IdP metadata XML), not a text field',
  })
  .meta({ type: 'string', format: 'binary', description: 'the IdP metadata XML file (at most 1 MiB)' })

const boolField = (field: string) =>
  textField(field).transform((v, ctx) => {
    const b = parseGoBool(v.trim())
    if (b === null) {
      ctx.addIssue({ code: 'custom', message: `"${field}" parameter could not be converted to bool` })
      return z.NEVER
    }
    return b
  })

const intField = (field: string) =>
  textField(field).transform((v, ctx) => {
    const t = v.trim()
    if (!/^-?\d{1,10}$/.test(t)) {
      ctx.addIssue({ code: 'custom', message: `"${field}" parameter could not be converted to int` })
      return z.NEVER
    }
    return Number(t)
  })

const unexpected = {
  error: (iss: { code?: string; keys?: string[] }) =>
    iss.code === 'unrecognized_keys'
      ? `unexpected form field${iss.keys!.length > 1 ? 's' : ''} ${iss.keys!.map((k) => `"${k}"`).join(', ')}; the form takes ${FORM_FIELDS.map((f) => `"${f}"`).join(', ')}`
      : undefined,
}

const configFields = {
  [F_ENABLED]: boolField(F_ENABLED).optional().meta({ description: 'auto-provision users on first SSO login (Go bool: true/false/1/0/…); default false' }),
  [F_ROLE]: intField(F_ROLE).optional().meta({ description: 'role id for provisioned users: 1 Administrator, 2 User, 3 Read-Only, 4 Upload-Only; required when enabled' }),
  [F_ROLE_PROVISION]: boolField(F_ROLE_PROVISION).optional().meta({ description: 'take roles from the IdP role claim (bh-<role>); default false' }),
  [F_IDP_INITIATED]: boolField(F_IDP_INITIATED)
    .optional()
    .meta({ description: 'accept IdP-initiated sign-in (responses that answer no AuthnRequest of this service); default false' }),
  [F_SHA1]: boolField(F_SHA1).optional().meta({ description: 'accept RSA-SHA1 signatures and SHA-1 digests from this IdP; default false' }),
}

export const CreateProviderForm = z.strictObject(
  {
    name: textField('name').meta({ description: 'provider name, 1–100 characters after trimming; its slug must be unique' }),
    metadata: metadataFile,
    ...configFields,
  },
  unexpected,
)

export const UpdateProviderForm = z.strictObject(
  {
    name: textField('name').optional().meta({ description: 'new name (the slug and SP URLs follow)' }),
    metadata: metadataFile.optional(),
    ...configFields,
  },
  unexpected,
)

export type CreateProviderInput = z.infer<typeof CreateProviderForm>
export type UpdateProviderInput = z.infer<typeof UpdateProviderForm>

export function autoProvisionPatch(f: CreateProviderInput | UpdateProviderInput) {
  return { enabled: f[F_ENABLED], default_role_id: f[F_ROLE], role_provision: f[F_ROLE_PROVISION] }
}

export function signInPatch(f: CreateProviderInput | UpdateProviderInput) {
  return { allow_idp_initiated: f[F_IDP_INITIATED], allow_sha1: f[F_SHA1] }
}
