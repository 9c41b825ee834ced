/**
 * SAML / SSO provider routes (HTTP only; parsing in metadata.ts, SQL in saml.store.ts). See docs/saml.md.
 *
 *   POST   /api/v2/saml/providers              create (deprecated; Deprecation + Link headers)
 *   POST   /api/v2/sso-providers/saml          create (its replacement; same behaviour)
 *   GET    /api/v2/saml                        list SAML providers
 *   GET    /api/v2/saml/providers/:id          one SAML provider
 *   DELETE /api/v2/saml/providers/:id          delete it (with its SSO provider)
 *   GET    /api/v2/sso-providers               list SSO providers (public: sign-in fields; full records for managers)
 *   PATCH  /api/v2/sso-providers/:id           rename, replace metadata, change config (multipart)
 *   DELETE /api/v2/sso-providers/:id           delete
 *   GET    /api/v2/sso-providers/:id/signing-certificate  always 404 (no SP key pair; as BloodHound for a provider without one)
 *   GET    /api/v2/sso/:slug/metadata          this service's SP metadata for the provider (public)
 *   + the SSO flow routes of sso.routes.ts (issuer URL, login, callback, GET /api/v2/saml/sso)
 */
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { NullTime } from '../http/null-types'
import { auditOf } from '../audit/audit'
import { invalidateSubject } from '../ratelimit/limiter.client'
import { ApiError, rfc3339 } from '../http/errors'
import { autoProvisionPatch, CreateProviderForm, signInPatch, UpdateProviderForm, type CreateProviderInput } from './form'
import { MAX_METADATA_BYTES, MetadataError, parseIdpMetadata } from './metadata'
import { checkName } from './names'
import { applyAutoProvision, PROVISIONING_OFF } from './provisioning'
import {
  createProvider,
  deleteProvider,
  getProviderById,
  getProviderBySlug,
  getProviderBySsoId,
  listProviders,
  SIGN_IN_DEFAULTS,
  takenKey,
  uniqueViolation,
  updateProvider,
  type MetadataColumns,
  type SamlProviderRecord,
} from './saml.store'
import { spMetadataXml, spUrls } from './sp'
import { ssoFlowRoutes } from './sso.routes'
import { OidcProviderSchema, OidcSsoProviderSchema, oidcLoginUrl, oidcSsoProviderJson } from '../oidc/oidc.json'
import { SsoProviderSignInSchema, signInView } from './sign-in-view'
import { listSignInProviders } from './sso.store'
import { hasPermission, type Principal } from '../auth/principal'
import { getOidcProviderBySsoId, listOidcProviders } from '../oidc/oidc.store'
import { UpdateOidcBody, updateOidcProvider } from '../oidc/oidc.routes'
import { UserSchema, userJson } from '../auth/auth.routes'
import type { SignInOptions } from './saml.store'

/** Whole form (name + metadata + config fields + multipart framing); the metadata file alone is capped at 1 MiB. */
const MAX_FORM_BYTES = 2 * 1024 * 1024
const NULL_TIME = { time: '0001-01-01T00:00:00.000Z', valid: false }
/** RFC 9745 `Deprecation` value: the endpoint has been deprecated since this service first offered it (2026-11-25). */
const DEPRECATED_SINCE = `@${Date.UTC(2026, 10, 25) / 1000}`
const SUCCESSOR = '/api/v2/sso-providers/saml'

// ---- response shapes ----------------------------------------------------------------------------

const CertificateSchema = z.object({
  sha256_fingerprint: z.string().describe('SHA-256 of the DER, upper-case colon-separated hex'),
  not_before: z.string(),
  not_after: z.string().describe('expiry date of the certificate (RFC 3339)'),
})

const AutoProvisionSchema = z.object({ enabled: z.boolean(), default_role_id: z.number().int(), role_provision: z.boolean() })
const ConfigSchema = z.object({
  auto_provision: AutoProvisionSchema.describe('just-in-time user creation on first sign-in (as BloodHound)'),
  allow_idp_initiated: z.boolean().describe('extra: IdP-initiated sign-in accepted (default false)'),
  allow_sha1: z.boolean().describe('extra: RSA-SHA1 / SHA-1 accepted from this IdP (default false)'),
})

/** After a provider's deletion committed (its users' sessions ended in that batch): their limiter objects forget them. */
async function endSessions(env: Env, sessionIds: string[]): Promise<void> {
  await Promise.all(sessionIds.map((id) => invalidateSubject(env, 'session', id)))
}

export const SamlProviderSchema = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: NullTime,
    name: z.string(),
    display_name: z.string(),
    idp_issuer_uri: z.string(),
    idp_sso_uri: z.string(),
    principal_attribute_mappings: z.array(z.string()),
    sp_issuer_uri: z.string(),
    sp_sso_uri: z.string(),
    sp_metadata_uri: z.string(),
    sp_acs_uri: z.string(),
    sso_provider_id: z.object({ int32: z.number().int(), valid: z.boolean() }),
    // extra fields (allowed by the issue): what the metadata said and what was accepted from it
    root_uri_version: z.number().int(),
    idp_sso_binding: z.enum(['HTTP-POST', 'HTTP-Redirect']),
    metadata_valid_until: z.string().nullable(),
    signing_certificates: z.array(CertificateSchema),
    config: ConfigSchema.describe('extra: sign-in configuration (also on the SSO provider object)'),
  })
  .meta({ id: 'SamlProvider' })

export const SsoProviderSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    slug: z.string(),
    type: z.literal('SAML'),
    details: SamlProviderSchema,
    config: ConfigSchema,
    login_uri: z.string(),
    callback_uri: z.string(),
  })
  .meta({ id: 'SsoProvider' })

const AffectedUsers = z.object({
  data: z.object({ affected_users: z.array(UserSchema).describe('the users that signed in through this provider, now unlinked from it') }),
})

function baseUrl(c: Context<AppEnv>): string {
  return c.var.config.PUBLIC_BASE_URL ?? new URL(c.req.url).origin
}

function samlProviderJson(r: SamlProviderRecord, base: string): z.infer<typeof SamlProviderSchema> {
  return {
    id: r.id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: NULL_TIME,
    name: r.name,
    display_name: r.display_name,
    idp_issuer_uri: r.issuer_uri,
    idp_sso_uri: r.single_sign_on_uri,
    principal_attribute_mappings: r.principal_attribute_mappings,
    ...spUrls(base, r.slug),
    sso_provider_id: { int32: r.sso_provider_id, valid: true },
    root_uri_version: r.root_uri_version,
    idp_sso_binding: r.sso_binding,
    metadata_valid_until: r.metadata_valid_until,
    signing_certificates: r.certificates.map((x) => ({ sha256_fingerprint: x.sha256_fingerprint, not_before: x.not_before, not_after: x.not_after })),
    config: configJson(r),
  }
}

function configJson(r: SamlProviderRecord): z.infer<typeof ConfigSchema> {
  return { auto_provision: { ...r.config }, ...r.sign_in }
}

function applySignIn(current: SignInOptions, patch: Partial<SignInOptions>): SignInOptions {
  return {
    allow_idp_initiated: patch.allow_idp_initiated ?? current.allow_idp_initiated,
    allow_sha1: patch.allow_sha1 ?? current.allow_sha1,
  }
}

function ssoProviderJson(r: SamlProviderRecord, base: string): z.infer<typeof SsoProviderSchema> {
  const details = samlProviderJson(r, base)
  return {
    id: r.sso_provider_id,
    name: r.name,
    slug: r.slug,
    type: 'SAML',
    details,
    config: configJson(r),
    login_uri: details.sp_sso_uri,
    callback_uri: details.sp_acs_uri,
  }
}

// ---- request helpers ----------------------------------------------------------------------------

const idParam = <K extends string>(key: K) =>
  z.object({
    [key]: z
      .string()
      .regex(/^\d{1,10}$/, `${key} is malformed: expected a positive integer`)
      .transform(Number)
      .refine((n) => n >= 1 && n <= 2147483647, `${key} is malformed: expected a positive 32-bit integer`),
  } as Record<K, z.ZodPipe<z.ZodString, z.ZodTransform<number, string>>>)

/** Reads and parses the uploaded metadata file; 413 over 1 MiB, 400 with the parser's message otherwise. */
async function readMetadata(c: Context<AppEnv>, file: File): Promise<MetadataColumns> {
  if (file.size > MAX_METADATA_BYTES)
    throw new ApiError(413, `metadata file is ${file.size} bytes; the limit is ${MAX_METADATA_BYTES} bytes (1 MiB)`, 'form.metadata')
  try {
    const m = await parseIdpMetadata(new Uint8Array(await file.arrayBuffer()), c.var.now())
    return {
      issuer_uri: m.entityId,
      single_sign_on_uri: m.ssoUrl,
      sso_binding: m.ssoBinding,
      metadata_valid_until: m.validUntil,
      metadata_xml: m.xml,
      certificates: m.certificates,
    }
  } catch (e) {
    if (e instanceof MetadataError) throw new ApiError(e.status, e.message, 'form.metadata')
    throw e
  }
}

function nameOrThrow(raw: string) {
  const n = checkName(raw)
  if (!n.ok) throw new ApiError(400, n.message, 'form.name')
  return n
}

/**
 * Runs a store write; a UNIQUE violation on name or slug becomes BloodHound's 409. The constraint decides
 * (no read-then-write race); the lookup afterwards only picks the wording.
 */
async function uniquely<T>(c: Context<AppEnv>, name: string, slug: string, exceptSsoId: number, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (e) {
    const violated = uniqueViolation(e)
    if (!violated) throw e
    const key = (await takenKey(c.env.DB, name, slug, exceptSsoId)) ?? violated
    if (key === 'name') throw new ApiError(409, `sso provider name must be unique: a provider named "${name}" already exists`, 'form.name')
    throw new ApiError(
      409,
      `sso provider name must be unique: another provider already has the slug "${slug}" (names that differ only in case, spaces or punctuation share a slug)`,
      'form.name',
    )
  }
}

async function createHandler(c: Context<AppEnv>, body: CreateProviderInput): Promise<Response> {
  const { name, slug } = nameOrThrow(body.name)
  const cfg = applyAutoProvision(PROVISIONING_OFF, autoProvisionPatch(body))
  if (!cfg.ok) throw new ApiError(400, cfg.message, cfg.context)
  const metadata = await readMetadata(c, body.metadata)
  const now = rfc3339(c.var.now())
  const signIn = applySignIn(SIGN_IN_DEFAULTS, signInPatch(body))
  const rec = await uniquely(c, name, slug, 0, () => createProvider(c.env.DB, { name, slug, config: cfg.config, signIn, now, ...metadata }, auditOf(c).write({ slug })))
  return c.json({ data: samlProviderJson(rec, baseUrl(c)) })
}

const createDef = {
  method: 'post' as const,
  tags: ['Auth', 'Community', 'Enterprise'],
  auth: 'auth/ManageProviders' as const,
  replay: { once: 'SSO provider change: who may sign in, and with which role' },
  body: { kind: 'form' as const, schema: CreateProviderForm, maxBytes: MAX_FORM_BYTES },
  // the name only: the metadata document (certificates) stays out of the audit log
  audit: { action: 'CreateSAMLIdentityProvider' as const, fields: ({ body }: { body: unknown }) => ({ name: String((body as { name?: unknown }).name ?? '').slice(0, 100) }) },
  responses: {
    200: { description: 'the new SAML provider', schema: z.object({ data: SamlProviderSchema }) },
    409: { description: 'a provider with this name or slug exists: `sso provider name must be unique`' },
  },
}

const createDescription =
  'multipart/form-data with exactly one `name` (1–100 characters after trimming; its slug, lower case with spaces ' +
  'as `-` and only `[a-z0-9-]`, must be unique) and exactly one `metadata` file (IdP metadata XML, at most 1 MiB; ' +
  'the whole form at most 2 MiB). Optional `config.auto_provision.enabled`, `.default_role_id`, `.role_provision` ' +
  '(default: provisioning off). DTDs are refused; the SSO service must have the HTTP-POST or HTTP-Redirect binding; ' +
  'signing certificates must be DER X.509.'

// ---- routes -------------------------------------------------------------------------------------

export const samlRoutes: RouteEntry[] = [
  defineRoute(
    {
      ...createDef,
      path: '/api/v2/saml/providers',
      operationId: 'CreateSamlProvider',
      summary: 'Create a SAML provider from IdP metadata (deprecated: use POST /api/v2/sso-providers/saml)',
      description: `Deprecated; will stop being supported in a future release; the replacement is \`POST ${SUCCESSOR}\`, which behaves the same. ${createDescription}`,
      deprecated: true,
      responseHeaders: { Deprecation: DEPRECATED_SINCE, Link: `<${SUCCESSOR}>; rel="successor-version"` },
      responses: {
        ...createDef.responses,
        200: {
          ...createDef.responses[200],
          headers: { Deprecation: 'RFC 9745: the date since which this endpoint is deprecated', Link: `<${SUCCESSOR}>; rel="successor-version"` },
        },
      },
    },
    (c, { body }) => createHandler(c, body),
  ),
  defineRoute(
    {
      ...createDef,
      path: SUCCESSOR,
      operationId: 'CreateSamlProviderSso',
      summary: 'Create a SAML provider from IdP metadata',
      description: createDescription,
    },
    (c, { body }) => createHandler(c, body),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/saml',
      operationId: 'ListSamlProviders',
      summary: 'List SAML providers',
      tags: ['Auth', 'Community', 'Enterprise'],
      auth: 'auth/ManageProviders',
      responses: { 200: { description: 'every SAML provider', schema: z.object({ data: z.object({ saml_providers: z.array(SamlProviderSchema) }) }) } },
    },
    async (c) => {
      const base = baseUrl(c)
      const rows = await listProviders(c.env.DB)
      return c.json({ data: { saml_providers: rows.map((r) => samlProviderJson(r, base)) } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/saml/providers/:saml_provider_id',
      operationId: 'GetSamlProvider',
      summary: 'Get one SAML provider',
      tags: ['Auth', 'Community', 'Enterprise'],
      auth: 'auth/ManageProviders',
      params: idParam('saml_provider_id'),
      responses: { 200: { description: 'the SAML provider', schema: z.object({ data: SamlProviderSchema }) } },
    },
    async (c, { params }) => {
      const r = await getProviderById(c.env.DB, params.saml_provider_id)
      if (!r) throw new ApiError(404, 'resource not found', 'saml_provider_id')
      return c.json({ data: samlProviderJson(r, baseUrl(c)) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/saml/providers/:saml_provider_id',
      operationId: 'DeleteSamlProvider',
      audit: { action: 'DeleteSAMLIdentityProvider', fields: ({ params }) => ({ ...(params as object) }) },
      summary: 'Delete a SAML provider (and its SSO provider)',
      tags: ['Auth', 'Community', 'Enterprise'],
      auth: 'auth/ManageProviders',
      replay: { once: 'SSO provider change (ends its users\' sessions): identity and access' },
      params: idParam('saml_provider_id'),
      responses: { 200: { description: 'deleted; its users are unlinked and listed in affected_users', schema: AffectedUsers } },
    },
    async (c, { params }) => {
      const r = await getProviderById(c.env.DB, params.saml_provider_id)
      const affected = r ? await deleteProvider(c.env.DB, r.sso_provider_id, rfc3339(c.var.now()), auditOf(c).write({ sso_provider_id: r.sso_provider_id })) : null
      if (!affected) throw new ApiError(404, 'resource not found', 'saml_provider_id')
      await endSessions(c.env, affected.endedSessions)
      return c.json({ data: { affected_users: affected.users.map((u) => userJson(u, rfc3339(c.var.now()))) } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/sso-providers',
      operationId: 'ListSsoProviders',
      summary: 'List SSO providers (public: the sign-in page reads it; the full records for auth/ManageProviders)',
      description:
        'Readable without signing in, as in BloodHound (its login page lists the providers from here). A caller holding ' +
        '`auth/ManageProviders` gets the full records (`details`, `config`, `callback_uri`); everybody else, anonymous or ' +
        'signed in without that permission, gets only what a sign-in button needs: `{id, name, slug, type, login_uri}` ' +
        '(schema SsoProviderSignIn). Without credentials it spends the IP\'s public budget; a bad Authorization header is a ' +
        '401; a stale session cookie is treated as none. See docs/saml.md, "Who sees what".',
      tags: ['Auth', 'Community', 'Enterprise'],
      auth: 'public',
      recognises: 'auth/ManageProviders',
      responses: {
        200: {
          description: 'every SSO provider, SAML and OIDC, by creation time (an empty array when there is none)',
          schema: z.object({ data: z.union([z.array(z.union([SsoProviderSchema, OidcSsoProviderSchema])), z.array(SsoProviderSignInSchema)]) }),
        },
      },
    },
    async (c) => {
      const base = baseUrl(c)
      // set only when a credential verified (authenticateIfPresent): a visitor has none
      const caller = c.get('principal') as Principal | undefined
      if (!caller || !hasPermission(caller, 'auth/ManageProviders')) {
        const rows = await listSignInProviders(c.env.DB)
        return c.json({ data: rows.map((r) => signInView({ ...r, login_uri: r.type === 'SAML' ? spUrls(base, r.slug).sp_sso_uri : oidcLoginUrl(base, r.slug) })) })
      }
      const [saml, oidc] = await Promise.all([listProviders(c.env.DB), listOidcProviders(c.env.DB)])
      const all = [
        ...saml.map((r) => ({ at: r.created_at, id: r.sso_provider_id, json: ssoProviderJson(r, base) as z.infer<typeof SsoProviderSchema> | z.infer<typeof OidcSsoProviderSchema> })),
        ...oidc.map((r) => ({ at: r.created_at, id: r.sso_provider_id, json: oidcSsoProviderJson(r, base) })),
      ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id - b.id))
      return c.json({ data: all.map((x) => x.json) })
    },
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/api/v2/sso-providers/:sso_provider_id',
      operationId: 'UpdateSsoProvider',
      audit: { action: 'UpdateSSOIdentityProvider', fields: ({ params }) => ({ ...(params as object) }) },
      summary: 'Update an SSO provider: rename, replace the metadata or the OIDC settings, change the auto-provisioning config',
      description:
        'A SAML provider: multipart/form-data; every field optional, each at most once: `name`, `metadata` (validated as on create), ' +
        '`config.auto_provision.*` (merged into the current config). An OIDC provider: JSON `{name?, client_id?, issuer?, ' +
        'client_secret?, config?: {auto_provision?}}` (BloodHound\'s UpdateOIDCProviderRequest; `client_secret` is an extra, null ' +
        'removes it). The other body type for a provider is a 415. All changes are written together or not at all.',
      tags: ['Auth', 'Community', 'Enterprise'],
      auth: 'auth/ManageProviders',
      replay: { once: 'SSO provider change (who may sign in, with which role): a copy could undo an administrator\'s correction' },
      params: idParam('sso_provider_id'),
      body: { kind: 'form', schema: UpdateProviderForm, maxBytes: MAX_FORM_BYTES, json: UpdateOidcBody },
      responses: {
        200: { description: 'the updated SAML or OIDC provider', schema: z.object({ data: z.union([SamlProviderSchema, OidcProviderSchema]) }) },
        409: { description: 'another provider has this name or slug' },
      },
    },
    async (c, { params, body: sent }) => {
      const current = await getProviderBySsoId(c.env.DB, params.sso_provider_id)
      if (!current) {
        const oidc = await getOidcProviderBySsoId(c.env.DB, params.sso_provider_id)
        if (!oidc) throw new ApiError(404, 'resource not found', 'sso_provider_id')
        if (!sent.json) throw new ApiError(415, 'an OIDC provider is updated with a JSON body (Content-Type application/json)', 'content-type')
        return updateOidcProvider(c, oidc, sent.json)
      }
      if (!sent.form) throw new ApiError(415, 'a SAML provider is updated with a multipart/form-data body', 'content-type')
      const body = sent.form
      const named = body.name === undefined ? undefined : nameOrThrow(body.name)
      const patch = autoProvisionPatch(body)
      const signIn = signInPatch(body)
      const touchesConfig = [...Object.values(patch), ...Object.values(signIn)].some((v) => v !== undefined)
      const cfg = applyAutoProvision(current.config, patch)
      if (!cfg.ok) throw new ApiError(400, cfg.message, cfg.context)
      const metadata = body.metadata ? await readMetadata(c, body.metadata) : undefined
      if (!named && !touchesConfig && !metadata) {
        auditOf(c).markUnchanged()
        return c.json({ data: samlProviderJson(current, baseUrl(c)) })
      }
      const name = named?.name ?? current.name
      const slug = named?.slug ?? current.slug
      const updated = await uniquely(c, name, slug, current.sso_provider_id, () =>
        updateProvider(c.env.DB, {
          ssoProviderId: current.sso_provider_id,
          name: named?.name,
          slug: named?.slug,
          config: touchesConfig ? { auto_provision: cfg.config, sign_in: applySignIn(current.sign_in, signIn) } : undefined,
          metadata,
          now: rfc3339(c.var.now()),
        }, auditOf(c).write({ name: named?.name, slug: named?.slug, config_changed: touchesConfig, metadata_replaced: !!metadata })),
      )
      if (!updated) throw new ApiError(404, 'resource not found', 'sso_provider_id')
      return c.json({ data: samlProviderJson(updated, baseUrl(c)) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/sso-providers/:sso_provider_id/signing-certificate',
      operationId: 'GetSsoProviderSigningCertificate',
      summary: "The SP's signing certificate for a provider (BloodHound's download): this service has none, so always 404",
      description:
        'BloodHound answers with the PEM of its SAML service-provider certificate (`Content-Disposition: attachment; ' +
        'filename="<slug>-signing-certificate.pem"`), and 404 `resource not found` for a provider without one (an OIDC provider). ' +
        'EdgeHound signs no AuthnRequest and decrypts no assertion, so it has no SP key pair and no certificate for any provider: ' +
        'the answer is that 404 for every provider, existing or not. See docs/saml.md, "Not supported".',
      tags: ['Auth', 'Community', 'Enterprise'],
      auth: 'auth/ManageProviders',
      params: idParam('sso_provider_id'),
      responses: { 404: { description: 'always: no SP signing certificate (or no such provider)' } },
    },
    async (c, { params }) => {
      const exists = await getProviderBySsoId(c.env.DB, params.sso_provider_id)
      throw new ApiError(
        404,
        exists ? 'resource not found: this service has no SP signing certificate (AuthnRequests are not signed)' : 'resource not found',
        'sso_provider_id',
      )
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/sso-providers/:sso_provider_id',
      operationId: 'DeleteSsoProvider',
      audit: { action: 'DeleteSSOIdentityProvider', fields: ({ params }) => ({ ...(params as object) }) },
      summary: 'Delete an SSO provider',
      tags: ['Auth', 'Community', 'Enterprise'],
      auth: 'auth/ManageProviders',
      replay: { once: 'SSO provider change (ends its users\' sessions): identity and access' },
      params: idParam('sso_provider_id'),
      responses: { 200: { description: 'deleted; its users are unlinked and listed in affected_users', schema: AffectedUsers } },
    },
    async (c, { params }) => {
      const affected = await deleteProvider(c.env.DB, params.sso_provider_id, rfc3339(c.var.now()), auditOf(c).write())
      if (!affected) throw new ApiError(404, 'resource not found', 'sso_provider_id')
      await endSessions(c.env, affected.endedSessions)
      return c.json({ data: { affected_users: affected.users.map((u) => userJson(u, rfc3339(c.var.now()))) } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/sso/:slug/metadata',
      operationId: 'GetSpMetadata',
      summary: "This service's SAML SP metadata for a provider (give it to the IdP)",
      tags: ['Auth', 'Community', 'Enterprise'],
      auth: 'public',
      params: z.object({ slug: z.string() }),
      responses: {
        200: {
          description: 'SP metadata: entity id, ACS endpoint (HTTP-POST binding), NameID formats',
          contentType: 'application/samlmetadata+xml',
          schema: z.string(),
        },
      },
    },
    async (c, { params }) => {
      const r = /^[a-z0-9-]{1,200}$/.test(params.slug) ? await getProviderBySlug(c.env.DB, params.slug) : null
      if (!r) throw new ApiError(404, 'resource not found: no SSO provider has this slug', 'slug')
      const xml = spMetadataXml(spUrls(baseUrl(c), r.slug), c.var.now())
      return c.body(xml, 200, { 'Content-Type': 'application/samlmetadata+xml' })
    },
  ),
  ...ssoFlowRoutes,
]
